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

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut

from .chatlocks import ChatLocks
from .storage import repo
from .storage.models import OutboxMessage, ShownMessage, utcnow

__all__ = ["Outbox"]

log = logging.getLogger(__name__)

#: How many rows of one chat a drain reads at a time.
_BATCH = 32
#: Attempts before a message that fails in an unexpected way is given up.
_MAX_UNEXPECTED = 5
#: Rows waiting this long may be nobody's: the poll drains their chats.
_ORPHAN_AFTER = timedelta(seconds=2)
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
        self._chat_locks = ChatLocks(sessions)
        self._rekicked: set[int] = set()
        # What each target shows, and the newest state committed for it.
        self._shown = _Lru()
        self._wanted = _Lru()
        self._closing = False
        #: Counts of what happened (sent, edited, skipped, retried, dropped, ...).
        self.stats: Counter[str] = Counter()
        # The newest message id seen per chat (see telegram_bot.reposts).
        self._newest: OrderedDict[int, int] = OrderedDict()

    # -------------------------------------------------------------- deciding

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A transaction whose outbox rows are drained once it has committed."""
        async with self.sessions.begin() as s:
            s.info["outbox_chats"] = set()
            s.info["outbox_wanted"] = {}
            yield s
        self._committed(s)

    def _committed(self, s: AsyncSession) -> None:
        for target, sig in s.info.pop("outbox_wanted", {}).items():
            if sig is None:
                self._wanted.pop(target, None)
            else:
                self._wanted.remember(target, sig)
        for chat_id in s.info.pop("outbox_chats", ()):
            self.kick(chat_id)

    def _note(self, s: AsyncSession, chat_id: int) -> None:
        chats = s.info.get("outbox_chats")
        if chats is None:
            raise RuntimeError("outbox rows need a session from Outbox.transaction()")
        chats.add(chat_id)

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
        self._note(s, chat_id)
        s.add(
            OutboxMessage(
                chat_id=chat_id, op="send", slot=slot, text=text, markup=_markup_json(markup)
            )
        )
        if slot is not None:
            target = _target(chat_id, slot, None)
            s.info["outbox_wanted"][target] = _signature(text, _markup_json(markup))
        await s.flush()

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
        self._note(s, chat_id)
        # Only the newest state of a message is worth sending.
        await s.execute(
            delete(OutboxMessage).where(
                OutboxMessage.chat_id == chat_id,
                OutboxMessage.op == "edit",
                OutboxMessage.slot == slot
                if slot is not None
                else OutboxMessage.message_id == message_id,
            )
        )
        s.add(
            OutboxMessage(
                chat_id=chat_id,
                op="edit",
                slot=slot,
                message_id=message_id,
                text=text,
                markup=markup_json,
            )
        )
        wanted[target] = sig
        await s.flush()

    async def delete(
        self,
        s: AsyncSession,
        chat_id: int,
        *,
        slot: str | None = None,
        message_id: int | None = None,
    ) -> None:
        """Delete a message (named by ``slot`` or ``message_id``)."""
        self._note(s, chat_id)
        s.add(OutboxMessage(chat_id=chat_id, op="delete", slot=slot, message_id=message_id))
        s.info["outbox_wanted"][_target(chat_id, slot, message_id)] = None
        await s.flush()

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
        await self._chat_locks.close()

    async def run_poll(self, interval: float = 1.0) -> None:
        """Forever: drain chats whose rows nobody is carrying out (decided by another
        process, or left by one that died)."""
        while True:
            try:
                # A process drains what it decides at once: only rows left waiting
                # a while may have nobody on them (with several workers, asking for
                # every chat's lock each second kept the locks' connection busy).
                young = utcnow() - _ORPHAN_AFTER
                async with self.sessions() as s:
                    chats = (
                        await s.scalars(
                            select(OutboxMessage.chat_id)
                            .where(OutboxMessage.created_at < young)
                            .distinct()
                            .limit(500)
                        )
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

    async def _shown_sig(self, target: str) -> str | None:
        if not self.shared:
            return self._shown.get(target)
        async with self.sessions() as s:
            return await s.scalar(
                select(ShownMessage.signature).where(ShownMessage.target == target)
            )

    async def _remember_shown(self, s: AsyncSession, target: str, sig: str | None) -> None:
        if sig is None:
            self._shown.pop(target, None)
        else:
            self._shown.remember(target, sig)
        if not self.shared:
            return
        await s.execute(delete(ShownMessage).where(ShownMessage.target == target))
        if sig is not None:
            s.add(ShownMessage(target=target, signature=sig))

    async def _drain_rows(self, chat_id: int) -> None:
        try:
            while True:
                self._rekicked.discard(chat_id)
                async with self.sessions() as s:
                    rows = list(
                        (
                            await s.scalars(
                                select(OutboxMessage)
                                .where(OutboxMessage.chat_id == chat_id)
                                .order_by(OutboxMessage.id)
                                .limit(_BATCH)
                            )
                        ).all()
                    )
                    s.expunge_all()
                if not rows:
                    if chat_id in self._rekicked:
                        continue
                    return
                await self._carry_out(rows)
        except asyncio.CancelledError:
            raise
        except Exception:  # a database error: the rows stay; the next kick retries
            log.exception("outbox drain of chat %s failed", chat_id)
        finally:
            if self._drains.get(chat_id) is asyncio.current_task():
                del self._drains[chat_id]

    async def _carry_out(self, rows: list[OutboxMessage]) -> None:
        for i, row in enumerate(rows):
            if row.op == "edit" and any(
                later.op == "edit" and (later.slot, later.message_id) == (row.slot, row.message_id)
                for later in rows[i + 1 :]
            ):
                await self._finish(row)  # a newer state of the same message follows
                continue
            if row.not_before is not None:
                wait = (row.not_before - utcnow()).total_seconds()
                if wait > 0:
                    await asyncio.sleep(wait)
            if not await self._deliver(row):
                return  # changed or rescheduled: read the chat's rows again

    async def _deliver(self, row: OutboxMessage) -> bool:
        """Carry out one row. True when it is done with; False to read the rows again."""
        chat_id = row.chat_id
        message_id = row.message_id
        if row.op != "send" and row.slot is not None:
            async with self.sessions() as s:
                message_id = await repo.slot_message_id(s, row.slot)
            if message_id is None:  # never sent (the chat refused it): nothing to change
                self.stats["dropped"] += 1
                await self._finish(row)
                return True
        target = _target(chat_id, row.slot, row.message_id)
        sig = _signature(row.text or "", row.markup)
        if row.op == "edit" and await self._shown_sig(target) == sig:
            self.stats["skipped"] += 1
            await self._finish(row)
            return True
        markup = (
            InlineKeyboardMarkup.de_json(json.loads(row.markup), None) if row.markup else None
        )
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
                await self._finish(row, bind=message.message_id, shown=shown)
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
                await self._finish(row, shown=(target, sig))
            else:
                await self.bot.delete_message(chat_id=chat_id, message_id=message_id)
                self.stats["deleted"] += 1
                await self._finish(row, bind=None, shown=(target, None))
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
            async with self.sessions.begin() as s:
                await s.execute(delete(OutboxMessage).where(OutboxMessage.chat_id == chat_id))
                await self.forget_chat(s, chat_id)
            return False
        except BadRequest as exc:
            return await self._refused(row, str(exc), target, sig)
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
                await self._finish(row)
                return True
            await self._reschedule(row, utcnow() + timedelta(seconds=1))
            return False

    async def _refused(self, row: OutboxMessage, error: str, target: str, sig: str) -> bool:
        msg = error.lower()
        if "not modified" in msg:
            self.stats["not_modified"] += 1
            await self._finish(row, shown=(target, sig))
            return True
        gone = "not found" in msg or "can't be edited" in msg or "can't be deleted" in msg
        if gone and row.op == "edit" and row.slot is not None:
            # Someone deleted the table or a hand: post it again, and bind the new one.
            log.info("message %s in %s is gone (%s): posting it again", target, row.chat_id, error)
            async with self.sessions.begin() as s:
                await self._remember_shown(s, target, None)
                await s.execute(
                    update(OutboxMessage)
                    .where(OutboxMessage.id == row.id)
                    .values(op="send", message_id=None)
                )
            return False
        if gone and row.op == "delete":
            await self._finish(row, bind=None)
            return True
        log.warning("%s to %s refused: %s", row.op, row.chat_id, error)
        self.stats["dropped"] += 1
        self._wanted.pop(target, None)
        await self._finish(row)
        return True

    async def _finish(
        self, row: OutboxMessage, bind: Any = ..., shown: tuple[str, str | None] | None = None
    ) -> None:
        """The row is done with: delete it, and in the same transaction bind its slot
        and record what the message shows now."""
        async with self.sessions.begin() as s:
            await s.execute(delete(OutboxMessage).where(OutboxMessage.id == row.id))
            if bind is not ... and row.slot is not None:
                await repo.bind_slot(s, row.slot, bind)
            if shown is not None:
                await self._remember_shown(s, *shown)

    async def _reschedule(self, row: OutboxMessage, when: Any) -> None:
        async with self.sessions.begin() as s:
            await s.execute(
                update(OutboxMessage)
                .where(OutboxMessage.id == row.id)
                .values(not_before=when, attempts=OutboxMessage.attempts + 1)
            )


def _signature(text: str, markup_json: str | None) -> str:
    """A short fingerprint of what a message shows."""
    data = f"{text}\x00{markup_json or ''}".encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
