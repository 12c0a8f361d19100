"""What every part of :class:`~telegram_bot.service.games.GameService` shares.

The service is composed of mixins (lobby, moves, clock, views, recovery), each in
its own module; they all work on the state set up here: the per-game locks, the
timers and computer players this process holds, and its background tasks. The
press's answer and the service's configuration live here too, so the parts can
import them without importing each other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core import Match
from telegram_bot.platform.locks import KeyedLocks
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage.models import Game
from telegram_bot.platform.thinking import Thinkers
from telegram_bot.service.languages import Languages

# The service's logger name from before it was split, so log filters still match.
log = logging.getLogger("telegram_bot.service.games")


@dataclass
class Answer:
    """What to tell the user who pressed a button (a toast, or an alert)."""

    text: str | None = None
    alert: bool = False
    url: str | None = None


@dataclass
class ServiceConfig:
    bot_username: str = "HokmBot"
    #: Pause before computer players move, so people can follow the table.
    computer_delay: float = 1.0
    #: Extra pause after a hand ends.
    hand_pause: float = 2.0
    #: Per-move thinking budget for the hard computer player.
    think_seconds: float = 1.0
    #: Tests and demos only: seed the deals (match ``k`` started uses ``deal_seed + k``)
    #: so a scenario is reproducible. Live tables leave it None: secure shuffles.
    deal_seed: int | None = None


class ServiceBase:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        outbox: Outbox,
        config: ServiceConfig | None = None,
        scheduler: Callable[[str, float, Callable[[], Any]], None] | None = None,
        unscheduler: Callable[[str], None] | None = None,
        thinkers: Thinkers | None = None,
    ) -> None:
        self.sessions = sessions
        #: Where searching computer players think (None: in a thread of this process).
        self.thinkers = thinkers
        self.outbox = outbox
        self.config = config or ServiceConfig()
        # Per-game state lives only while a game needs it: a lock while held or
        # awaited, computer players and a timer while the match runs.
        self._locks = KeyedLocks()
        # Per process, unless workers share the database (telegram_bot.service.languages).
        self.languages = Languages(sessions, remember=not outbox.shared)
        self._chat_langs: dict[int, str] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        #: The move each of those timers is for.
        self._timer_moves: dict[str, int] = {}
        self._players: dict[tuple[str, int], Any] = {}
        self._taking: set[str] = set()
        #: Several workers on PostgreSQL: this one's number and liveness lock (see
        #: telegram_bot.service.clock); None for one process.
        self.liveness: Any = None
        engine = sessions.kw.get("bind")
        if outbox.shared and engine is not None and engine.dialect.name == "postgresql":
            from telegram_bot.service.clock import Liveness

            self.liveness = Liveness(engine)
        self._loops: list[asyncio.Task[None]] = []
        #: game in progress -> (move, hand number) as last seen stored; see _known_stale.
        self._progress: dict[str, tuple[int, int]] = {}
        self._matches_started = 0

    @property
    def worker(self) -> int | None:
        """This worker's number in the game rows (None: one process)."""
        return None if self.liveness is None else self.liveness.number

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())


def _seat_of(game: Game, match: Match, user_id: int) -> int | None:
    for seat in range(match.n):
        if game.seats[match.order[seat]].get("user_id") == user_id:
            return seat
    return None
