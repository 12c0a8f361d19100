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
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from telegram import Bot

from telegram_bot.platform.chatlocks import ChatLocks
from telegram_bot.platform.outbox.cleanup import Cleanup
from telegram_bot.platform.outbox.deciding import Deciding
from telegram_bot.platform.outbox.draining import Draining
from telegram_bot.platform.outbox.holding import Hold, holding
from telegram_bot.platform.outbox.rows import _CALLS_AT_ONCE, _Batch, _Lru, _Row
from telegram_bot.platform.storage import pgdirect

__all__ = ["Outbox"]


class Outbox(Deciding, Draining, Cleanup):
    """See the module's documentation. With ``shared`` (several processes on one
    PostgreSQL database) one process at a time drains a chat, under the chat's
    advisory lock, and what each message shows is kept in the database."""

    def hold_kicks(self) -> AbstractContextManager[Hold]:
        """Hold the drains this context starts until the hold is released (a press's
        answer goes first: see :mod:`.holding`)."""
        return holding(self._start_drain)

    def __init__(
        self, bot: Bot, sessions: async_sessionmaker[AsyncSession], *, shared: bool = False
    ) -> None:
        self.bot = bot
        self.sessions = sessions
        # Its engine when on asyncpg: cleanups and binds then go as single statements.
        bind = sessions.kw.get("bind")
        self._asyncpg: AsyncEngine | None = bind if pgdirect.is_asyncpg_engine(bind) else None
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
        # The newest message id seen per chat (see telegram_bot.service.reposts).
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
        #: A group became a supergroup (old id, new id): moves the chat's data and
        #: rows (then calls :meth:`chat_moved`). Set by the game service.
        self.on_migrated: Callable[[int, int], Awaitable[None]] | None = None
        #: A forum topic refuses the bot (closed or deleted): (chat id, thread id).
        self.on_topic_gone: Callable[[int, int], Awaitable[None]] | None = None
        # Stored answers of presses the handlers are answering: query id -> row.
        self._answers: dict[str, _Row] = {}
