"""The outbox's chat locks across workers (telegram_bot.platform.chatlocks, PostgreSQL): one
worker at a time per chat, many chats on one connection, released with it."""

from __future__ import annotations

import asyncio

from telegram_bot.platform.chatlocks import ChatLocks
from telegram_bot.platform.storage import create_engine
from telegram_bot.platform.storage.db import session_factory
from tests.dbutil import fresh_database_url


async def test_one_worker_per_chat_and_many_chats_on_one_connection(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        engines = [create_engine(url, pool_size=2, max_overflow=0) for _ in range(2)]
        a, b = (ChatLocks(session_factory(e)) for e in engines)
        try:
            chats = [-1000 - i for i in range(300)]
            # Worker A drains 300 chats at once on one connection of its pool.
            assert all(await asyncio.gather(*(a.try_lock(c) for c in chats)))
            assert engines[0].pool.checkedout() == 1
            assert not any(await asyncio.gather(*(b.try_lock(c) for c in chats[:10])))
            await a.unlock(chats[0])
            assert await b.try_lock(chats[0])
            assert not await a.try_lock(chats[0])
            # A worker that loses its connection (or dies) loses its locks.
            await a.close()
            assert await b.try_lock(chats[1])
            # ... and the next lock opens a new connection.
            assert await a.try_lock(-1)
            assert not await b.try_lock(-1)
        finally:
            await a.close()
            await b.close()
            for e in engines:
                await e.dispose()
