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

What it costs per message (the outbox was half the bot's CPU per play):

- A transaction's rows are written together just before its commit: one INSERT (and
  one DELETE for the older edits they replace, when one may still wait).
- Without ``shared`` this process is the only one deciding and carrying out rows, so it
  keeps what it committed in memory as well and reads the table only for rows it
  does not know (left by an earlier run; after a failure), and it remembers which
  message a slot names. A message costs its Bot API call and nothing else.
- A send is deleted with its slot's new message id at once (sent twice after a crash,
  it would show twice); the deletion of an edit waits for the next cleanup, one
  statement for all chats, once no drain runs (or within half a second, or for 64
  rows). Killed in between, the next start edits those messages again to what they
  already show.
- On PostgreSQL the rows are written and deleted on asyncpg directly
  (:mod:`.storage.pgdirect`); with one process a cleanup, or a bind with the
  deletions before it, is one statement on its own (no BEGIN and COMMIT round trips).
- The Bot API calls are made with the markup JSON as stored and their answers kept as
  JSON: python-telegram-bot's objects, built and parsed per call, cost more than the
  call itself. At most a few calls are in flight (see ``_CALLS_AT_ONCE``).
- A game over is forgotten (what its messages show, which messages its slots name)
  once its last rows are out: nothing is kept per game played.
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

from sqlalchemy import delete, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut

from .chatlocks import ChatLocks
from .keyboards import PlainKeyboard
from .storage import pgdirect, repo
from .storage.models import OutboxMessage, ShownMessage, utcnow

__all__ = ["Outbox"]

log = logging.getLogger(__name__)

#: How many rows of one chat a drain reads at a time.
_BATCH = 32
#: Attempts before a message that fails in an unexpected way is given up.
_MAX_UNEXPECTED = 5
#: Bot API calls of the outbox in flight at once (more chats wait their turn). Answers
#: to presses, made by the handlers, so never queue behind edits for a connection; and
#: the HTTP pool stays small (httpcore walks every pooled connection, with a poll() of
#: each idle one's socket, on every request). Telegram takes ~30 calls/s from a bot:
#: at its ~0.1 s round trips a few calls in flight are enough.
_CALLS_AT_ONCE = 6
#: Rows waiting this long may be nobody's: the poll drains their chats.
_ORPHAN_AFTER = timedelta(seconds=2)
#: Remembered signatures (what each message shows); a forgotten one costs one edit.
_SHOWN_LIMIT = 8192


def _markup_json(markup: InlineKeyboardMarkup | PlainKeyboard | None) -> str | None:
    """The markup as JSON (what is stored and sent). Keyboards of plain buttons (text
    and a string callback, URL or inline query: all the bot draws) are written from
    their fields directly, the same JSON ``to_dict()`` gives at a fraction of its
    cost; anything else goes through ``to_dict()``. A :class:`PlainKeyboard` is
    those fields already."""
    if markup is None:
        return None
    if type(markup) is PlainKeyboard:
        return markup.to_json()
    if not markup.api_kwargs:
        rows = []
        for row in markup.inline_keyboard:
            out = []
            for button in row:
                fields = _plain_button(button)
                if fields is None:
                    break
                out.append(fields)
            else:
                rows.append(out)
                continue
            break
        else:
            return json.dumps({"inline_keyboard": rows}, ensure_ascii=False, sort_keys=True)
    return json.dumps(markup.to_dict(), ensure_ascii=False, sort_keys=True)


#: InlineKeyboardButton's fields a plain button has (as strings, when not None).
_PLAIN_FIELDS = ("callback_data", "url", "switch_inline_query", "switch_inline_query_current_chat")
_OTHER_FIELDS = tuple(
    f for f in InlineKeyboardButton.__slots__ if f not in {"text", *_PLAIN_FIELDS}
)


