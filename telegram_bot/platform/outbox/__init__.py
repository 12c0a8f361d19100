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

Its parts, each owning its state (:class:`Outbox` only wires them together):
:mod:`.deciding` (a transaction's rows), :mod:`.kept` (the rows this process
committed), :mod:`.memory` (what messages show, which message a slot names),
:mod:`.drains` (a task per chat), :mod:`.reading` and :mod:`.carrying` (a drain's
batch read and carried out), :mod:`.calls` (the Bot API calls in flight),
:mod:`.cleanup` (what a drain did, written, and the deferred deletions),
:mod:`.endings` (games over whose last rows are going out) and :mod:`.holding`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from telegram import Bot, InlineKeyboardMarkup

from telegram_bot.platform.keyboards import PlainKeyboard
from telegram_bot.platform.outbox.calls import Calls
from telegram_bot.platform.outbox.carrying import Carrier
from telegram_bot.platform.outbox.cleanup import Cleaner
from telegram_bot.platform.outbox.deciding import Decisions
from telegram_bot.platform.outbox.drains import Drains
from telegram_bot.platform.outbox.endings import Endings
from telegram_bot.platform.outbox.holding import Hold, holding
from telegram_bot.platform.outbox.kept import KeptRows
from telegram_bot.platform.outbox.memory import Memory
from telegram_bot.platform.outbox.reading import Reader
from telegram_bot.platform.storage import pgdirect

