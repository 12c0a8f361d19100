"""The drains: one task per chat carries its rows out, in order.

A chat's rows go out in the order they were decided only if one task at a time
carries them: a kick while the chat's drain runs makes that drain look again instead
of starting another. With ``shared`` (several processes on one PostgreSQL database)
one process at a time drains a chat, under the chat's advisory lock (chatlocks).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.chatlocks import ChatLocks
from telegram_bot.platform.outbox.carrying import Carrier
from telegram_bot.platform.outbox.cleanup import Cleaner
from telegram_bot.platform.outbox.holding import current_hold
from telegram_bot.platform.outbox.kept import KeptRows
from telegram_bot.platform.outbox.reading import Reader
from telegram_bot.platform.outbox.rows import _ORPHAN_AFTER, _OUTBOX
from telegram_bot.platform.storage.models import utcnow

__all__ = ["Drains"]

log = logging.getLogger("telegram_bot.platform.outbox")


class Drains:
    """Chat -> its drain task; the chats kicked while their drain ran; whether the
    outbox is closing; and (shared) the chats' locks."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        shared: bool,
        kept: KeptRows,
        reader: Reader,
        carrier: Carrier,
        cleaner: Cleaner,
    ) -> None:
        self._sessions = sessions
        self._shared = shared
        self._kept = kept
        self._reader = reader
        self._carrier = carrier
        self._cleaner = cleaner
        self._drains: dict[int, asyncio.Task[None]] = {}
        self._rekicked: set[int] = set()
        self._closing = False
        self._chat_locks = ChatLocks(sessions)

    def kick(self, chat_id: int) -> None:
        """Make sure the chat's waiting rows are being carried out."""
        if self._closing:
            return
        hold = current_hold()
        if hold is not None and hold.note(chat_id):
            return  # a press is being answered first (see holding)
        self.start_drain(chat_id)

    def start_drain(self, chat_id: int) -> None:
        """Kick at once, held or not."""
        if self._closing:
            return
        task = self._drains.get(chat_id)
        if task is not None and not task.done():
            self._rekicked.add(chat_id)
            return
        self._drains[chat_id] = asyncio.create_task(self._drain(chat_id), name=f"outbox {chat_id}")

    def running(self, chat_id: int) -> bool:
        task = self._drains.get(chat_id)
        return task is not None and not task.done()

    async def start(self) -> int:
        """After a (re)start: drain what an earlier run decided and did not send."""
        self._closing = False
        async with self._sessions() as s:
            chats = (await s.scalars(select(_OUTBOX.c.chat_id).distinct())).all()
        for chat_id in chats:
            self._kept.mark_unread(chat_id)
            self.kick(chat_id)
        return len(chats)

    def busy(self, private_only: bool) -> list[asyncio.Task[None]]:
        """The drains running (``private_only``: of people's chats)."""
        return [t for c, t in self._drains.items() if not t.done() and (c > 0 or not private_only)]

    def _others_draining(self) -> bool:
        current = asyncio.current_task()
        return any(not t.done() and t is not current for t in self._drains.values())

    async def stop(self, timeout: float, stop_pacing: Callable[[], None]) -> None:
        """Give the drains ``timeout`` seconds, then stop them (what is left stays
        stored for the next start)."""
        tasks = [t for t in self._drains.values() if not t.done()]
        if tasks:
            stop_pacing()
            _done, left = await asyncio.wait(tasks, timeout=timeout)
            if left:
                log.warning("stopping with messages of %d chat(s) still queued", len(left))
        self._closing = True
        tasks = [t for t in self._drains.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._drains.clear()

    async def close_locks(self) -> None:
        await self._chat_locks.close()

    async def run_poll(self, interval: float = 1.0) -> None:
        """Forever: drain chats whose rows nobody is carrying out (decided by another
        process, or left by one that died or by a drain that failed)."""
        while True:
            try:
                # A process drains what it decides at once: only rows left waiting
                # a while may have nobody on them (with several workers, asking for
                # every chat's lock each second kept the locks' connection busy).
                young = utcnow() - _ORPHAN_AFTER
                query = (
                    select(_OUTBOX.c.chat_id)
                    .where(_OUTBOX.c.created_at < young)
                    .distinct()
                    .limit(500)
                )
                query = self._cleaner.excluding(query)  # carried out, deletion not written
                async with self._sessions() as s:
                    chats = (await s.scalars(query)).all()
                for chat_id in chats:
                    if not self._shared and not self.running(chat_id):
                        self._kept.mark_unread(chat_id)
                    self.kick(chat_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox poll failed")
            await asyncio.sleep(interval)

    async def _drain(self, chat_id: int) -> None:
        try:
            if not self._shared:
                await self._drain_rows(chat_id)
                return
            # One drain per chat across processes: the chat's advisory lock (chatlocks).
            try:
                if not await self._chat_locks.try_lock(chat_id):
                    return
                try:
                    await self._drain_rows(chat_id)
                finally:
                    await self._chat_locks.unlock(chat_id)
            except asyncio.CancelledError:
                raise
            except Exception:  # the database: the rows stay; the next kick or poll retries
                log.exception("outbox drain of chat %s failed", chat_id)
        finally:
            if self._drains.get(chat_id) is asyncio.current_task():
                del self._drains[chat_id]
            self._cleaner.drain_ended(self._others_draining)

    async def _drain_rows(self, chat_id: int) -> None:
        try:
            while True:
                self._rekicked.discard(chat_id)
                batch = await self._reader.next_batch(chat_id)
                if not batch.rows:
                    if chat_id in self._rekicked:
                        continue
                    return
                if not await self._carrier.carry_out(batch) and batch.read:
                    self._kept.mark_unread(chat_id)  # changed in the database: read it again
        except asyncio.CancelledError:
            raise
        except Exception:  # a database error: the rows stay; the next kick retries
            log.exception("outbox drain of chat %s failed", chat_id)
            if not self._shared:
                self._kept.mark_unread(chat_id)
        finally:
            self._kept.tidy(chat_id)

    def sizes(self) -> dict[str, int]:
        return {"drains": len(self._drains), "rekicked": len(self._rekicked)}
