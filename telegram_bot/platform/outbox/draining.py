"""Draining: one task per chat carries the rows out, in order, with the Bot API."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from telegram_bot.platform.callslots import CALL_SLOTS
from telegram_bot.platform.outbox.holding import current_hold
from telegram_bot.platform.outbox.rows import (
    _BATCH,
    _MAX_UNEXPECTED,
    _NO_PREVIEW,
    _ORPHAN_AFTER,
    _OUTBOX,
    _SHOWN_LIMIT,
    _Batch,
    _retry_after_seconds,
    _Row,
    _row_id,
    _signature,
    _target,
)
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import ShownMessage, utcnow

log = logging.getLogger("telegram_bot.platform.outbox")


class Draining:
    """Outbox's drains (mixed into :class:`Outbox`)."""

    def kick(self, chat_id: int) -> None:
        """Make sure the chat's waiting rows are being carried out."""
        if self._closing:
            return
        hold = current_hold()
        if hold is not None and hold.note(chat_id):
            return  # a press is being answered first (see holding)
        self._start_drain(chat_id)

    def _start_drain(self, chat_id: int) -> None:
        if self._closing:
            return
        task = self._drains.get(chat_id)
        if task is not None and not task.done():
            self._rekicked.add(chat_id)
            return
        self._drains[chat_id] = asyncio.create_task(self._drain(chat_id), name=f"outbox {chat_id}")

    async def start(self) -> int:
        """After a (re)start: drain what an earlier run decided and did not send."""
        self._closing = False
        async with self.sessions() as s:
            chats = (await s.scalars(select(_OUTBOX.c.chat_id).distinct())).all()
        for chat_id in chats:
            self._unread.add(chat_id)
            self.kick(chat_id)
        return len(chats)

    def _busy(self, private_only: bool) -> list[asyncio.Task[Any]]:
        tasks: list[asyncio.Task[Any]] = [
            t for c, t in self._drains.items() if not t.done() and (c > 0 or not private_only)
        ]
        if self._cleaner is not None and not self._cleaner.done():
            tasks.append(self._cleaner)
        return tasks

    def pending(self, private_only: bool = False) -> int:
        """Chats whose messages are still being carried out (``private_only``: of people),
        and the deletion of rows carried out, while it is being written."""
        return len(self._busy(private_only))

    async def idle(self, private_only: bool = False) -> None:
        """Until every decided message is out (or, ``private_only``, those to people)."""
        while tasks := self._busy(private_only):
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self, timeout: float = 10.0) -> None:
        """A graceful stop: give the drains ``timeout`` seconds, then stop them (what is
        left stays stored for the next start)."""
        tasks = [t for t in self._drains.values() if not t.done()]
        if tasks:
            # What is queued goes now, within Telegram's limits but not paced below
            # them (the group buckets' pacing held "match over" past the grace).
            stop_pacing = getattr(getattr(self.bot, "rate_limiter", None), "stop_pacing", None)
            if stop_pacing is not None:
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
        await self.write_deletions()
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
                if self._done_ids:  # carried out, their deletion not written yet
                    query = query.where(_OUTBOX.c.id.not_in(list(self._done_ids)))
                async with self.sessions() as s:
                    chats = (await s.scalars(query)).all()
                for chat_id in chats:
                    task = self._drains.get(chat_id)
                    if not self.shared and (task is None or task.done()):
                        self._unread.add(chat_id)
                    self.kick(chat_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox poll failed")
            await asyncio.sleep(interval)

    async def _drain(self, chat_id: int) -> None:
        try:
            if not self.shared:
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
            self._clean_soon()

    async def _drain_rows(self, chat_id: int) -> None:
        try:
            while True:
                self._rekicked.discard(chat_id)
                batch = await self._next_batch(chat_id)
                if not batch.rows:
                    if chat_id in self._rekicked:
                        continue
                    return
                if not await self._carry_out(batch) and batch.read:
                    self._unread.add(chat_id)  # changed in the database: read it again
        except asyncio.CancelledError:
            raise
        except Exception:  # a database error: the rows stay; the next kick retries
            log.exception("outbox drain of chat %s failed", chat_id)
            if not self.shared:
                self._unread.add(chat_id)
        finally:
            if not self._rows.get(chat_id, True):
                del self._rows[chat_id]

    async def _next_batch(self, chat_id: int) -> _Batch:
        """The chat's next rows, with what their slots name and (shared) what their
        messages show: kept in memory, or read in one session."""
        if not self.shared and chat_id not in self._unread:
            rows = sorted(self._rows.get(chat_id, {}).values(), key=_row_id)[:_BATCH]
            batch = _Batch(rows, read=False)
            missing = {
                repo.slot_game_id(r.slot)
                for r in rows
                if r.op != "send" and r.slot is not None and r.slot not in self._slots
            }
            if missing:
                async with self.sessions() as s:
                    self._learn_slots(await repo.slot_message_ids(s, missing))
            batch.slots = {r.slot: self._slots.get(r.slot) for r in rows if r.slot is not None}
            return batch
        # Rows committed from now on are kept in memory as well; the read below may
        # see some of them too (a row carried out twice is avoided: see the end).
        self._unread.discard(chat_id)
        self.stats["read"] += 1
        async with self.sessions() as s:
            query = select(_OUTBOX).where(_OUTBOX.c.chat_id == chat_id)
            if self._done_ids:
                query = query.where(_OUTBOX.c.id.not_in(list(self._done_ids)))
            rows = (await s.execute(query.order_by(_OUTBOX.c.id).limit(_BATCH))).all()
            batch = _Batch([_Row(**r._mapping) for r in rows], read=True)
            games = {
                repo.slot_game_id(r.slot) for r in rows if r.op != "send" and r.slot is not None
            }
            if games:
                batch.slots = await repo.slot_message_ids(s, games)
                if not self.shared:
                    self._learn_slots(batch.slots)
            if self.shared and rows:
                targets = {_target(r.chat_id, r.slot, r.message_id) for r in rows}
                batch.shown = dict(
                    (
                        await s.execute(
                            select(ShownMessage.target, ShownMessage.signature).where(
                                ShownMessage.target.in_(targets)
                            )
                        )
                    ).all()
                )
        if not self.shared:
            kept = self._rows.get(chat_id, {})
            for row in batch.rows:
                kept.pop(row.id, None)
            if chat_id in self._committing:
                self._read_early.setdefault(chat_id, set()).update(r.id for r in batch.rows)
            if len(rows) == _BATCH:
                self._unread.add(chat_id)  # more to read
        return batch

    def _learn_slots(self, slots: dict[str, int | None]) -> None:
        for slot, message_id in slots.items():
            self._slots[slot] = message_id
            self._slots.move_to_end(slot)
        while len(self._slots) > _SHOWN_LIMIT:
            self._slots.popitem(last=False)

    async def _carry_out(self, batch: _Batch) -> bool:
        """True when every row of the batch is done with; False to read them again."""
        rows = batch.rows
        self._batches.add(batch)
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
                        await self._flush(batch)  # nothing done waits behind a delay
                        await asyncio.sleep(wait)
                if not await self._deliver(row, batch):
                    return False  # changed or rescheduled: read the chat's rows again
            return True
        finally:
            try:
                await asyncio.shield(self._flush(batch))
            finally:
                self._batches.discard(batch)
                self._drop_ended()

    async def _deliver(self, row: _Row, batch: _Batch) -> bool:
        """Carry out one row. True when it is done with; False to read the rows again."""
        chat_id = row.chat_id
        message_id = row.message_id
        if row.op == "answer":
            return await self._answer_press(row, batch)
        if row.op != "send" and row.slot is not None:
            message_id = batch.slots.get(row.slot)
            if message_id is None:  # never sent (the chat refused it): nothing to change
                self.stats["dropped"] += 1
                self._done_with(row, batch)
                return True
        target = _target(chat_id, row.slot, row.message_id)
        sig = _signature(row.text or "", row.markup)
        if row.op == "edit" and self._shown_sig(target, batch) == sig:
            self.stats["skipped"] += 1
            self._done_with(row, batch)
            return True
        try:
            if row.op == "send":
                message = await self._call("sendMessage", row, None)
                self.stats["sent"] += 1
                self.note_message(chat_id, message["message_id"])
                shown = (target, sig) if row.slot is not None else None
                await self._finish(row, batch, bind=message["message_id"], shown=shown)
            elif row.op == "edit":
                await self._call("editMessageText", row, message_id)
                self.stats["edited"] += 1
                self._done_with(row, batch, shown=(target, sig))
            else:
                await self._call("deleteMessage", row, message_id)
                self.stats["deleted"] += 1
                await self._finish(row, batch, bind=None, shown=(target, None))
            return True
        except RetryAfter as exc:
            wait = _retry_after_seconds(exc)
            log.info("%s to %s: flood limit, retrying in %.0f s", row.op, chat_id, wait)
            self.stats["retried"] += 1
            await self._reschedule(row, utcnow() + timedelta(seconds=wait))
            return False
        except ChatMigrated as exc:
            await self._migrated(row, batch, exc.new_chat_id)
            return False
        except Forbidden as exc:
            log.info("chat %s refuses the bot (%s): its waiting messages are dropped", chat_id, exc)
            self.stats["dropped"] += 1
            await self._flush(batch)
            async with self.sessions.begin() as s:
                await s.execute(delete(_OUTBOX).where(_OUTBOX.c.chat_id == chat_id))
                await self.forget_chat(s, chat_id)
            self._rows_gone(list(self._rows.pop(chat_id, {})))
            self._drop_ended()
            return False
        except BadRequest as exc:
            return await self._refused(row, batch, str(exc), target, sig)
        except (TimedOut, NetworkError) as exc:
            backoff = min(2.0 ** min(row.attempts, 5), 30.0)
            log.warning("%s to %s failed (%s); retrying in %.0f s", row.op, chat_id, exc, backoff)
            self.stats["retried"] += 1
            await self._reschedule(row, utcnow() + timedelta(seconds=backoff))
            return False
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s to %s failed", row.op, chat_id)
            if row.attempts + 1 >= _MAX_UNEXPECTED:
                self.stats["dropped"] += 1
                self._done_with(row, batch)
                return True
            await self._reschedule(row, utcnow() + timedelta(seconds=1))
            return False

    async def _answer_press(self, row: _Row, batch: _Batch) -> bool:
        """A press's stored answer the handler did not give (killed first, or its
        call failed). Telegram refuses it once too old: one line, and it is dropped."""
        press = json.loads(row.markup or "{}")
        self._answers.pop(press.get("id"), None)  # (its handler's answered() is then moot)
        data: dict[str, Any] = {
            "callback_query_id": press.get("id"),
            "show_alert": press.get("alert", False),
        }
        if row.text:
            data["text"] = row.text
        try:
            async with self._calling:
                await self.bot._post("answerCallbackQuery", data)
            self.stats["answered"] += 1
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

    async def _call(self, method: str, row: _Row, message_id: int | None) -> Any:
        """The row's Bot API call, with its markup as stored and Telegram's answer as
        JSON: python-telegram-bot's objects (the markup parsed and serialized again,
        the answer's Message with its keyboard parsed) cost more than the call itself.
        (``Bot._post`` is the layer the rate limiter of ``ExtBot`` hooks into.)"""
        data: dict[str, Any] = {"chat_id": row.chat_id}
        if message_id is not None:
            data["message_id"] = message_id
        elif row.thread_id and method == "sendMessage":
            data["message_thread_id"] = row.thread_id
        if method != "deleteMessage":
            data |= {"text": row.text or "", "parse_mode": ParseMode.HTML}
            data["link_preview_options"] = _NO_PREVIEW
            if row.markup:
                data["reply_markup"] = row.markup  # JSON text, sent as it is
        if getattr(getattr(self.bot, "rate_limiter", None), "takes_call_slots", False):
            # The rate limiter takes the slot once it lets the call through
            # (telegram_bot.platform.callslots): none is held while a group waits.
            token = CALL_SLOTS.set(self._calling)
            try:
                return await self.bot._post(method, data)
            finally:
                CALL_SLOTS.reset(token)
        async with self._calling:
            return await self.bot._post(method, data)

    def _shown_sig(self, target: str, batch: _Batch) -> str | None:
        if not self.shared:
            return self._shown.get(target)
        return batch.shown.get(target)

    async def _migrated(self, row: _Row, batch: _Batch, new_chat_id: int) -> None:
        """The group became a supergroup under a new id: the owner of the chats' data
        (``on_migrated``) moves everything, these rows included, in one transaction;
        the drain of the new id carries them out."""
        log.info("chat %s is now the supergroup %s: moving it there", row.chat_id, new_chat_id)
        await self._flush(batch)
        if self.on_migrated is None:  # nobody to move the chat: as a chat refusing the bot
            await self._drop_chat(row.chat_id)
            return
        await self.on_migrated(row.chat_id, new_chat_id)

    async def chat_moved(self, old_id: int, new_id: int, game_ids: Any = ()) -> None:
        """After the commit of a chat's move (its rows now stored under ``new_id``):
        forget what was kept of the old chat, and drain the new one from the database."""
        self._rows_gone(list(self._rows.pop(old_id, {})))
        self._unread.discard(old_id)
        for game_id in game_ids:
            self._slots.pop(f"t:{game_id}", None)
        async with self.sessions.begin() as s:
            await self.forget_chat(s, old_id)
        self._unread.add(new_id)
        self.kick(new_id)

    async def _drop_chat(self, chat_id: int, thread_id: int | None = None) -> None:
        """Drop the chat's waiting messages (``thread_id``: those to that topic)."""
        where = _OUTBOX.c.chat_id == chat_id
        if thread_id is not None:
            where = where & (_OUTBOX.c.thread_id == thread_id)
        async with self.sessions.begin() as s:
            gone = (await s.scalars(select(_OUTBOX.c.id).where(where))).all()
            await s.execute(delete(_OUTBOX).where(where))
            if thread_id is None:
                await self.forget_chat(s, chat_id)
        kept = self._rows.get(chat_id, {})
        for row_id in [i for i, r in kept.items() if thread_id is None or r.thread_id == thread_id]:
            del kept[row_id]
        self._rows_gone(list(gone))
        self._drop_ended()

    async def _refused(self, row: _Row, batch: _Batch, error: str, target: str, sig: str) -> bool:
        msg = error.lower()
        if row.thread_id and ("topic_closed" in msg or "thread not found" in msg):
            # The forum topic was closed or deleted: like a chat refusing the bot, its
            # waiting messages are dropped, and the game played there is told.
            log.info("topic %s of chat %s refuses the bot: %s", row.thread_id, row.chat_id, error)
            self.stats["dropped"] += 1
            self._done_with(row, batch)
            await self._flush(batch)
            await self._drop_chat(row.chat_id, row.thread_id)
            if self.on_topic_gone is not None:
                await self.on_topic_gone(row.chat_id, row.thread_id)
            return False
        if "not modified" in msg:
            self.stats["not_modified"] += 1
            self._done_with(row, batch, shown=(target, sig))
            return True
        gone = "not found" in msg or "can't be edited" in msg or "can't be deleted" in msg
        if gone and row.op == "edit" and row.slot is not None:
            # Someone deleted the table or a hand: post it again, and bind the new one.
            log.info("message %s in %s is gone (%s): posting it again", target, row.chat_id, error)
            await self._flush(batch)
            async with self.sessions.begin() as s:
                await self._remember_shown(s, [(target, None)])
                await s.execute(
                    update(_OUTBOX).where(_OUTBOX.c.id == row.id).values(op="send", message_id=None)
                )
            row.op, row.message_id = "send", None
            return False
        if gone and row.op == "delete":
            await self._finish(row, batch, bind=None)
            return True
        log.warning("%s to %s refused: %s", row.op, row.chat_id, error)
        self.stats["dropped"] += 1
        self._wanted.pop(target, None)
        self._done_with(row, batch)
        return True

    async def _remember_shown(self, s: AsyncSession, shown: list[tuple[str, str | None]]) -> None:
        """Record what messages show now (None: nothing, or not known): in memory, or
        (shared) in the database, where every process reads it."""
        if not self.shared:
            for target, sig in shown:
                if sig is None:
                    self._shown.pop(target, None)
                else:
                    self._shown.remember(target, sig)
            return
        if not shown:
            return
        newest = dict(shown)
        await s.execute(delete(ShownMessage).where(ShownMessage.target.in_(newest)))
        known = [{"target": t, "signature": sig} for t, sig in newest.items() if sig is not None]
        if known:
            await s.execute(insert(ShownMessage.__table__), known)

    def _done_with(
        self, row: _Row, batch: _Batch, shown: tuple[str, str | None] | None = None
    ) -> None:
        """The row is carried out (or given up): its deletion is written with the next
        bind, at the end of the batch (shared) or soon (see _cleanup)."""
        batch.finished.append(row.id)
        if shown is not None:
            batch.shown_now.append(shown)
        rows = self._rows.get(row.chat_id)
        if rows is not None:
            rows.pop(row.id, None)
        self._rows_gone((row.id,))

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
            if not self.shared:
                self._learn_slots({row.slot: bind})
        await self._flush(batch, now=True)
