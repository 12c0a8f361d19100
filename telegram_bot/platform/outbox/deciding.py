"""Deciding messages: rows added to a move's transaction, kept in memory after
its commit (see the package's documentation)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import delete, insert, or_
from sqlalchemy.ext.asyncio import AsyncSession
from telegram import InlineKeyboardMarkup

from telegram_bot.platform.keyboards import PlainKeyboard
from telegram_bot.platform.outbox.markup import (
    _markup_json,
)
from telegram_bot.platform.outbox.rows import (
    _EMPTY_ROW,
    _OUTBOX,
    _SHOWN_LIMIT,
    _game_of,
    _insert_ids,
    _pg_insert_ids,
    _Row,
    _signature,
    _target,
)
from telegram_bot.platform.storage import pgdirect
from telegram_bot.platform.storage.models import ShownMessage, utcnow

log = logging.getLogger("telegram_bot.platform.outbox")


class Deciding:
    """Outbox's half that a move talks to (mixed into :class:`Outbox`)."""

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A transaction whose outbox rows are drained once it has committed."""
        committing: set[int] = set()
        try:
            async with self.sessions.begin() as s:
                s.info["outbox_chats"] = set()
                s.info["outbox_wanted"] = {}
                s.info["outbox_rows"] = []
                s.info["outbox_replaced"] = {}
                s.info["outbox_after"] = []
                yield s
                await self._write(s)
                if not self.shared:
                    # From here its rows may be read by a drain before this process
                    # learns of the commit (see _committed).
                    committing = set(s.info["outbox_chats"])
                    for chat_id in committing:
                        self._committing[chat_id] = self._committing.get(chat_id, 0) + 1
            self._committed(s)
        finally:
            for chat_id in committing:
                left = self._committing[chat_id] - 1
                if left:
                    self._committing[chat_id] = left
                else:
                    del self._committing[chat_id]
                    self._read_early.pop(chat_id, None)

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
            if not self.shared:
                s.info["outbox_ids"] = ids
            return
        values = [{**_EMPTY_ROW, **row, "created_at": now} for row in rows]
        if self.shared:
            await s.execute(insert(_OUTBOX), values)
        else:
            s.info["outbox_ids"] = await _insert_ids(s, values)

    def _committed(self, s: AsyncSession) -> None:
        wanted = s.info.pop("outbox_wanted", {})
        for target, sig in () if self.shared else wanted.items():
            if sig is None:
                self._wanted.pop(target, None)
            else:
                self._wanted.remember(target, sig)
        if not self.shared:
            for chat_id, slot, message_id in s.info["outbox_replaced"].values():
                rows = self._rows.get(chat_id, {})
                for row in [r for r in rows.values() if r.replaced_by(slot, message_id)]:
                    del rows[row.id]  # deleted with the commit
                    self._rows_gone((row.id,))
            self._drop_ended()
            ids = s.info.get("outbox_ids", [])
            for row_id, row in zip(ids, s.info["outbox_rows"], strict=True):
                chat_id = row["chat_id"]
                if row["op"] == "answer":  # the handler answers; see answered()
                    query_id = json.loads(row["markup"])["id"]
                    self._answers[query_id] = _Row(id=row_id, **row)
                    self._done_ids.add(row_id)  # kept out of every read meanwhile
                    continue
                if chat_id in self._unread or row_id in self._read_early.get(chat_id, ()):
                    continue  # a drain reads it from the database (or has read it)
                self._rows.setdefault(chat_id, {})[row_id] = _Row(id=row_id, **row)
        for chat_id in s.info.pop("outbox_chats", ()):
            self.kick(chat_id)
        for callback in s.info.pop("outbox_after", ()):
            callback()

    def after_commit(self, s: AsyncSession, callback: Callable[[], None]) -> None:
        """Call ``callback`` once this transaction (from :meth:`transaction`) has
        committed; never if it rolls back."""
        after = s.info.get("outbox_after")
        if after is None:
            raise RuntimeError("after_commit needs a session from Outbox.transaction()")
        after.append(callback)

    def _note(self, s: AsyncSession, chat_id: int) -> list[dict[str, Any]]:
        chats = s.info.get("outbox_chats")
        if chats is None:
            raise RuntimeError("outbox rows need a session from Outbox.transaction()")
        chats.add(chat_id)
        return s.info["outbox_rows"]

    async def send(
        self,
        s: AsyncSession,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None = None,
        *,
        slot: str | None = None,
        thread: int | None = None,
    ) -> None:
        """Send a new message (bound to ``slot`` once sent, if given), into the forum
        topic ``thread`` if given (None or 0: the chat itself)."""
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

    async def edit(
        self,
        s: AsyncSession,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None = None,
        *,
        slot: str | None = None,
        message_id: int | None = None,
        thread: int | None = None,
    ) -> None:
        """Make a message (named by ``slot`` or ``message_id``) show this, soon. (Its
        forum topic ``thread`` is where it is posted again should it be gone.)"""
        if slot is None and message_id is None:
            return
        markup_json = _markup_json(markup)
        sig = _signature(text, markup_json)
        target = _target(chat_id, slot, message_id)
        wanted = s.info.get("outbox_wanted", {})
        # (Shared: another process may have decided a newer state since; its drain
        # skips what a message already shows instead.)
        known = wanted.get(target, None if self.shared else self._wanted.get(target))
        if known == sig:
            self.stats["skipped"] += 1
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
        if self._may_wait(chat_id, slot, message_id):
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

    def _may_wait(self, chat_id: int, slot: str | None, message_id: int | None) -> bool:
        """Might an edit of this message be stored and not carried out yet?"""
        if self.shared or chat_id in self._unread:
            return True
        rows = self._rows.get(chat_id)
        return bool(rows) and any(r.replaced_by(slot, message_id) for r in rows.values())

    async def delete(
        self,
        s: AsyncSession,
        chat_id: int,
        *,
        slot: str | None = None,
        message_id: int | None = None,
    ) -> None:
        """Delete a message (named by ``slot`` or ``message_id``)."""
        self._note(s, chat_id).append(
            {"chat_id": chat_id, "op": "delete", "slot": slot, "message_id": message_id}
        )
        s.info["outbox_wanted"][_target(chat_id, slot, message_id)] = None

    async def answer(
        self, s: AsyncSession, chat_id: int, query_id: str, text: str | None, alert: bool = False
    ) -> None:
        """A button press's answer, stored with the move it answers. The handler
        answers at once and then calls :meth:`answered`; a row left behind (killed in
        between, or the answer failed) is carried out by a drain, after a restart too,
        while Telegram still takes it. (One process only: with several, the ingress
        side answers.)"""
        if self.shared:
            return
        markup = json.dumps({"id": query_id, "alert": alert})
        self._note(s, chat_id).append(
            {"chat_id": chat_id, "op": "answer", "slot": None, "text": text, "markup": markup}
        )

    def answered(self, query_id: str, ok: bool) -> None:
        """The handler answered the press (``ok``) or could not: its stored answer is
        deleted with the next cleanup, or handed to the chat's drain."""
        row = self._answers.pop(query_id, None)
        if row is None:
            return
        if ok:
            self._clean_later([row.id])
            return
        self._done_ids.discard(row.id)
        self._rows.setdefault(row.chat_id, {})[row.id] = row
        self.kick(row.chat_id)

    def note_message(self, chat_id: int, message_id: int) -> None:
        """A message appeared in a chat (sent by the bot, or an update it received)."""
        if message_id > self._newest.get(chat_id, 0):
            self._newest[chat_id] = message_id
            self._newest.move_to_end(chat_id)
            while len(self._newest) > _SHOWN_LIMIT:
                self._newest.popitem(last=False)

    def newest_message_id(self, chat_id: int) -> int | None:
        return self._newest.get(chat_id)

    def newest_message_ids(self) -> dict[int, int]:
        return dict(self._newest)

    async def forget_chat(self, s: AsyncSession, chat_id: int) -> None:
        """Forget what the chat's messages show (they may be stale): the next edit of
        each is sent even if it looks unchanged."""
        prefix = f"{chat_id}/"
        for lru in (self._shown, self._wanted):
            for key in [k for k in lru if k.startswith(prefix)]:
                del lru[key]
        if self.shared:
            await s.execute(delete(ShownMessage).where(ShownMessage.target.startswith(prefix)))

    def forget_game(self, game_id: str) -> None:
        """The game is over: what its messages show and which messages its slots name
        are forgotten once its last rows are out (else they would be kept for every
        game ever played, up to the caches' bounds). The cost, should one of them be
        edited again: an edit not skipped, a slot read from the database."""
        self._ending[game_id] = {
            r.id
            for rows in self._rows.values()
            for r in rows.values()
            if _game_of(r.slot) == game_id
        }
        self._drop_ended()

    def _drop_game(self, game_id: str) -> None:
        for lru in (self._shown, self._wanted):
            for key in [k for k in lru if _game_of(k.partition("/")[2]) == game_id]:
                del lru[key]
        for slot in [k for k in self._slots if _game_of(k) == game_id]:
            del self._slots[slot]

    def _rows_gone(self, ids: Any) -> None:
        """Rows done with or deleted: games over with nothing left to send are dropped
        (at the next flush, after what their last rows show was noted)."""
        if self._ending:
            for waiting in self._ending.values():
                waiting.difference_update(ids)

    def _drop_ended(self) -> None:
        """Forget the games over whose rows are all out and noted (a batch still
        holding what one of them shows would note it again after the forgetting)."""
        if not self._ending:
            return
        noting = {_game_of(t.partition("/")[2]) for b in self._batches for t, _ in b.shown_now}
        for game_id in [g for g, rows in self._ending.items() if not rows and g not in noting]:
            del self._ending[game_id]
            self._drop_game(game_id)
