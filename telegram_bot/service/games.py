"""The games of every chat: one façade over the service's parts.

One asyncio lock per game serializes its updates; the database is the truth. An
accepted action is committed (with the new move number) before anything is sent,
so a crash at any moment loses nothing: :meth:`GameService.resume_all` re-renders
every game in progress and re-arms its timer.

:class:`GameService` builds the parts, each owning its state and given what it needs:

- :class:`~.languages.Translators`: each user's and chat's translator;
- :class:`~.views.Views`: what each move shows, written into the outbox;
- :class:`~.clock.Clock`: turn timers, computer turns, takeover of a dead process's turns;
- :class:`~.lobby.Lobby`: /newgame, seats, settings, start and cancel;
- :class:`~.table.Table`: a person's press applied and stored, away and back;
- :class:`~.exits.Exits`: end, leave, take a seat over, /quit, the idle end;
- :class:`~.rematch.Rematch`, :class:`~.review.Review`, :class:`~.hints.Hints`;
- :class:`~.recovery.Recovery`: resume after a restart, a returning player, draining
  and shutdown.

The handlers and the runtime call the names it takes from the parts (``act``,
``lobby_action``, ``user_tr``, …), or a part's public methods.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.live import LiveBus
from telegram_bot.platform.locks import KeyedLocks
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.platform.thinking import Thinkers
from telegram_bot.service.clock import Clock, Liveness
from telegram_bot.service.config import ServiceConfig
from telegram_bot.service.exits import Exits
from telegram_bot.service.hints import Hints
from telegram_bot.service.languages import Languages, Translators
from telegram_bot.service.lobby import Lobby
from telegram_bot.service.moves import Moves
from telegram_bot.service.online_seats import FanOut
from telegram_bot.service.online_tables import OnlineTables
from telegram_bot.service.progress import Progress
from telegram_bot.service.recovery import Recovery
from telegram_bot.service.rematch import Rematch
from telegram_bot.service.review import Review
from telegram_bot.service.shared import Shared
from telegram_bot.service.table import Table
from telegram_bot.service.tasks import Background
from telegram_bot.service.views import Views

__all__ = ["GameService"]


class GameService:
    """Every game change of this process (the parts are listed in the module's docstring)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        outbox: Outbox,
        config: ServiceConfig | None = None,
        thinkers: Thinkers | None = None,
        live: LiveBus | None = None,
    ) -> None:
        self.sessions = sessions
        self.outbox = outbox
        self.config = config or ServiceConfig()
        self.translators = Translators(sessions, shared=outbox.shared)
        #: One lock per game, held while it changes.
        self.locks = KeyedLocks()
        self.background = Background()
        # An online table's chat is its people's private chats (see .online_seats).
        fan_out = FanOut(outbox, self.translators)
        self._shared = shared = Shared(
            sessions,
            fan_out,
            self.config,
            self.locks,
            self.background,
            self.translators,
            thinkers,
            live,
        )
        #: Several workers on PostgreSQL: this one's number and liveness lock (see
        #: telegram_bot.service.clock); None for one process.
        self.liveness: Liveness | None = None
        engine = sessions.kw.get("bind")
        if outbox.shared and engine is not None and engine.dialect.name == "postgresql":
            self.liveness = Liveness(engine)
        self._progress = progress = Progress()
        self.views = Views(fan_out, self.translators, self.config)
        self.clock = Clock(shared, views=self.views, progress=progress, liveness=self.liveness)
        self.lobby = Lobby(shared, views=self.views, clock=self.clock)
        self.table = Table(shared, views=self.views, clock=self.clock, progress=progress)
        self.exits = Exits(
            shared, views=self.views, clock=self.clock, progress=progress, lobby=self.lobby
        )
        self.rematch = Rematch(shared, lobby=self.lobby)
        self.review = Review(shared)
        self.hints = Hints(shared)
        self.recovery = Recovery(shared, views=self.views, clock=self.clock)
        self.moves = Moves(shared, exits=self.exits)
        # A group that became a supergroup, a forum topic closed: seen by the outbox.
        outbox.on_migrated = self.moves.migrate
        outbox.on_topic_gone = self.moves.topic_gone
        self.online = OnlineTables(shared, lobby=self.lobby, fan_out=fan_out)

        # What the handlers, the runtime and the tests call, from the parts.
        self.open_lobby = self.lobby.open
        self.lobby_action = self.lobby.action
        self.act = self.table.act
        #: The Mini App's move (raises :class:`~.answer.Refused`).
        self.web_act = self.table.play
        #: The Mini App's page closed for a person: their chat brought up to date.
        self.page_closed = self.table.page_closed
        self.set_away = self.table.set_away
        self.show_selection = self.views.show_selection
        self.player_returns = self.recovery.player_returns
        self.resume_all = self.recovery.resume_all
        self.pending_work = self.recovery.pending_work
        self.idle = self.recovery.idle
        self.shutdown = self.recovery.shutdown
        #: The takeover clock and the outbox's poll, until shutdown (which also gives
        #: up this worker's liveness lock: the others take its turns over).
        self.start_clock = self.clock.start
        #: One pass of the clock: take over the turns nobody is on.
        self.sweep = self.clock.sweep
        self.user_lang = self.translators.user_lang
        self.user_tr = self.translators.user
        self.chat_tr = self.translators.chat
        self.forget_lang = self.translators.forget_user
        #: The chat's language was changed (by this process).
        self.forget_chat_lang = self.translators.forget_chat

    @property
    def thinkers(self) -> Thinkers | None:
        """Where searching computer players think (None: in a thread of this process)."""
        return self._shared.thinkers

    @thinkers.setter
    def thinkers(self, thinkers: Thinkers | None) -> None:
        """Every part thinks there from now on (tests swap in a gated pool)."""
        self._shared.thinkers = thinkers

    @property
    def languages(self) -> Languages:
        """The users' languages (see :mod:`telegram_bot.service.languages`)."""
        return self.translators.languages

    @property
    def worker(self) -> int | None:
        """This worker's number in the game rows (None: one process)."""
        return self.clock.worker

    def sizes(self) -> dict[str, int]:
        """How many entries each per-game, per-chat or per-user structure holds."""
        return {
            "locks": len(self.locks),
            "background": len(self.background),
            "progress": len(self._progress),
            **self.clock.sizes(),
            **self.translators.sizes(),
        }

    # --------------------------------------------------------------- queries

    async def active_game(self, chat_id: int, thread_id: int | None = None) -> Game | None:
        """The game open in the chat's forum topic ``thread_id`` (None: no topic)."""
        async with self.sessions() as s:
            return await repo.get_active_game(s, chat_id, thread_id)

    async def game_for_user(self, user_id: int) -> Game | None:
        async with self.sessions() as s:
            return await repo.find_active_game_for_user(s, user_id)
