"""The processes of :mod:`telegram_bot.runtime.cluster` (the webhook ingress and its
workers) on one PostgreSQL database, against the Bot API emulator, for the tests
that run them:

    async with running_cluster(emu, db_url, tmp_path, workers=2, env=extra) as sessions:
        group, game_id = await group_match(emu, sessions, people)

``sessions`` reads the shared database (a small pool: the processes share the
server's connections). The helpers wait on progress (the stored game, the outbox
emptied), never on the clock; their caps only fail a cluster that stops making any."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.db import create_engine, migrate, normalize_url, session_factory
from telegram_bot.platform.storage.models import OutboxMessage
from telegram_bot.runtime.cluster import free_port
from testkit.emulator import BotApiEmulator
from testkit.restartable import cluster, cluster_env
from testkit.simulation import buttons

Sessions = async_sessionmaker[AsyncSession]


@asynccontextmanager
async def running_cluster(
    emu: BotApiEmulator,
    db_url: str,
    log_dir: Path,
    workers: int,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Sessions]:
    """The ingress and ``workers`` workers started (each logging to ``log_dir``),
    with ``env`` over the settings every such test needs; stopped on the way out."""
    url = normalize_url(db_url)
    hook = free_port()
    settings = {
        **cluster_env(emu.base_url, emu.token, url, hook, "cluster-secret"),
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


async def until(check, what: str) -> None:
    """Until ``await check()`` holds."""
    for _ in range(2400):  # a cap for a cluster that stops making progress
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def stored(sessions: Sessions, game_id: str) -> Any:
    async with sessions() as s:
        return await repo.get_game(s, game_id)


async def delivered(sessions: Sessions) -> bool:
    """The outbox is empty: every message decided so far was sent."""
    async with sessions() as s:
        return await s.scalar(select(func.count()).select_from(OutboxMessage)) == 0


async def group_match(emu: BotApiEmulator, sessions: Sessions, people: list) -> tuple[Any, str]:
    """``people`` (four) start a group match through the workers (timer off), dealt
    and its messages sent; returns (the group, the game's id)."""
    for p in people:
        await emu.send_message(p, p.private_chat_id, "/start")
    await emu.wait_until(
        lambda: all(any(m.from_bot for m in emu.chat_log(p.private_chat_id)) for p in people),
        timeout=60,
    )
    group = emu.add_group("Pages", members=people, admins=[people[0]])
    await emu.send_message(people[0], group.id, "/newgame")

    def lobby():
        return next((m for m in emu.chat_log(group.id) if m.from_bot and buttons(m)), None)

    await emu.wait_until(lambda: lobby() is not None, timeout=60)
    data = [b["callback_data"] for b in buttons(lobby()) if b.get("callback_data")]
    game_id = next(d for d in data if d.startswith("j:")).split(":")[1]
    mid = lobby().message_id
    for handle in [await emu.press(people[0], group.id, mid, f"o:{game_id}::timer=0")]:
        await handle.wait_answer(timeout=60)
    for p in people[1:]:
        await (await emu.press(p, group.id, mid, f"j:{game_id}")).wait_answer(timeout=60)
    await (await emu.press(people[0], group.id, mid, f"s:{game_id}")).wait_answer(timeout=60)

    async def dealt() -> bool:
        game = await stored(sessions, game_id)
        return (
            game.status == "playing"
            and len(game.private_messages or {}) == 4
            and await delivered(sessions)
        )

    try:
        await until(dealt, "the match started and dealt")
    except AssertionError:
        game = await stored(sessions, game_id)
        raise AssertionError((game.status, game.private_messages, game.seats)) from None
    return group, game_id
