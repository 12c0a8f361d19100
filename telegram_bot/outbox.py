"""The durable outbox: every message the bot decides on reaches Telegram, once.

A move decides what to show (the table edited, a hand dealt, "match over" sent) in
the same database transaction that stores it: :meth:`Outbox.send`, :meth:`Outbox.edit`
and :meth:`Outbox.delete` add rows to the ``outbox`` table through the caller's session.
After the commit one drain task per chat carries the rows out in order and deletes each
one once Telegram has taken it. So a crash or a kill at any moment loses nothing: the
next start (:meth:`Outbox.start`) drains whatever is left.

- Coalesced: a new edit of a message replaces the edits of it still waiting, so only
  the newest state is sent, never one older than what was already shown; an edit equal
  to what the message shows (or is about to show) is not sent at all.
- A 429 delays the chat's messages by Telegram's ``retry_after``, a network error
  retries with backoff: a decided message is delayed, never dropped.
- A chat that refuses the bot (blocked, removed) has its waiting messages dropped; a
  message deleted by someone is posted again when its slot (a game's table, a player's
  hand) is next edited.
- Expected API errors are logged as one line; nothing here raises into a handler.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut

from .storage import repo
from .storage.models import OutboxMessage, ShownMessage, utcnow

__all__ = ["Outbox"]

log = logging.getLogger(__name__)

#: How many rows of one chat a drain reads at a time.
_BATCH = 32
#: Attempts before a message that fails in an unexpected way is given up.
_MAX_UNEXPECTED = 5
#: Remembered signatures (what each message shows); a forgotten one costs one edit.
_SHOWN_LIMIT = 8192


def _markup_json(markup: InlineKeyboardMarkup | None) -> str | None:
    if markup is None:
        return None
    return json.dumps(markup.to_dict(), ensure_ascii=False, sort_keys=True)


def _target(chat_id: int, slot: str | None, message_id: int | None) -> str:
    return f"{chat_id}/{slot if slot is not None else message_id}"


def _retry_after_seconds(exc: RetryAfter) -> float:
    ra = exc.retry_after
    return ra.total_seconds() if hasattr(ra, "total_seconds") else float(ra)


class _Lru(OrderedDict[str, str]):
    def remember(self, key: str, value: str) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > _SHOWN_LIMIT:
            self.popitem(last=False)


class Outbox:
    """See the module's documentation. With ``shared`` (several processes on one
    PostgreSQL database) one process at a time drains a chat, under the chat's
    advisory lock, and what each message shows is kept in the database."""

    def __init__(
        self, bot: Bot, sessions: async_sessionmaker[AsyncSession], *, shared: bool = False
    ) -> None:
        self.bot = bot
        self.sessions = sessions
        self.shared = shared
        self._drains: dict[int, asyncio.Task[None]] = {}
        self._rekicked: set[int] = set()
        # What each target shows, and the newest state committed for it.
        self._shown = _Lru()
        self._wanted = _Lru()
        self._closing = False
        #: Counts of what happened (sent, edited, skipped, retried, dropped, ...).
        self.stats: Counter[str] = Counter()
        # The newest message id seen per chat (see telegram_bot.reposts).
        self._newest: OrderedDict[int, int] = OrderedDict()
        # Edit rows committed and not yet carried out, per target (a count that may
        # run low after a restart or a race: it only spares a DELETE, see edit()).
        self._queued: dict[str, int] = {}

    # -------------------------------------------------------------- deciding

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A transaction whose outbox rows are drained once it has committed."""
        async with self.sessions.begin() as s:
            s.info["outbox_chats"] = set()
            s.info["outbox_wanted"] = {}
            s.info["outbox_rows"] = []
            s.info["outbox_replaced"] = {}
            yield s
            await self._write(s)
        self._committed(s)

    async def _write(self, s: AsyncSession) -> None:
        """The rows decided in this transaction, written just before its commit: one
        DELETE for the older edits they replace, one INSERT for all of them (not a
        statement, an ORM flush and a round trip per row)."""
        rows: list[dict[str, Any]] = s.info["outbox_rows"]
        replaced: dict[str, tuple[int, str | None, int | None]] = s.info["outbox_replaced"]
        if replaced:
            await s.execute(
                delete(OutboxMessage).where(
                    OutboxMessage.op == "edit",
                    or_(
                        *(
                            (OutboxMessage.chat_id == chat_id)
                            & (
                                OutboxMessage.slot == slot
                                if slot is not None
                                else OutboxMessage.message_id == message_id
                            )
                            for chat_id, slot, message_id in replaced.values()
                        )
                    ),
                )
            )
        if rows:
            now = utcnow()
            await s.execute(
                insert(OutboxMessage),
                [
                    {"message_id": None, "slot": None, "text": None, "markup": None}
                    | row
                    | {"created_at": now}
                    for row in rows
                ],
            )

    def _committed(self, s: AsyncSession) -> None:
        for target in s.info.pop("outbox_replaced", {}):
            self._queued.pop(target, None)  # deleted with the commit
        for target, sig in s.info.pop("outbox_wanted", {}).items():
            if sig is None:
                self._wanted.pop(target, None)
            else:
                self._wanted.remember(target, sig)
        for row in s.info.pop("outbox_rows", ()):
            if row["op"] == "edit":
                target = _target(row["chat_id"], row["slot"], row["message_id"])
                self._queued[target] = self._queued.get(target, 0) + 1
        for chat_id in s.info.pop("outbox_chats", ()):
            self.kick(chat_id)

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
        markup: InlineKeyboardMarkup | None = None,
        *,
        slot: str | None = None,
    ) -> None:
        """Send a new message (bound to ``slot`` once sent, if given)."""
        markup_json = _markup_json(markup)
        self._note(s, chat_id).append(
            {"chat_id": chat_id, "op": "send", "slot": slot, "text": text, "markup": markup_json}
        )
        if slot is not None:
            target = _target(chat_id, slot, None)
            s.info["outbox_wanted"][target] = _signature(text, markup_json)

    async def edit(
        self,
        s: AsyncSession,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        *,
        slot: str | None = None,
        message_id: int | None = None,
    ) -> None:
        """Make a message (named by ``slot`` or ``message_id``) show this, soon."""
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
        # earlier in this transaction is dropped, and one committed earlier is deleted
        # with the commit. (Without ``shared``, only when one is known to be waiting:
        # a stale edit left over is harmless, as rows go out in order and the drain
        # skips an edit followed by a newer one.)
        rows[:] = [
            r
            for r in rows
            if not (
                r["op"] == "edit"
                and (r["chat_id"], r["slot"], r["message_id"]) == (chat_id, slot, message_id)
            )
        ]
        if self.shared or self._queued.get(target):
            s.info["outbox_replaced"][target] = (chat_id, slot, message_id)
        rows.append(
            {
                "chat_id": chat_id,
                "op": "edit",
                "slot": slot,
                "message_id": message_id,
                "text": text,
                "markup": markup_json,
            }
        )
        wanted[target] = sig

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

    def note_message(self, chat_id: int, message_id: int) -> None:
        """A message appeared in a chat (sent by the bot, or an update it received)."""
        if message_id > self._newest.get(chat_id, 0):
            self._newest[chat_id] = message_id
            self._newest.move_to_end(chat_id)
            while len(self._newest) > _SHOWN_LIMIT:
                self._newest.popitem(last=False)

    def newest_message_id(self, chat_id: int) -> int | None:
        return self._newest.get(chat_id)

    async def forget_chat(self, s: AsyncSession, chat_id: int) -> None:
        """Forget what the chat's messages show (they may be stale): the next edit of
        each is sent even if it looks unchanged."""
        prefix = f"{chat_id}/"
        for lru in (self._shown, self._wanted, self._queued):
            for key in [k for k in lru if k.startswith(prefix)]:
                del lru[key]
        if self.shared:
            await s.execute(delete(ShownMessage).where(ShownMessage.target.startswith(prefix)))

    # -------------------------------------------------------------- draining

    def kick(self, chat_id: int) -> None:
        """Make sure the chat's waiting rows are being carried out."""
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
            chats = (await s.scalars(select(OutboxMessage.chat_id).distinct())).all()
        for chat_id in chats:
            self.kick(chat_id)
        return len(chats)

    def pending(self, private_only: bool = False) -> int:
        """Chats whose messages are still being carried out (``private_only``: of people)."""
        return sum(
            1
            for chat_id, task in self._drains.items()
            if not task.done() and (chat_id > 0 or not private_only)
        )

    async def idle(self, private_only: bool = False) -> None:
        """Until every decided message is out (or, ``private_only``, those to people)."""
        while True:
            tasks = [
                t for c, t in self._drains.items() if not t.done() and (c > 0 or not private_only)
            ]
            if not tasks:
                return
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self, timeout: float = 10.0) -> None:
        """A graceful stop: give the drains ``timeout`` seconds, then stop them (what is
        left stays stored for the next start)."""
        tasks = [t for t in self._drains.values() if not t.done()]
        if tasks:
            _done, left = await asyncio.wait(tasks, timeout=timeout)
            if left:
                log.warning("stopping with messages of %d chat(s) still queued", len(left))
        self._closing = True
        tasks = [t for t in self._drains.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._drains.clear()

    async def run_poll(self, interval: float = 1.0) -> None:
        """Forever: drain chats whose rows nobody is carrying out (decided by another
        process, or left by one that died)."""
        while True:
            try:
                async with self.sessions() as s:
                    chats = (
                        await s.scalars(select(OutboxMessage.chat_id).distinct().limit(500))
                    ).all()
                for chat_id in chats:
                    self.kick(chat_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox poll failed")
            await asyncio.sleep(interval)

    async def _drain(self, chat_id: int) -> None:
        if not self.shared:
            await self._drain_rows(chat_id)
            return
        # One drain per chat across processes: the chat's advisory lock, held by this
        # session's connection (released by the database if this process dies).
        try:
            async with self.sessions() as lock:
                key = func.pg_try_advisory_lock(chat_id)
                if not await lock.scalar(select(key)):
                    return
                try:
                    await self._drain_rows(chat_id)
                finally:
                    await lock.scalar(select(func.pg_advisory_unlock(chat_id)))
        finally:
            if self._drains.get(chat_id) is asyncio.current_task():
                del self._drains[chat_id]

    async def _read_batch(self, chat_id: int) -> _Batch:
        """The chat's next rows, what their slots name and (shared) what their
        messages show: one session, three reads at most."""
        async with self.sessions() as s:
            rows = (
                await s.execute(
                    select(_OUTBOX)
                    .where(_OUTBOX.c.chat_id == chat_id)
                    .order_by(_OUTBOX.c.id)
                    .limit(_BATCH)
                )
            ).all()
            batch = _Batch(list(rows))
            games = {
                repo.slot_game_id(r.slot) for r in rows if r.op != "send" and r.slot is not None
            }
            if games:
                batch.slots = await repo.slot_message_ids(s, games)
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
        return batch

    async def _drain_rows(self, chat_id: int) -> None:
        try:
            while True:
                self._rekicked.discard(chat_id)
                batch = await self._read_batch(chat_id)
                if not batch.rows:
                    if chat_id in self._rekicked:
                        continue
                    return
                whole = await self._carry_out(batch)
                # Without ``shared``, every commit that adds rows kicks the chat: with
                # no kick since the read and nothing left unread, the chat is done
                # (another process's rows, in shared mode, only show by reading).
                if (
                    whole
                    and not self.shared
                    and len(batch.rows) < _BATCH
                    and chat_id not in self._rekicked
                ):
                    return
        except asyncio.CancelledError:
            raise
        except Exception:  # a database error: the rows stay; the next kick retries
            log.exception("outbox drain of chat %s failed", chat_id)
        finally:
            if self._drains.get(chat_id) is asyncio.current_task():
                del self._drains[chat_id]

    async def _carry_out(self, batch: _Batch) -> bool:
        """True when every row of the batch is done with; False to read them again."""
        rows = batch.rows
        try:
            for i, row in enumerate(rows):
                if row.op == "edit" and any(
                    later.op == "edit"
                    and (later.slot, later.message_id) == (row.slot, row.message_id)
                    for later in rows[i + 1 :]
                ):
                    batch.done(row)  # a newer state of the same message follows
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
            await asyncio.shield(self._flush(batch))

    async def _deliver(self, row: Any, batch: _Batch) -> bool:
        """Carry out one row. True when it is done with; False to read the rows again."""
        chat_id = row.chat_id
        message_id = row.message_id
        if row.op != "send" and row.slot is not None:
            message_id = batch.slots.get(row.slot)
            if message_id is None:  # never sent (the chat refused it): nothing to change
                self.stats["dropped"] += 1
                batch.done(row)
                return True
        target = _target(chat_id, row.slot, row.message_id)
        sig = _signature(row.text or "", row.markup)
        if row.op == "edit" and self._shown_sig(target, batch) == sig:
            self.stats["skipped"] += 1
            batch.done(row)
            return True
        markup = InlineKeyboardMarkup.de_json(json.loads(row.markup), None) if row.markup else None
        try:
            if row.op == "send":
                message = await self.bot.send_message(
                    chat_id=chat_id,
                    text=row.text or "",
                    reply_markup=markup,
                    parse_mode=ParseMode.HTML,
                    disable_web_page_preview=True,
                )
                self.stats["sent"] += 1
                self.note_message(chat_id, message.message_id)
                shown = (target, sig) if row.slot is not None else None
                await self._finish(row, batch, bind=message.message_id, shown=shown)
            elif row.op == "edit":
                await self.bot.edit_message_text(
                    chat_id=chat_id,
                    message_id=message_id,
                    text=row.text or "",
                    reply_markup=markup,
                    parse_mode=ParseMode.HTML,
                    disable_web_page_preview=True,
                )
                self.stats["edited"] += 1
                batch.done(row, shown=(target, sig))
            else:
                await self.bot.delete_message(chat_id=chat_id, message_id=message_id)
                self.stats["deleted"] += 1
                await self._finish(row, batch, bind=None, shown=(target, None))
            return True
        except RetryAfter as exc:
            wait = _retry_after_seconds(exc)
            log.info("%s to %s: flood limit, retrying in %.0f s", row.op, chat_id, wait)
            self.stats["retried"] += 1
            await self._reschedule(row, utcnow() + timedelta(seconds=wait))
            return False
        except Forbidden as exc:
            log.info("chat %s refuses the bot (%s): its waiting messages are dropped", chat_id, exc)
            self.stats["dropped"] += 1
            batch.clear()
            async with self.sessions.begin() as s:
                await s.execute(delete(OutboxMessage).where(OutboxMessage.chat_id == chat_id))
                await self.forget_chat(s, chat_id)
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
                batch.done(row)
                return True
            await self._reschedule(row, utcnow() + timedelta(seconds=1))
            return False

    def _shown_sig(self, target: str, batch: _Batch) -> str | None:
        if not self.shared:
            return self._shown.get(target)
        return batch.shown.get(target)

    async def _refused(self, row: Any, batch: _Batch, error: str, target: str, sig: str) -> bool:
        msg = error.lower()
        if "not modified" in msg:
            self.stats["not_modified"] += 1
            batch.done(row, shown=(target, sig))
            return True
        gone = "not found" in msg or "can't be edited" in msg or "can't be deleted" in msg
        if gone and row.op == "edit" and row.slot is not None:
            # Someone deleted the table or a hand: post it again, and bind the new one.
            log.info("message %s in %s is gone (%s): posting it again", target, row.chat_id, error)
            await self._flush(batch)
            async with self.sessions.begin() as s:
                await self._remember_shown(s, [(target, None)])
                await s.execute(
                    update(OutboxMessage)
                    .where(OutboxMessage.id == row.id)
                    .values(op="send", message_id=None)
                )
            return False
        if gone and row.op == "delete":
            await self._finish(row, batch, bind=None)
            return True
        log.warning("%s to %s refused: %s", row.op, row.chat_id, error)
        self.stats["dropped"] += 1
        self._wanted.pop(target, None)
        batch.done(row)
        return True

    async def _remember_shown(self, s: AsyncSession, shown: list[tuple[str, str | None]]) -> None:
        """Record what messages show now (None: nothing, or not known)."""
        for target, sig in shown:
            if sig is None:
                self._shown.pop(target, None)
            else:
                self._shown.remember(target, sig)
        if not self.shared or not shown:
            return
        newest = dict(shown)
        await s.execute(delete(ShownMessage).where(ShownMessage.target.in_(newest)))
        known = [{"target": t, "signature": sig} for t, sig in newest.items() if sig is not None]
        if known:
            await s.execute(insert(ShownMessage), known)

    async def _finish(
        self, row: Any, batch: _Batch, bind: Any = ..., shown: tuple[str, str | None] | None = None
    ) -> None:
        """The row is done with, and its slot now names ``bind``: written at once, in
        one transaction with the rows done before it (a message sent twice after a
        crash would show; an edit carried out twice does not)."""
        batch.done(row, shown=shown)
        if bind is not ... and row.slot is not None:
            batch.binds.append((row.slot, bind))
            batch.slots[row.slot] = bind
        await self._flush(batch)

    async def _flush(self, batch: _Batch) -> None:
        """Delete the rows done with, bind their slots, record what their messages show."""
        if not batch.finished:
            return
        finished, binds, shown = batch.finished, batch.binds, batch.shown_now
        batch.finished, batch.binds, batch.shown_now = [], [], []
        async with self.sessions.begin() as s:
            await s.execute(delete(OutboxMessage).where(OutboxMessage.id.in_(finished)))
            for slot, message_id in binds:
                await repo.bind_slot(s, slot, message_id)
            await self._remember_shown(s, shown)
        for target, sig in shown:
            if self.shared:
                batch.shown[target] = sig  # type: ignore[assignment]
        for target in batch.edited:
            left = self._queued.get(target, 0) - 1
            if left > 0:
                self._queued[target] = left
            else:
                self._queued.pop(target, None)
        batch.edited = []

    async def _reschedule(self, row: Any, when: Any) -> None:
        async with self.sessions.begin() as s:
            await s.execute(
                update(OutboxMessage)
                .where(OutboxMessage.id == row.id)
                .values(not_before=when, attempts=OutboxMessage.attempts + 1)
            )


_OUTBOX = OutboxMessage.__table__


class _Batch:
    """Rows of one chat being carried out, with what the drain learnt reading them,
    and what it has done with them not yet written (see Outbox._flush)."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows
        #: slot -> message id it names now (read with the rows, then kept up to date).
        self.slots: dict[str, int | None] = {}
        #: shared: target -> what the message shows, as stored.
        self.shown: dict[str, str | None] = {}
        self.finished: list[int] = []
        self.binds: list[tuple[str, int | None]] = []
        self.shown_now: list[tuple[str, str | None]] = []
        self.edited: list[str] = []

    def done(self, row: Any, shown: tuple[str, str | None] | None = None) -> None:
        self.finished.append(row.id)
        if shown is not None:
            self.shown_now.append(shown)
        if row.op == "edit":
            self.edited.append(_target(row.chat_id, row.slot, row.message_id))

    def clear(self) -> None:
        self.finished, self.binds, self.shown_now, self.edited = [], [], [], []


def _signature(text: str, markup_json: str | None) -> str:
    """A short fingerprint of what a message shows."""
    data = f"{text}\x00{markup_json or ''}".encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