__all__ = ["Outbox"]


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
        #: Counts of what happened (sent, edited, skipped, retried, dropped, ...).
        self.stats: Counter[str] = Counter()
        bind = sessions.kw.get("bind")
        asyncpg: AsyncEngine | None = bind if pgdirect.is_asyncpg_engine(bind) else None
        self._memory = Memory(shared)
        self._kept = KeptRows()
        self._endings = Endings(self._memory)
        self._cleaner = Cleaner(sessions, asyncpg, shared, self._memory, self._endings)
        self._calls = Calls(bot)
        self._carrier = Carrier(
            sessions,
            shared,
            self._calls,
            self._memory,
            self._kept,
            self._endings,
            self._cleaner,
            self.stats,
        )
        reader = Reader(sessions, shared, self._kept, self._memory, self._cleaner, self.stats)
        self._drains = Drains(sessions, shared, self._kept, reader, self._carrier, self._cleaner)
        self._decisions = Decisions(
            sessions,
            shared,
            self._memory,
            self._kept,
            self._endings,
            self._cleaner,
            self._drains.kick,
            self.stats,
        )

    @property
    def on_migrated(self) -> Callable[[int, int], Awaitable[None]] | None:
        """A group became a supergroup (old id, new id): moves the chat's data and
        rows (then calls :meth:`chat_moved`). Set by the game service."""
        return self._carrier.on_migrated

    @on_migrated.setter
    def on_migrated(self, callback: Callable[[int, int], Awaitable[None]] | None) -> None:
        self._carrier.on_migrated = callback

    @property
    def on_topic_gone(self) -> Callable[[int, int], Awaitable[None]] | None:
        """A forum topic refuses the bot (closed or deleted): (chat id, thread id)."""
        return self._carrier.on_topic_gone

    @on_topic_gone.setter
    def on_topic_gone(self, callback: Callable[[int, int], Awaitable[None]] | None) -> None:
        self._carrier.on_topic_gone = callback

    # A move's side.

    def transaction(self) -> AbstractAsyncContextManager[AsyncSession]:
        """A transaction whose outbox rows are drained once it has committed."""
        return self._decisions.transaction()

    def after_commit(self, s: AsyncSession, callback: Callable[[], None]) -> None:
        """Call ``callback`` once this transaction (from :meth:`transaction`) has
        committed; never if it rolls back."""
        self._decisions.after_commit(s, callback)

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
        self._decisions.send(s, chat_id, text, markup, slot, thread)

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
        forum topic ``thread`` is where it is posted again should it be gone.) An
        edit equal to what the message is about to show is not stored; an older one
        still waiting is replaced."""
        self._decisions.edit(s, chat_id, text, markup, slot, message_id, thread)

    async def delete(
        self,
        s: AsyncSession,
        chat_id: int,
        *,
        slot: str | None = None,
        message_id: int | None = None,
    ) -> None:
        """Delete a message (named by ``slot`` or ``message_id``)."""
        self._decisions.delete(s, chat_id, slot, message_id)

    async def answer(
        self, s: AsyncSession, chat_id: int, query_id: str, text: str | None, alert: bool = False
    ) -> None:
        """A button press's answer, stored with the move it answers. The handler
        answers at once and then calls :meth:`answered`; a row left behind (killed in
        between, or the answer failed) is carried out by a drain, after a restart too,
        while Telegram still takes it. (One process only: with several, the ingress
        side answers.)"""
        self._decisions.answer(s, chat_id, query_id, text, alert)

    def answered(self, query_id: str, ok: bool) -> None:
        """The handler answered the press (``ok``) or could not: its stored answer is
        deleted with the next cleanup, or handed to the chat's drain."""
        self._decisions.answered(query_id, ok)

    def hold_kicks(self) -> AbstractContextManager[Hold]:
        """Hold the drains this context starts until the hold is released (a press's
        answer goes first: see :mod:`.holding`)."""
        return holding(self._drains.start_drain)

    # What the outbox knows of the chats' messages.

    def note_message(self, chat_id: int, message_id: int) -> None:
        """A message appeared in a chat (sent by the bot, or an update it received)."""
        self._memory.note_message(chat_id, message_id)

    def newest_message_id(self, chat_id: int) -> int | None:
        return self._memory.newest_message_id(chat_id)

    def newest_message_ids(self) -> dict[int, int]:
        return self._memory.newest_message_ids()

    async def forget_chat(self, s: AsyncSession, chat_id: int) -> None:
        """Forget what the chat's messages show (they may be stale): the next edit of
        each is sent even if it looks unchanged."""
        await self._memory.forget_chat(s, chat_id)

    def forget_game(self, game_id: str) -> None:
        """The game is over: what its messages show and which messages its slots name
        are forgotten once its last rows are out (else they would be kept for every
        game ever played, up to the caches' bounds). The cost, should one of them be
        edited again: an edit not skipped, a slot read from the database."""
        self._endings.game_over(game_id, self._kept.game_rows(game_id))

    async def chat_moved(self, old_id: int, new_id: int, game_ids: Any = ()) -> None:
        """After the commit of a chat's move (its rows now stored under ``new_id``):
        forget what was kept of the old chat, and drain the new one from the database."""
        self._endings.rows_gone(self._kept.drop_chat(old_id))
        self._kept.mark_read(old_id)
        for game_id in game_ids:
            self._memory.forget_slot(f"t:{game_id}")
        async with self.sessions.begin() as s:
            await self._memory.forget_chat(s, old_id)
        self._kept.mark_unread(new_id)
        self.kick(new_id)

    # The drains.

    def kick(self, chat_id: int) -> None:
        """Make sure the chat's waiting rows are being carried out."""
        self._drains.kick(chat_id)

    async def start(self) -> int:
        """After a (re)start: drain what an earlier run decided and did not send."""
        return await self._drains.start()

    async def run_poll(self, interval: float = 1.0) -> None:
        """Forever: drain chats whose rows nobody is carrying out (decided by another
        process, or left by one that died or by a drain that failed)."""
        await self._drains.run_poll(interval)

    def _busy(self, private_only: bool) -> list[asyncio.Task[None]]:
        tasks = self._drains.busy(private_only)
        cleaning = self._cleaner.running()
        if cleaning is not None:
            tasks.append(cleaning)
        return tasks

    def pending(self, private_only: bool = False) -> int:
        """Chats whose messages are still being carried out (``private_only``: of people),
        and the deletion of rows carried out, while it is being written."""
        return len(self._busy(private_only))

    async def idle(self, private_only: bool = False) -> None:
        """Until every decided message is out (or, ``private_only``, those to people)."""
        while tasks := self._busy(private_only):
            await asyncio.gather(*tasks, return_exceptions=True)

    async def write_deletions(self) -> None:
        """Write the deletion of every row carried out now, not when the cleanup's
        timer fires (a graceful stop; a test reading what is left)."""
        await self._cleaner.write_deletions()

    async def close(self, timeout: float = 10.0) -> None:
        """A graceful stop: give the drains ``timeout`` seconds, then stop them (what is
        left stays stored for the next start)."""
        await self._drains.stop(timeout, self._calls.stop_pacing)
        await self._cleaner.write_deletions()
        await self._drains.close_locks()

    def sizes(self) -> dict[str, int]:
        """How many entries each of the parts' structures holds (per chat, per game,
        per row: see benchmarks/memory.py)."""
        return {
            **self._memory.sizes(),
            **self._kept.sizes(),
            **self._endings.sizes(),
            **self._cleaner.sizes(),
            **self._drains.sizes(),
            "stats": len(self.stats),
        }
