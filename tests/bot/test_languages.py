"""A language changed through one worker is what every other worker uses next
(telegram_bot.service.languages: PostgreSQL NOTIFYs the change, each worker forgets it)."""

from __future__ import annotations

import asyncio

import asyncpg

from telegram_bot.platform.storage import create_engine, migrate, repo
from telegram_bot.platform.storage.db import session_factory
from telegram_bot.service.languages import Languages, listen
from tests.dbutil import fresh_database_url


async def _until(condition, changed) -> None:
    """Until ``condition()``; fails only if ``changed()`` stops changing for long (a
    lost notification), never because the machine is slow."""
    seen, still = changed(), 0
    while not condition():
        await asyncio.sleep(0.01)
        now = changed()
        still = still + 1 if now == seen else 0
        seen = now
        assert still < 3000, "no notification came"


async def test_a_change_in_one_worker_reaches_the_others(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        engine = create_engine(url)
        sessions = session_factory(engine)
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            async with sessions.begin() as s:
                await repo.get_or_create_user(s, 7, "Sara", None, "fa")
                await repo.get_or_create_user(s, 8, "Reza", None, "fa")
            other = Languages(sessions, remember=False)  # a worker's, as it starts
            assert await other.get(7) == "fa" and len(other) == 0  # not listening yet
            await listen(other, conn)
            assert await other.get(7) == "fa" and await other.get(8) == "fa"
            assert len(other) == 2

            # Worker A: the user picks English; then Telegram reports a new app language.
            async with sessions.begin() as s:
                await repo.set_user_language(s, 7, "en")
            await _until(lambda: len(other) == 1, lambda: len(other))
            assert await other.get(7) == "en"
            async with sessions.begin() as s:
                await repo.get_or_create_user(s, 8, "Reza", None, "en-US")
            await _until(lambda: len(other) == 1, lambda: len(other))
            assert await other.get(8) == "en"

            # A write that leaves the language alone keeps the entry.
            async with sessions.begin() as s:
                await repo.get_or_create_user(s, 8, "Reza R.", None, "en-US")
                await repo.set_user_language(s, 7, "fa")
            await _until(lambda: 7 not in other._langs, lambda: len(other))
            assert 8 in other._langs

            # Without its listening connection a worker stops remembering.
            await conn.close()
            await _until(lambda: not other.remember, lambda: other.remember)
            assert len(other) == 0
            await other.get(7)
            assert len(other) == 0
        finally:
            if not conn.is_closed():
                await conn.close()
            await engine.dispose()
