"""What a drain has done, written: binds, what messages show, and the deletion of
rows carried out, batched."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import update

from telegram_bot.platform.outbox.rows import (
    _CLEANUP_ROWS,
    _CLEANUP_SECONDS,
    _OUTBOX,
    _Batch,
    _delete_ids,
    _pg_flush,
    _Row,
)
from telegram_bot.platform.storage import pgdirect, repo

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


class Cleanup:
    """Outbox's writes after calls (mixed into :class:`Outbox`)."""

    async def _flush(self, batch: _Batch, now: bool = False) -> None:
        """Write what the batch has done: binds and (shared) what messages show at
        once, with the deletion of every row done so far; without ``shared`` and
        nothing else to write, the deletions wait for the next cleanup."""
        finished, binds, shown = batch.finished, batch.binds, batch.shown_now
        batch.finished, batch.binds, batch.shown_now = [], [], []
        earlier: list[int] = []
        if not self.shared:
            for target, sig in shown:  # in memory only
                if sig is None:
                    self._shown.pop(target, None)
                else:
                    self._shown.remember(target, sig)
            shown = []
            if self._ending:
                self._drop_ended()
            if not (binds or now):
                self._clean_later(finished)
                return
            earlier = self._take_done()
            self._done_ids.update(finished)
        if not (finished or earlier or binds or shown):
            return
        try:
            if not self.shared and len(binds) <= 1 and self._asyncpg is not None:
                # One statement, atomic by itself: the rows' deletion with the bind.
                await pgdirect.execute_alone(self._asyncpg, *_pg_flush(finished + earlier, binds))
            else:
                async with self.sessions.begin() as s:
                    # The lock order of every transaction that writes both: the games'
                    # rows first (a move locks its game, then deletes the edits it
                    # replaces), then the outbox's. Deleting first deadlocked against
                    # a move (see LOCK_ORDER).
                    for _row_id, slot, message_id in bind_order(binds):
                        await repo.bind_slot(s, slot, message_id)
                    if finished or earlier:
                        await _delete_ids(s, finished + earlier)
                    await self._remember_shown(s, shown)
        except BaseException:
            if not self.shared:  # what was only deleted is deleted later; a bind is not
                bound = {row_id for row_id, _, _ in binds}
                self._done_ids.difference_update(bound)
                self._clean_later(earlier + [i for i in finished if i not in bound])
            raise
        self._done_ids.difference_update(finished + earlier)
        for target, sig in shown:
            batch.shown[target] = sig

    def _clean_later(self, ids: list[int]) -> None:
        if not ids:
            return
        self._done += ids
        self._done_ids.update(ids)
        if len(self._done) >= _CLEANUP_ROWS:
            self._clean_soon(force=True)
        elif self._cleanup_timer is None:
            loop = asyncio.get_running_loop()
            self._cleanup_timer = loop.call_later(_CLEANUP_SECONDS, self._clean_soon, True)

    def _take_done(self) -> list[int]:
        """The rows waiting for a cleanup, taken to be deleted now (they stay in
        ``_done_ids``, kept out of every read, until the deletion is written)."""
        ids, self._done = self._done, []
        if self._cleanup_timer is not None:
            self._cleanup_timer.cancel()
            self._cleanup_timer = None
        return ids

    def _clean_soon(self, force: bool = False) -> None:
        """Start writing the deletions of rows carried out: once no drain is running
        (so a burst costs one statement), or when they are many or old."""
        if force:
            self._cleanup_timer = None
        if not self._done or (self._cleaner is not None and not self._cleaner.done()):
            return
        current = asyncio.current_task()
        if not force and any(not t.done() and t is not current for t in self._drains.values()):
            return
        self._cleaner = asyncio.create_task(self._cleanup(), name="outbox cleanup")

    async def write_deletions(self) -> None:
        """Write the deletion of every row carried out now, not when the cleanup's
        timer fires (a graceful stop; a test reading what is left)."""
        if self._cleaner is not None:
            await asyncio.gather(self._cleaner, return_exceptions=True)
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
                async with self.sessions.begin() as s:
                    await _delete_ids(s, ids)
        except Exception:
            log.exception("outbox cleanup failed; retrying later")
            self._clean_later(ids)
            return
        except BaseException:  # cancelled: left for the next cleanup
            self._done = ids + self._done
            raise
        self._done_ids.difference_update(ids)

    async def _reschedule(self, row: _Row, when: Any) -> None:
        async with self.sessions.begin() as s:
            await s.execute(
                update(_OUTBOX)
                .where(_OUTBOX.c.id == row.id)
                .values(not_before=when, attempts=_OUTBOX.c.attempts + 1)
            )
        row.not_before, row.attempts = when, row.attempts + 1
