"""A drain's next rows of a chat: taken from memory, or read from the table.

It exists to keep the one race of the rows kept in memory in one place: rows read
from the table may also be committing into memory (see :mod:`.kept`), and a row must
be carried out once.
"""

from __future__ import annotations

from collections import Counter

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.outbox.cleanup import Cleaner
from telegram_bot.platform.outbox.kept import KeptRows
from telegram_bot.platform.outbox.memory import Memory
from telegram_bot.platform.outbox.rows import _BATCH, _OUTBOX, _Batch, _Row, _target
from telegram_bot.platform.storage import repo

__all__ = ["Reader"]


class Reader:
    """Reads batches; owns nothing (what it learns goes to the memory and the kept
    rows)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        shared: bool,
        kept: KeptRows,
        memory: Memory,
        cleaner: Cleaner,
        stats: Counter[str],
    ) -> None:
        self._sessions = sessions
        self._shared = shared
        self._kept = kept
        self._memory = memory
        self._cleaner = cleaner
        self._stats = stats

    async def next_batch(self, chat_id: int) -> _Batch:
        """The chat's next rows, with what their slots name and (shared) what their
        messages show: kept in memory, or read in one session."""
        kept, memory = self._kept, self._memory
        if not self._shared and not kept.is_unread(chat_id):
            rows = kept.first(chat_id, _BATCH)
            batch = _Batch(rows, read=False)
            missing = {
                repo.slot_game_id(r.slot)
                for r in rows
                if r.op != "send" and r.slot is not None and not memory.knows_slot(r.slot)
            }
            if missing:
                async with self._sessions() as s:
                    memory.learn_slots(await repo.slot_message_ids(s, missing))
            batch.slots = {r.slot: memory.slot(r.slot) for r in rows if r.slot is not None}
            return batch
        # Rows committed from now on are kept in memory as well; the read below may
        # see some of them too (a row carried out twice is avoided: see the end).
        kept.mark_read(chat_id)
        self._stats["read"] += 1
        async with self._sessions() as s:
            query = self._cleaner.excluding(select(_OUTBOX).where(_OUTBOX.c.chat_id == chat_id))
            rows = (await s.execute(query.order_by(_OUTBOX.c.id).limit(_BATCH))).all()
            batch = _Batch([_Row(**r._mapping) for r in rows], read=True)
            games = {
                repo.slot_game_id(r.slot) for r in rows if r.op != "send" and r.slot is not None
            }
            if games:
                batch.slots = await repo.slot_message_ids(s, games)
                if not self._shared:
                    memory.learn_slots(batch.slots)
            if self._shared and rows:
                targets = {_target(r.chat_id, r.slot, r.message_id) for r in rows}
                batch.shown = await memory.read_shown(s, targets)
        if not self._shared:
            kept.read(chat_id, batch.rows, more=len(rows) == _BATCH)
        return batch
