"""What a move decides: the rows of its transaction, kept in the session until they
are written just before its commit, and handed to the other parts after it.

It exists to keep a move's side of the outbox cheap (a move decides several messages
per play): a message decided costs a dict in the session, an edit equal to what the
message is about to show costs nothing, and the whole transaction costs one INSERT
(and one DELETE for the older edits it replaces, when one may still wait).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import delete, insert, or_
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import InlineKeyboardMarkup

from telegram_bot.platform.keyboards import PlainKeyboard
from telegram_bot.platform.outbox.cleanup import Cleaner
from telegram_bot.platform.outbox.endings import Endings
from telegram_bot.platform.outbox.kept import KeptRows
from telegram_bot.platform.outbox.markup import _markup_json
from telegram_bot.platform.outbox.memory import Memory
from telegram_bot.platform.outbox.rows import (
    _EMPTY_ROW,
    _OUTBOX,
    _insert_ids,
    _pg_insert_ids,
    _Row,
    _signature,
    _target,
)
from telegram_bot.platform.storage import pgdirect
from telegram_bot.platform.storage.models import utcnow

__all__ = ["Decisions"]


class Decisions:
    """The moves' side of :class:`~telegram_bot.platform.outbox.Outbox` (its methods
    of the same names document them). What a transaction decides is in its session's
    ``info``: its chats, rows, the newest state of each target, the edits it replaces
    and what to call after the commit."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        shared: bool,
        memory: Memory,
        kept: KeptRows,
        endings: Endings,
        cleaner: Cleaner,
        kick: Callable[[int], None],
        stats: Counter[str],
    ) -> None:
        self._sessions = sessions
        self._shared = shared
        self._memory = memory
        self._kept = kept
        self._endings = endings
        self._cleaner = cleaner
        self._kick = kick
        self._stats = stats

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        committing: set[int] = set()
        try:
            async with self._sessions.begin() as s:
                s.info["outbox_chats"] = set()
                s.info["outbox_wanted"] = {}
                s.info["outbox_rows"] = []
                s.info["outbox_replaced"] = {}
                s.info["outbox_after"] = []
                yield s
                await self._write(s)
                if not self._shared:
                    # From here its rows may be read by a drain before this process
                    # learns of the commit (see KeptRows.keep).
                    committing = set(s.info["outbox_chats"])
                    self._kept.committing(committing)
            self._committed(s)
        finally:
            self._kept.committed(committing)

    async def _write(self, s: AsyncSession) -> None:
        """The rows decided in this transaction, written just before its commit: one
        DELETE for the older edits they replace, one INSERT for all of them (not a
        statement, an ORM flush and a round trip per row). (The deletion of rows
        carried out is not written here: under load a cleanup deletes those of
        about 20 plays at once, where this would add a statement to every play.)"""
        rows: list[dict[str, Any]] = s.info["outbox_rows"]
        replaced: dict[str, tuple[int, str | None, int | None]] = s.info["outbox_replaced"]
        if replaced:
            await s.execute(
                delete(_OUTBOX).where(
                    _OUTBOX.c.op == "edit",
                    or_(
                        *(
                            (_OUTBOX.c.chat_id == chat_id)
                            & (
                                _OUTBOX.c.slot == slot
                                if slot is not None
                                else _OUTBOX.c.message_id == message_id
                            )
                            for chat_id, slot, message_id in replaced.values()
                        )
                    ),
                )
            )
        if not rows:
            return
        now = utcnow()
        pg = await pgdirect.connection(s)
        if pg is not None:
            ids = await _pg_insert_ids(pg, rows, now)
            if not self._shared:
                s.info["outbox_ids"] = ids
            return
        values = [{**_EMPTY_ROW, **row, "created_at": now} for row in rows]
        if self._shared:
            await s.execute(insert(_OUTBOX), values)
        else:
            s.info["outbox_ids"] = await _insert_ids(s, values)

    def _committed(self, s: AsyncSession) -> None:
        wanted = s.info.pop("outbox_wanted", {})
        if not self._shared:
            memory, kept, endings = self._memory, self._kept, self._endings
            for target, sig in wanted.items():
                memory.want(target, sig)
            for chat_id, slot, message_id in s.info["outbox_replaced"].values():
                endings.rows_gone(kept.replace(chat_id, slot, message_id))  # deleted
            endings.drop_ended()
            ids = s.info.get("outbox_ids", [])
            for row_id, row in zip(ids, s.info["outbox_rows"], strict=True):
                if row["op"] == "answer":  # the handler answers; see answered()
                    query_id = json.loads(row["markup"])["id"]
                    kept.keep_answer(query_id, _Row(id=row_id, **row))
                    self._cleaner.keep_out(row_id)
                    continue
                kept.keep(row_id, row)
        for chat_id in s.info.pop("outbox_chats", ()):
            self._kick(chat_id)
        for callback in s.info.pop("outbox_after", ()):
            callback()

    @staticmethod
    def after_commit(s: AsyncSession, callback: Callable[[], None]) -> None:
        after = s.info.get("outbox_after")
        if after is None:
            raise RuntimeError("after_commit needs a session from Outbox.transaction()")
        after.append(callback)

    @staticmethod
    def _note(s: AsyncSession, chat_id: int) -> list[dict[str, Any]]:
        chats = s.info.get("outbox_chats")
        if chats is None:
            raise RuntimeError("outbox rows need a session from Outbox.transaction()")
        chats.add(chat_id)
        return s.info["outbox_rows"]

    def send(
        self,
        s: AsyncSession,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None,
        slot: str | None,
        thread: int | None,
    ) -> None:
        markup_json = _markup_json(markup)
        self._note(s, chat_id).append(
            {
                "chat_id": chat_id,
                "op": "send",
                "slot": slot,
                "text": text,
                "markup": markup_json,
                "thread_id": thread or None,
            }
        )
        if slot is not None:
            target = _target(chat_id, slot, None)
            s.info["outbox_wanted"][target] = _signature(text, markup_json)

    def edit(
        self,
        s: AsyncSession,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None,
        slot: str | None,
        message_id: int | None,
        thread: int | None,
    ) -> None:
        if slot is None and message_id is None:
            return
        markup_json = _markup_json(markup)
        sig = _signature(text, markup_json)
        target = _target(chat_id, slot, message_id)
        wanted = s.info.get("outbox_wanted", {})
        # (Shared: another process may have decided a newer state since; its drain
        # skips what a message already shows instead.)
        known = wanted.get(target, None if self._shared else self._memory.wanted(target))
        if known == sig:
            self._stats["skipped"] += 1
            return
        rows = self._note(s, chat_id)
        # Only the newest state of a message is worth sending: an edit of it decided
        # earlier in this transaction is dropped, and one committed earlier and still
        # waiting is deleted with the commit.
        rows[:] = [
            r
            for r in rows
            if not (
                r["op"] == "edit"
                and (r["chat_id"], r["slot"], r.get("message_id")) == (chat_id, slot, message_id)
            )
        ]
        if self._shared or self._kept.may_wait(chat_id, slot, message_id):
            s.info["outbox_replaced"][target] = (chat_id, slot, message_id)
        rows.append(
            {
                "chat_id": chat_id,
                "op": "edit",
                "slot": slot,
                "message_id": message_id,
                "text": text,
                "markup": markup_json,
                "thread_id": thread or None,
            }
        )
        wanted[target] = sig

    def delete(
        self, s: AsyncSession, chat_id: int, slot: str | None, message_id: int | None
    ) -> None:
        self._note(s, chat_id).append(
            {"chat_id": chat_id, "op": "delete", "slot": slot, "message_id": message_id}
        )
        s.info["outbox_wanted"][_target(chat_id, slot, message_id)] = None

    def answer(
        self, s: AsyncSession, chat_id: int, query_id: str, text: str | None, alert: bool
    ) -> None:
        if self._shared:
            return
        markup = json.dumps({"id": query_id, "alert": alert})
        self._note(s, chat_id).append(
            {"chat_id": chat_id, "op": "answer", "slot": None, "text": text, "markup": markup}
        )

    def answered(self, query_id: str, ok: bool) -> None:
        row = self._kept.take_answer(query_id)
        if row is None:
            return
        if ok:
            self._cleaner.clean_later([row.id])
            return
        self._cleaner.let_in(row.id)
        self._kept.add(row)
        self._kick(row.chat_id)
