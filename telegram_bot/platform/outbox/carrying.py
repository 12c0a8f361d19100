"""Carrying out a batch of a chat's rows, in order, and what each Bot API answer
means for them.

- A 429 delays the chat's messages by Telegram's ``retry_after``, a network error
  retries with backoff: a decided message is delayed, never dropped.
- A chat that refuses the bot (blocked, removed) has its waiting messages dropped; a
  message deleted by someone is posted again as a new one, bound to its slot.
- Expected API errors are logged as one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from telegram_bot.platform.outbox.calls import Calls
from telegram_bot.platform.outbox.cleanup import Cleaner
from telegram_bot.platform.outbox.endings import Endings
from telegram_bot.platform.outbox.kept import KeptRows
from telegram_bot.platform.outbox.memory import Memory
from telegram_bot.platform.outbox.rows import (
    _MAX_UNEXPECTED,
    _OUTBOX,
    _Batch,
    _retry_after_seconds,
    _Row,
    _signature,
    _target,
)
from telegram_bot.platform.storage.models import utcnow

__all__ = ["Carrier"]

log = logging.getLogger("telegram_bot.platform.outbox")


class Carrier:
    """Carries out batches; owns nothing but the two hooks to the chats' owner (what
    it learns goes to the memory, the kept rows, the endings and the cleaner)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        shared: bool,
        calls: Calls,
        memory: Memory,
        kept: KeptRows,
        endings: Endings,
        cleaner: Cleaner,
        stats: Counter[str],
    ) -> None:
        self._sessions = sessions
        self._shared = shared
        self._calls = calls
        self._memory = memory
        self._kept = kept
        self._endings = endings
        self._cleaner = cleaner
        self._stats = stats
        #: See Outbox.on_migrated and Outbox.on_topic_gone.
        self.on_migrated: Callable[[int, int], Awaitable[None]] | None = None
        self.on_topic_gone: Callable[[int, int], Awaitable[None]] | None = None

    async def carry_out(self, batch: _Batch) -> bool:
        """True when every row of the batch is done with; False to read them again."""
        rows = batch.rows
        self._endings.carrying(batch)
        try:
            for i, row in enumerate(rows):
                if row.op == "edit" and any(
                    later.op == "edit"
                    and (later.slot, later.message_id) == (row.slot, row.message_id)
                    for later in rows[i + 1 :]
                ):
                    self._done_with(row, batch)  # a newer state of the same message follows
                    continue
                if row.not_before is not None:
                    wait = (row.not_before - utcnow()).total_seconds()
                    if wait > 0:
                        await self._cleaner.flush(batch)  # nothing done waits behind a delay
                        await asyncio.sleep(wait)
                if not await self._deliver(row, batch):
                    return False  # changed or rescheduled: read the chat's rows again
            return True
        finally:
            try:
                await asyncio.shield(self._cleaner.flush(batch))
            finally:
                self._endings.carried(batch)

    async def _deliver(self, row: _Row, batch: _Batch) -> bool:
        """Carry out one row. True when it is done with; False to read the rows again."""
        chat_id = row.chat_id
        message_id = row.message_id
        if row.op == "answer":
            return await self._answer_press(row, batch)
        if row.op != "send" and row.slot is not None:
            message_id = batch.slots.get(row.slot)
            if message_id is None:  # never sent (the chat refused it): nothing to change
                self._stats["dropped"] += 1
                self._done_with(row, batch)
                return True
        target = _target(chat_id, row.slot, row.message_id)
        sig = _signature(row.text or "", row.markup)
        if row.op == "edit" and self._shown_sig(target, batch) == sig:
            self._stats["skipped"] += 1
            self._done_with(row, batch)
            return True
        try:
            if row.op == "send":
                message = await self._calls.call("sendMessage", row, None)
                self._stats["sent"] += 1
                self._memory.note_message(chat_id, message["message_id"])
                shown = (target, sig) if row.slot is not None else None
                await self._finish(row, batch, bind=message["message_id"], shown=shown)
            elif row.op == "edit":
                await self._calls.call("editMessageText", row, message_id)
                self._stats["edited"] += 1
                self._done_with(row, batch, shown=(target, sig))
            else:
                await self._calls.call("deleteMessage", row, message_id)
                self._stats["deleted"] += 1
                await self._finish(row, batch, bind=None, shown=(target, None))
            return True
        except RetryAfter as exc:
            wait = _retry_after_seconds(exc)
            log.info("%s to %s: flood limit, retrying in %.0f s", row.op, chat_id, wait)
            self._stats["retried"] += 1
            await self._reschedule(row, utcnow() + timedelta(seconds=wait))
            return False
        except ChatMigrated as exc:
            await self._migrated(row, batch, exc.new_chat_id)
            return False
        except Forbidden as exc:
            log.info("chat %s refuses the bot (%s): its waiting messages are dropped", chat_id, exc)
            self._stats["dropped"] += 1
            await self._cleaner.flush(batch)
            async with self._sessions.begin() as s:
                await s.execute(delete(_OUTBOX).where(_OUTBOX.c.chat_id == chat_id))
                await self._memory.forget_chat(s, chat_id)
            self._endings.rows_gone(self._kept.drop_chat(chat_id))
            self._endings.drop_ended()
            return False
        except BadRequest as exc:
            return await self._refused(row, batch, str(exc), target, sig)
        except (TimedOut, NetworkError) as exc:
            backoff = min(2.0 ** min(row.attempts, 5), 30.0)
            log.warning("%s to %s failed (%s); retrying in %.0f s", row.op, chat_id, exc, backoff)
            self._stats["retried"] += 1
            await self._reschedule(row, utcnow() + timedelta(seconds=backoff))
            return False
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s to %s failed", row.op, chat_id)
            if row.attempts + 1 >= _MAX_UNEXPECTED:
                self._stats["dropped"] += 1
                self._done_with(row, batch)
                return True
            await self._reschedule(row, utcnow() + timedelta(seconds=1))
            return False

    async def _answer_press(self, row: _Row, batch: _Batch) -> bool:
        """A press's stored answer the handler did not give (killed first, or its
        call failed). Telegram refuses it once too old: one line, and it is dropped."""
        press = json.loads(row.markup or "{}")
        self._kept.take_answer(press.get("id"))  # (its handler's answered() is then moot)
        data: dict[str, Any] = {
            "callback_query_id": press.get("id"),
            "show_alert": press.get("alert", False),
        }
        if row.text:
            data["text"] = row.text
        try:
            await self._calls.answer_press(data)
            self._stats["answered"] += 1
        except BadRequest as exc:  # e.g. "query is too old" (a NetworkError in PTB)
            log.info("answer to a press in %s refused: %s", row.chat_id, exc)
        except (TimedOut, NetworkError) as exc:  # again, until Telegram says too old
            backoff = min(2.0 ** min(row.attempts, 3), 8.0)
            log.info(
                "answer to a press in %s failed (%s); again in %.0f s", row.chat_id, exc, backoff
            )
            await self._reschedule(row, utcnow() + timedelta(seconds=backoff))
            return False
        except TelegramError as exc:  # e.g. "query is too old"
            log.info("answer to a press in %s refused: %s", row.chat_id, exc)
        self._done_with(row, batch)
        return True

    def _shown_sig(self, target: str, batch: _Batch) -> str | None:
        if not self._shared:
            return self._memory.shown(target)
        return batch.shown.get(target)

    async def _migrated(self, row: _Row, batch: _Batch, new_chat_id: int) -> None:
        """The group became a supergroup under a new id: the owner of the chats' data
        (``on_migrated``) moves everything, these rows included, in one transaction;
        the drain of the new id carries them out."""
        log.info("chat %s is now the supergroup %s: moving it there", row.chat_id, new_chat_id)
        await self._cleaner.flush(batch)
        if self.on_migrated is None:  # nobody to move the chat: as a chat refusing the bot
            await self._drop_chat(row.chat_id)
            return
        await self.on_migrated(row.chat_id, new_chat_id)

    async def _drop_chat(self, chat_id: int, thread_id: int | None = None) -> None:
        """Drop the chat's waiting messages (``thread_id``: those to that topic)."""
        where = _OUTBOX.c.chat_id == chat_id
        if thread_id is not None:
            where = where & (_OUTBOX.c.thread_id == thread_id)
        async with self._sessions.begin() as s:
            gone = (await s.scalars(select(_OUTBOX.c.id).where(where))).all()
            await s.execute(delete(_OUTBOX).where(where))
            if thread_id is None:
                await self._memory.forget_chat(s, chat_id)
        self._kept.drop_thread(chat_id, thread_id)
        self._endings.rows_gone(list(gone))
        self._endings.drop_ended()

    async def _refused(self, row: _Row, batch: _Batch, error: str, target: str, sig: str) -> bool:
        msg = error.lower()
        if row.thread_id and ("topic_closed" in msg or "thread not found" in msg):
            # The forum topic was closed or deleted: like a chat refusing the bot, its
            # waiting messages are dropped, and the game played there is told.
            log.info("topic %s of chat %s refuses the bot: %s", row.thread_id, row.chat_id, error)
            self._stats["dropped"] += 1
            self._done_with(row, batch)
            await self._cleaner.flush(batch)
            await self._drop_chat(row.chat_id, row.thread_id)
            if self.on_topic_gone is not None:
                await self.on_topic_gone(row.chat_id, row.thread_id)
            return False
        if "not modified" in msg:
            self._stats["not_modified"] += 1
            self._done_with(row, batch, shown=(target, sig))
            return True
        gone = "not found" in msg or "can't be edited" in msg or "can't be deleted" in msg
        if gone and row.op == "edit" and row.slot is not None:
            # Someone deleted the table or a hand: post it again, and bind the new one.
            log.info("message %s in %s is gone (%s): posting it again", target, row.chat_id, error)
            await self._cleaner.flush(batch)
            async with self._sessions.begin() as s:
                await self._memory.remember_shown(s, [(target, None)])
                await s.execute(
                    update(_OUTBOX).where(_OUTBOX.c.id == row.id).values(op="send", message_id=None)
                )
            row.op, row.message_id = "send", None
            return False
        if gone and row.op == "delete":
            await self._finish(row, batch, bind=None)
            return True
        log.warning("%s to %s refused: %s", row.op, row.chat_id, error)
        self._stats["dropped"] += 1
        self._memory.want(target, None)
        self._done_with(row, batch)
        return True

    def _done_with(
        self, row: _Row, batch: _Batch, shown: tuple[str, str | None] | None = None
    ) -> None:
        """The row is carried out (or given up): its deletion is written with the next
        bind, at the end of the batch (shared) or soon (see Cleaner.flush)."""
        batch.finished.append(row.id)
        if shown is not None:
            batch.shown_now.append(shown)
        self._kept.done(row)
        self._endings.rows_gone((row.id,))

    async def _finish(
        self, row: _Row, batch: _Batch, bind: Any = ..., shown: tuple[str, str | None] | None = None
    ) -> None:
        """The row is done with, and its slot now names ``bind``: written at once, in
        one transaction with the rows done before it (a message sent twice after a
        crash would show; an edit carried out twice does not)."""
        self._done_with(row, batch, shown)
        if bind is not ... and row.slot is not None:
            batch.binds.append((row.id, row.slot, bind))
            batch.slots[row.slot] = bind
            if not self._shared:
                self._memory.learn_slots({row.slot: bind})
        await self._cleaner.flush(batch, now=True)

    async def _reschedule(self, row: _Row, when: Any) -> None:
        async with self._sessions.begin() as s:
            await s.execute(
                update(_OUTBOX)
                .where(_OUTBOX.c.id == row.id)
                .values(not_before=when, attempts=_OUTBOX.c.attempts + 1)
            )
        row.not_before, row.attempts = when, row.attempts + 1
