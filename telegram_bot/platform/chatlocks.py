"""Which worker drains a chat's outbox: PostgreSQL advisory locks, all of a process's
on one connection of its own.

A drain can last long (a group's flood limit lets one message through every few
seconds), and a worker drains many chats at once; holding a pooled connection per
drained chat would take the whole pool, with every drain waiting for a second
connection to read its rows. So the locks live on one connection opened for them
(autocommit: no transaction stays open), used by one caller at a time. PostgreSQL
releases them if the process dies; if the connection is lost, so are its locks, and
the next lock opens a new one. The connection is never given back to the pool, where
it would keep its locks for whoever borrows it next.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

__all__ = ["ChatLocks"]

log = logging.getLogger(__name__)


class ChatLocks:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions
        self._conn: AsyncConnection | None = None
        self._turn = asyncio.Lock()

    async def _scalar(self, query: Any) -> Any:
        async with self._turn:
            if self._conn is None:
                conn = await self.sessions.kw["bind"].connect()
                self._conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            try:
                return await self._conn.scalar(query)
            except Exception:
                conn, self._conn = self._conn, None
                try:
                    await conn.invalidate()
                except Exception:
                    log.debug("closing a broken lock connection failed", exc_info=True)
                raise

    async def try_lock(self, chat_id: int) -> bool:
        """Lock the chat unless another process holds it."""
        return bool(await self._scalar(select(func.pg_try_advisory_lock(chat_id))))

    async def unlock(self, chat_id: int) -> None:
        await self._scalar(select(func.pg_advisory_unlock(chat_id)))

    async def close(self) -> None:
        """Release every lock: the connection is closed, not returned to the pool
        (where it would keep them)."""
        async with self._turn:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                await conn.invalidate()
                await conn.close()
