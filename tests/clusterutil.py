"""The processes of :mod:`telegram_bot.runtime.cluster` (the webhook ingress and its
workers) on one PostgreSQL database, against the Bot API emulator, for the tests
that run them:

    async with running_cluster(emu, db_url, tmp_path, workers=2, env=extra) as sessions:
        ...

``sessions`` reads the shared database (a small pool: the processes share the
server's connections)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage.db import create_engine, migrate, normalize_url, session_factory
from telegram_bot.runtime.cluster import free_port
from testkit.emulator import BotApiEmulator
from testkit.restartable import cluster


@asynccontextmanager
async def running_cluster(
    emu: BotApiEmulator,
    db_url: str,
    log_dir: Path,
    workers: int,
    env: dict[str, str] | None = None,
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """The ingress and ``workers`` workers started (each logging to ``log_dir``),
    with ``env`` over the settings every such test needs; stopped on the way out."""
    url = normalize_url(db_url)
    hook = free_port()
    settings = {
        **os.environ,
        "BOT_TOKEN": emu.token,
        "TELEGRAM_API_URL": emu.base_url.removesuffix("/bot"),
        "DATABASE_URL": url,
        "WEBHOOK_URL": f"http://127.0.0.1:{hook}",
        "WEBHOOK_LISTEN": "127.0.0.1",
        "WEBHOOK_PORT": str(hook),
        "WEBHOOK_SECRET": "cluster-secret",
        "HOKM_RATE_LIMIT": "0",
        "HOKM_THINK_PROCESSES": "0",
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    await migrate(url)  # before the processes, which would each try at once
    engine = create_engine(url, pool_size=4, max_overflow=0)
    ingress, procs = cluster(settings, log_dir, workers)
    try:
        await ingress.start()
        await asyncio.gather(*(p.start() for p in procs))
        yield session_factory(engine)
    finally:
        await asyncio.gather(*(p.stop() for p in procs))
        await ingress.stop()
        await engine.dispose()