def _plain_button(button: InlineKeyboardButton) -> dict[str, str] | None:
    if button.api_kwargs or type(button) is not InlineKeyboardButton:
        return None
    for name in _OTHER_FIELDS:
        if getattr(button, name) is not None:
            return None
    fields = {"text": button.text}
    for name in _PLAIN_FIELDS:
        value = getattr(button, name)
        if value is not None:
            if not isinstance(value, str):
                return None
            fields[name] = value
    return fields


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
        # Without ``shared`` this process is the only one writing and carrying out
        # rows: what it committed is kept here too (chat -> row id -> row), so a drain
        # reads the database only for a chat in ``_unread`` (rows left by an earlier
        # run, or a drain that failed); what a slot names is remembered likewise.
        self._rows: dict[int, dict[int, _Row]] = {}
        self._unread: set[int] = set()
        # Chats with a transaction committing rows, and the rows of theirs a drain
        # read in the meantime (not to be kept in memory as well: carried out twice).
        self._committing: dict[int, int] = {}
        self._read_early: dict[int, set[int]] = {}
        self._slots: OrderedDict[str, int | None] = OrderedDict()
        # Rows carried out whose deletion is not written yet (see _cleanup).
        self._done: list[int] = []
        self._done_ids: set[int] = set()
        self._cleaner: asyncio.Task[None] | None = None
        self._cleanup_timer: asyncio.TimerHandle | None = None
        self._calling = asyncio.Semaphore(_CALLS_AT_ONCE)
        # Games over whose last rows are still going out: game id -> those rows' ids;
        # and the batches being carried out.
        self._ending: dict[str, set[int]] = {}
        self._batches: set[_Batch] = set()

    # -------------------------------------------------------------- deciding

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
                if chat_id in self._unread or row_id in self._read_early.get(chat_id, ()):
                    continue  # a drain reads it from the database (or has read it)
                self._rows.setdefault(chat_id, {})[row_id] = _Row(id=row_id, **row)
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
        markup: InlineKeyboardMarkup | PlainKeyboard | None = None,
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
        markup: InlineKeyboardMarkup | PlainKeyboard | None = None,
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
            _done, left = await asyncio.wait(tasks, timeout=timeout)
            if left:
                log.warning("stopping with messages of %d chat(s) still queued", len(left))
        self._closing = True
        tasks = [t for t in self._drains.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._drains.clear()
        if self._cleanup_timer is not None:
            self._cleanup_timer.cancel()
            self._cleanup_timer = None
        if self._cleaner is not None:
            await asyncio.gather(self._cleaner, return_exceptions=True)
        await self._cleanup()
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

    async def _call(self, method: str, row: _Row, message_id: int | None) -> Any:
        """The row's Bot API call, with its markup as stored and Telegram's answer as
        JSON: python-telegram-bot's objects (the markup parsed and serialized again,
        the answer's Message with its keyboard parsed) cost more than the call itself.
        (``Bot._post`` is the layer the rate limiter of ``ExtBot`` hooks into.)"""
        data: dict[str, Any] = {"chat_id": row.chat_id}
        if message_id is not None:
            data["message_id"] = message_id
        if method != "deleteMessage":
            data |= {"text": row.text or "", "parse_mode": ParseMode.HTML}
            data["link_preview_options"] = _NO_PREVIEW
            if row.markup:
                data["reply_markup"] = row.markup  # JSON text, sent as it is
        async with self._calling:
            return await self.bot._post(method, data)

    def _shown_sig(self, target: str, batch: _Batch) -> str | None:
        if not self.shared:
            return self._shown.get(target)
        return batch.shown.get(target)

    async def _refused(self, row: _Row, batch: _Batch, error: str, target: str, sig: str) -> bool:
        msg = error.lower()
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
            engine = self.sessions.kw.get("bind")
            if not self.shared and len(binds) <= 1 and pgdirect.is_asyncpg_engine(engine):
                # One statement, atomic by itself: the rows' deletion with the bind.
                await pgdirect.execute_alone(engine, *_pg_flush(finished + earlier, binds))
            else:
                async with self.sessions.begin() as s:
                    if finished or earlier:
                        await s.execute(delete(_OUTBOX).where(_OUTBOX.c.id.in_(finished + earlier)))
                    for _row_id, slot, message_id in binds:
                        await repo.bind_slot(s, slot, message_id)
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

    async def _cleanup(self) -> None:
        """Delete the rows carried out. (Killed before this, the next start carries them
        out again: an edit twice shows nothing new, a message twice cannot happen, as a
        send is deleted with its bind at once.)"""
        ids = self._take_done()
        if not ids:
            return
        try:
            engine = self.sessions.kw.get("bind")
            if pgdirect.is_asyncpg_engine(engine):
                await pgdirect.delete_ids(engine, "outbox", ids)
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


_OUTBOX = OutboxMessage.__table__
_NO_PREVIEW = json.dumps({"is_disabled": True})
_EMPTY_ROW: dict[str, Any] = {"slot": None, "message_id": None, "text": None, "markup": None}
#: Rows carried out whose deletion waits for a cleanup: at most this many, this long.
_CLEANUP_ROWS = 64
_CLEANUP_SECONDS = 0.5


def _pg_flush(ids: list[int], binds: list[tuple[int, str, int | None]]) -> list[Any]:
    """The deletion of rows done with and (at most) one bind as one statement: the
    SQL and its parameters."""
    delete_sql = "DELETE FROM outbox WHERE id = ANY($1::integer[])"
    if not binds:
        return [delete_sql, ids]
    _row_id, slot, message_id = binds[0]
    bind_sql, args = repo.pg_bind_slot(slot, message_id, 2)
    return [f"WITH gone AS ({delete_sql}) {bind_sql}", ids, *args]


async def _delete_ids(s: AsyncSession, ids: list[int]) -> None:
    for i in range(0, len(ids), 500):
        await s.execute(delete(_OUTBOX).where(_OUTBOX.c.id.in_(ids[i : i + 500])))


#: The rows in one statement on asyncpg (see pgdirect), in the given order: the
#: serial ids are drawn row by row in that order, so sorted they are the rows' ids.
_PG_INSERT = (
    "INSERT INTO outbox (chat_id, op, slot, message_id, text, markup, created_at)"
    " SELECT c, o, s, m, t, k, $7 FROM unnest($1::bigint[], $2::varchar[], $3::varchar[],"
    " $4::bigint[], $5::text[], $6::text[]) WITH ORDINALITY AS r(c, o, s, m, t, k, n)"
    " ORDER BY n RETURNING id"
)


async def _pg_insert_ids(pg: Any, rows: list[dict[str, Any]], now: Any) -> list[int]:
    columns: list[list[Any]] = [[], [], [], [], [], []]
    for row in rows:
        columns[0].append(row["chat_id"])
        columns[1].append(row["op"])
        columns[2].append(row.get("slot"))
        columns[3].append(row.get("message_id"))
        columns[4].append(row.get("text"))
        columns[5].append(row.get("markup"))
    return sorted(r[0] for r in await pgdirect.fetch(pg, _PG_INSERT, *columns, now))


async def _insert_ids(s: AsyncSession, values: list[dict[str, Any]]) -> list[int]:
    """Insert the rows (one executemany); their ids, in order."""
    if s.get_bind().dialect.name == "sqlite":
        # Rows inserted one after the other in a write transaction get consecutive
        # ids (AUTOINCREMENT, one writer): the last one gives them all.
        await s.execute(insert(_OUTBOX), values)
        last = int(await s.scalar(text("SELECT last_insert_rowid()")) or 0)
        return list(range(last - len(values) + 1, last + 1))
    result = await s.execute(
        insert(_OUTBOX).returning(_OUTBOX.c.id, sort_by_parameter_order=True), values
    )
    return list(result.scalars().all())


class _Row:
    """One outbox row, as stored."""

    __slots__ = (
        "attempts",
        "chat_id",
        "id",
        "markup",
        "message_id",
        "not_before",
        "op",
        "slot",
        "text",
    )

    def __init__(
        self,
        id: int,
        chat_id: int,
        op: str,
        slot: str | None = None,
        message_id: int | None = None,
        not_before: Any = None,
        attempts: int = 0,
        text: str | None = None,
        markup: str | None = None,
        **_: Any,
    ) -> None:
        self.id, self.chat_id, self.op, self.slot = id, chat_id, op, slot
        self.message_id, self.not_before, self.attempts = message_id, not_before, attempts
        self.text, self.markup = text, markup

    def replaced_by(self, slot: str | None, message_id: int | None) -> bool:
        """Is this an edit of the message an edit of ``slot`` / ``message_id`` replaces?"""
        return self.op == "edit" and (self.slot, self.message_id) == (slot, message_id)


def _game_of(slot: str | None) -> str | None:
    """The game a slot (``t:<game>``, ``h:<game>:<user>``) belongs to."""
    if not slot or slot[1:2] != ":":
        return None
    return slot[2:].partition(":")[0]


def _row_id(row: _Row) -> int:
    return row.id


class _Batch:
    """Rows of one chat being carried out, with what the drain learnt reading them,
    and what it has done with them not yet written (see Outbox._flush)."""

    def __init__(self, rows: list[_Row], read: bool) -> None:
        self.rows = rows
        #: Read from the database (else: kept in memory).
        self.read = read
        #: slot -> message id it names now (read with the rows, then kept up to date).
        self.slots: dict[str, int | None] = {}
        #: shared: target -> what the message shows, as stored.
        self.shown: dict[str, str | None] = {}
        self.finished: list[int] = []
        self.binds: list[tuple[int, str, int | None]] = []
        self.shown_now: list[tuple[str, str | None]] = []


def _signature(text: str, markup_json: str | None) -> str:
    """A short fingerprint of what a message shows."""
    data = f"{text}\x00{markup_json or ''}".encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
