"""A PostgreSQL pool keeps every connection it opened (telegram_bot.platform.storage.db): one
opened and closed after each burst forked a backend each time, and in the bot's
process each asyncpg connection's buffers left holes in the heap, so RSS grew with the
matches played."""

from __future__ import annotations

import asyncio

from sqlalchemy import event, text

from telegram_bot.platform.storage import db
from tests.dbutil import fresh_database_url


async def test_bursts_up_to_the_ceiling_close_no_connection(tmp_path) -> None:
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        engine = db.create_engine(url)
        seen = {"connect": 0, "close": 0}
        for name in seen:
            event.listen(
                engine.sync_engine.pool,
                name,
                lambda *_, n=name: seen.__setitem__(n, seen[n] + 1),
            )
        ceiling = engine.sync_engine.pool.size() + engine.sync_engine.pool._max_overflow
        everyone_in = asyncio.Barrier(ceiling)

        async def hold() -> int:
            async with engine.connect() as conn:
                pid = int(await conn.scalar(text("SELECT pg_backend_pid()")))
                await everyone_in.wait()  # all of them checked out at once
                return pid

        try:
            assert ceiling >= 15, "the bot's busiest moments use 15 at once"
            first = set(await asyncio.gather(*(hold() for _ in range(ceiling))))
            assert len(first) == ceiling == seen["connect"]
            everyone_in = asyncio.Barrier(ceiling)
            again = set(await asyncio.gather(*(hold() for _ in range(ceiling))))
            assert again == first, "a burst opened new connections"
            assert seen == {"connect": ceiling, "close": 0}
        finally:
            await engine.dispose()
