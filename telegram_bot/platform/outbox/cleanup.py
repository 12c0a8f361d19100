"""What a drain has done, written: binds, what messages show, and the deletion of
rows carried out, batched.

The deletion of a row carried out is the one write per message that can wait: under
load one cleanup deletes those of about 20 plays at once, where a statement of its
own would cost every play a round trip. Until it is written the rows' ids are kept
out of every read (a drain would carry them out again).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telegram_bot.platform.outbox.endings import Endings
from telegram_bot.platform.outbox.memory import Memory
from telegram_bot.platform.outbox.rows import (
    _CLEANUP_ROWS,
    _CLEANUP_SECONDS,
    _OUTBOX,
    _Batch,
    _delete_ids,
    _pg_flush,
)
from telegram_bot.platform.storage import pgdirect, repo

__all__ = ["LOCK_ORDER", "Cleaner", "bind_order"]

log = logging.getLogger("telegram_bot.platform.outbox")

#: The order in which a transaction that writes several of these tables locks their
#: rows: a move (``Outbox.transaction``) locks its game's row, then deletes the
#: edits it replaces and inserts its rows; a cleanup binds slots (the games' rows,
#: in game order), then deletes the rows carried out, then writes what messages show.
#: (The one-statement flush on asyncpg, ``WITH gone AS (DELETE …) UPDATE games …``,
#: runs its main UPDATE first: PostgreSQL runs a data-modifying WITH that the main
#: query does not read after the main query.)
LOCK_ORDER = ("games", "outbox", "shown_messages")


def bind_order(binds: list[tuple[int, str, int | None]]) -> list[tuple[int, str, int | None]]:
    """The binds in the order their games' rows are locked: by game, then slot (two
    cleanups binding slots of the same two games lock them in one order)."""
    return sorted(binds, key=lambda b: (repo.slot_game_id(b[1]), b[1]))


class Cleaner:
    """The rows carried out whose deletion is not written yet, and the timer and the
    task that write it."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        asyncpg: AsyncEngine | None,
        shared: bool,
        memory: Memory,
        endings: Endings,
    ) -> None:
        self._sessions = sessions
        # On asyncpg a cleanup, or a bind with the deletions before it, is one statement.
        self._asyncpg = asyncpg
        self._shared = shared
        self._memory = memory
        self._endings = endings
        self._done: list[int] = []
        # _done and the rows whose deletion is being written: kept out of every read.
        self._done_ids: set[int] = set()
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def excluding(self, query: Select) -> Select:  # type: ignore[type-arg]
        """``query`` of outbox rows without those carried out."""
        if self._done_ids:
            return query.where(_OUTBOX.c.id.not_in(list(self._done_ids)))
        return query

    def keep_out(self, row_id: int) -> None:
        """Keep a row out of every read (its handler is answering the press)."""
        self._done_ids.add(row_id)

    def let_in(self, row_id: int) -> None:
        self._done_ids.discard(row_id)

    async def flush(self, batch: _Batch, now: bool = False) -> None:
        """Write what the batch has done: binds and (shared) what messages show at
        once, with the deletion of every row done so far; without ``shared`` and
        nothing else to write, the deletions wait for the next cleanup."""
        finished, binds, shown = batch.finished, batch.binds, batch.shown_now
        batch.finished, batch.binds, batch.shown_now = [], [], []
        earlier: list[int] = []
        if not self._shared:
            for target, sig in shown:  # in memory only
                self._memory.show(target, sig)
            shown = []
            self._endings.drop_ended()
            if not (binds or now):
                self.clean_later(finished)
                return
            earlier = self._take_done()
            self._done_ids.update(finished)
        if not (finished or earlier or binds or shown):
            return
        try:
            if not self._shared and len(binds) <= 1 and self._asyncpg is not None:
                # One statement, atomic by itself: the rows' deletion with the bind.
                await pgdirect.execute_alone(self._asyncpg, *_pg_flush(finished + earlier, binds))
            else:
                async with self._sessions.begin() as s:
                    # The lock order of every transaction that writes both: the games'
                    # rows first (a move locks its game, then deletes the edits it
                    # replaces), then the outbox's. Deleting first deadlocked against
                    # a move (see LOCK_ORDER).
                    for _row_id, slot, message_id in bind_order(binds):
                        await repo.bind_slot(s, slot, message_id)
                    if finished or earlier:
                        await _delete_ids(s, finished + earlier)
                    await self._memory.remember_shown(s, shown)
        except BaseException:
            if not self._shared:  # what was only deleted is deleted later; a bind is not
                bound = {row_id for row_id, _, _ in binds}
                self._done_ids.difference_update(bound)
                self.clean_later(earlier + [i for i in finished if i not in bound])
            raise
        self._done_ids.difference_update(finished + earlier)
        for target, sig in shown:
            batch.shown[target] = sig

    def clean_later(self, ids: list[int]) -> None:
        """Delete these rows with the next cleanup: soon, or at once when many."""
        if not ids:
            return
        self._done += ids
        self._done_ids.update(ids)
        if len(self._done) >= _CLEANUP_ROWS:
            self._clean_soon(force=True)
        elif self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(_CLEANUP_SECONDS, self._clean_soon, True)

    def _take_done(self) -> list[int]:
        """The rows waiting for a cleanup, taken to be deleted now (they stay in
        ``_done_ids``, kept out of every read, until the deletion is written)."""
        ids, self._done = self._done, []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return ids

    def drain_ended(self, others_draining: Callable[[], bool]) -> None:
        """A drain ended: start the cleanup once no other drain runs (so a burst costs
        one statement)."""
        self._clean_soon(others_draining=others_draining)

    def _clean_soon(
        self, force: bool = False, others_draining: Callable[[], bool] | None = None
    ) -> None:
        """Start writing the deletions of rows carried out: ``force`` when they are
        many or old."""
        if force:
            self._timer = None
        if not self._done or (self._task is not None and not self._task.done()):
            return
        if not force and others_draining is not None and others_draining():
            return
        self._task = asyncio.create_task(self._cleanup(), name="outbox cleanup")

    def running(self) -> asyncio.Task[None] | None:
        """The cleanup being written, if one is."""
        if self._task is not None and not self._task.done():
            return self._task
        return None

    async def write_deletions(self) -> None:
        """Write the deletion of every row carried out now, not when the cleanup's
        timer fires (a graceful stop; a test reading what is left)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        await self._cleanup()  # (it takes the rows and the timer with them)

    async def _cleanup(self) -> None:
        """Delete the rows carried out. (Killed before this, the next start carries them
        out again: an edit twice shows nothing new, a message twice cannot happen, as a
        send is deleted with its bind at once.)"""
        ids = self._take_done()
        if not ids:
            return
        try:
            if self._asyncpg is not None:
                await pgdirect.delete_ids(self._asyncpg, "outbox", ids)
            else:
                async with self._sessions.begin() as s:
                    await _delete_ids(s, ids)
        except Exception:
            log.exception("outbox cleanup failed; retrying later")
            self.clean_later(ids)
            return
        except BaseException:  # cancelled: left for the next cleanup
            self._done = ids + self._done
            raise
        self._done_ids.difference_update(ids)

    def sizes(self) -> dict[str, int]:
        return {"done": len(self._done), "done_ids": len(self._done_ids)}
