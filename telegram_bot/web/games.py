"""What the web routes need of the games, as one small interface.

:class:`WebGames` is all the routes call: a seat's view of a game for a user, an
action applied for a user, and a subscription to a game's moves. The service plugs
in by implementing it (its ``act`` is the same path as a chat press: move-number
check, one transaction, the outbox; and after commit it publishes the move on the
live bus, whatever made the move). Two implementations live here:

- :class:`MemoryGames`: matches held in memory (tests, the browser tests, a demo);
- :class:`StoredGames`: views read from the games' rows (``repo.get_game``), with
  ``act`` handed to a callable the service provides.

Every refusal is a :class:`WebError` with an HTTP status and a stable ``code``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.actions import Action
from core.errors import IllegalAction
from core.match import Match
from telegram_bot.chat.i18n import user_language
from telegram_bot.platform.live import LiveBus, LocalBus, Subscription
from telegram_bot.platform.storage import repo
from telegram_bot.service.answer import Refused
from telegram_bot.web.initdata import WebAppUser
from telegram_bot.web.view import SeatInfo, view_of_match

__all__ = [
    "MemoryGames",
    "StoredGames",
    "WebError",
    "WebGames",
    "seat_of",
    "seats_of_game",
    "service_actor",
]


class WebError(Exception):
    """A refusal the API returns as ``{"error": code, ...}`` with ``status``."""

    def __init__(self, status: int, code: str, **info: Any) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.info = info


def not_found() -> WebError:
    return WebError(404, "no_such_game")


def not_seated() -> WebError:
    return WebError(403, "not_seated")


#: Seconds a page waits before it asks again when the database is busy.
BUSY_RETRY = 1.0


def busy() -> WebError:
    """The database's connections were all in use for the pool's whole wait: a 503 the
    page asks again after (``Retry-After``), not a 500."""
    return WebError(503, "busy", retry_after=BUSY_RETRY)


@contextmanager
def _pool_busy() -> Iterator[None]:
    try:
        yield
    except PoolTimeout:
        raise busy() from None


class WebGames(Protocol):
    """The games as the page sees them. Every method acts for ``user`` (from a valid
    ``initData``) and raises :class:`WebError` when refused."""

    async def view(self, game_id: str, user: WebAppUser) -> dict[str, Any]:
        """The user's seat's view (:func:`telegram_bot.web.view.seat_view`).
        404 ``no_such_game``; 403 ``not_seated`` (anyone not seated at it)."""

    async def act(
        self, game_id: str, user: WebAppUser, move: int, action: Action
    ) -> dict[str, Any]:
        """Apply ``action`` for the user's seat if the game is at ``move``, then
        return the new view. 409 ``stale_move`` (with ``move``: the current one),
        409 ``not_playing``, 422 with core's :class:`~core.ErrorCode` as the code."""

    def subscribe(self, game_id: str) -> Subscription:
        """Listen to the game's moves (the live bus)."""

    async def page_closed(self, game_id: str, user: WebAppUser) -> None:
        """The user's last event stream on the game (in this process) closed."""

    async def language(self, user: WebAppUser) -> str:
        """The language the user reads the bot in (``fa`` or ``en``)."""

    async def deck(self, user: WebAppUser) -> str | None:
        """The deck style the user chose (:data:`telegram_bot.web.cards.DECKS`), or None."""

    async def set_deck(self, user: WebAppUser, deck: str | None) -> None:
        """Keep the user's deck style (checked by the caller; None: the default)."""


def seat_of(user_ids: Sequence[int | None], match: Match, user_id: int) -> int | None:
    """The seat of ``user_id``; ``user_ids`` by join order (``match.order[seat]``)."""
    for seat in range(match.n):
        if user_ids[match.order[seat]] == user_id:
            return seat
    return None


def seats_of_game(seats: Sequence[dict[str, Any]], match: Match) -> list[SeatInfo]:
    """The game row's seat dicts (by join order) as the view's seats (by seat)."""
    out = []
    for seat in range(match.n):
        info = seats[match.order[seat]]
        out.append(
            SeatInfo(
                name=str(info.get("name") or ""),
                bot=bool(info.get("bot")),
                away=bool(info.get("away")),
            )
        )
    return out


# --------------------------------------------------------------------------- memory


@dataclass
class MemoryGame:
    match: Match
    #: Seat dicts by join order, as in the game row: ``{"user_id", "name", "bot"}``.
    seats: list[dict[str, Any]]
    move: int = 0
    deadline: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class MemoryGames:
    """Games held in memory: the routes' reference implementation."""

    def __init__(self, bus: LiveBus | None = None) -> None:
        self.bus: LiveBus = bus if bus is not None else LocalBus()
        self.games: dict[str, MemoryGame] = {}
        #: Every accepted action, as (game id, seat, action): for tests.
        self.log: list[tuple[str, int, Action]] = []
        self.decks: dict[int, str] = {}
        #: Pages closed, as (game id, user id): for tests.
        self.closed: list[tuple[str, int]] = []

    def add(
        self, game_id: str, match: Match, seats: Sequence[dict[str, Any]], move: int = 0
    ) -> MemoryGame:
        game = MemoryGame(match, [dict(s) for s in seats], move)
        self.games[game_id] = game
        return game

    def _seated(self, game_id: str, user: WebAppUser) -> tuple[MemoryGame, int]:
        game = self.games.get(game_id)
        if game is None:
            raise not_found()
        ids = [s.get("user_id") for s in game.seats]
        seat = seat_of(ids, game.match, user.id)
        if seat is None:
            raise not_seated()
        return game, seat

    def _view(self, game_id: str, game: MemoryGame, seat: int) -> dict[str, Any]:
        return view_of_match(
            game.match,
            seat,
            game_id=game_id,
            move=game.move,
            seats=seats_of_game(game.seats, game.match),
            deadline=game.deadline,
        )

    async def view(self, game_id: str, user: WebAppUser) -> dict[str, Any]:
        game, seat = self._seated(game_id, user)
        return self._view(game_id, game, seat)

    async def act(
        self, game_id: str, user: WebAppUser, move: int, action: Action
    ) -> dict[str, Any]:
        game, seat = self._seated(game_id, user)
        async with game.lock:
            if game.match.is_over:
                raise WebError(409, "not_playing")
            if move != game.move:
                raise WebError(409, "stale_move", move=game.move)
            try:
                game.match.apply(seat, action)
            except IllegalAction as exc:
                raise WebError(422, str(exc.code)) from None
            game.move += 1
            self.log.append((game_id, seat, action))
        self.bus.publish(game_id, game.move)
        return self._view(game_id, game, seat)

    async def apply_for_seat(self, game_id: str, seat: int, action: Action) -> None:
        """A move made elsewhere (a chat press, a computer, a timer): published too."""
        game = self.games[game_id]
        async with game.lock:
            game.match.apply(seat, action)
            game.move += 1
            self.log.append((game_id, seat, action))
        self.bus.publish(game_id, game.move)

    def subscribe(self, game_id: str) -> Subscription:
        return self.bus.subscribe(game_id)

    async def page_closed(self, game_id: str, user: WebAppUser) -> None:
        self.closed.append((game_id, user.id))

    async def language(self, user: WebAppUser) -> str:
        return user_language(None, user.language_code)

    async def deck(self, user: WebAppUser) -> str | None:
        return self.decks.get(user.id)

    async def set_deck(self, user: WebAppUser, deck: str | None) -> None:
        if deck is None:
            self.decks.pop(user.id, None)
        else:
            self.decks[user.id] = deck


# --------------------------------------------------------------------------- storage

#: The service's action path: (game id, user id, move, action) -> None, raising
#: :class:`WebError` when refused. It publishes the move on the bus after commit.
Actor = Callable[[str, int, int, Action], Awaitable[None]]


#: The service's news that a user's page of a game closed: (game id, user id) -> None.
PageClosed = Callable[[str, int], Awaitable[None]]

#: A refusal's HTTP status by its code (anything else is core's: 422).
_STATUS = {"no_such_game": 404, "not_seated": 403, "not_playing": 409, "stale_move": 409}


def service_actor(web_act: Callable[[str, int, int, Action], Awaitable[None]]) -> Actor:
    """The service's move for the page (``GameService.web_act``: the same path as a
    chat press) as an :data:`Actor`, its refusals as :class:`WebError`."""

    async def actor(game_id: str, user_id: int, move: int, action: Action) -> None:
        try:
            await web_act(game_id, user_id, move, action)
        except Refused as exc:
            raise WebError(_STATUS.get(exc.code, 422), exc.code, **exc.info) from None

    return actor


class StoredGames:
    """Views read from the games' rows; actions handed to the service's ``actor``."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        bus: LiveBus,
        actor: Actor,
        closed: PageClosed | None = None,
    ) -> None:
        self.sessions = sessions
        self.bus = bus
        self.actor = actor
        self._closed = closed

    async def view(self, game_id: str, user: WebAppUser) -> dict[str, Any]:
        with _pool_busy():
            async with self.sessions() as s:
                game = await repo.get_game(s, game_id)
        if game is None or game.state is None:
            raise not_found()
        match = Match.from_json(game.state)
        ids = [seat.get("user_id") for seat in game.seats]
        seat = seat_of(ids, match, user.id)
        if seat is None:
            raise not_seated()
        return view_of_match(
            match,
            seat,
            game_id=game.id,
            move=game.move,
            seats=seats_of_game(game.seats, match),
            deadline=game.deadline.timestamp() if game.deadline is not None else None,
        )

    async def act(
        self, game_id: str, user: WebAppUser, move: int, action: Action
    ) -> dict[str, Any]:
        # A move not stored for want of a connection is a 503 (the page asks again;
        # one stored meanwhile makes that a 409, and the page reloads).
        with _pool_busy():
            await self.actor(game_id, user.id, move, action)
        return await self.view(game_id, user)

    def subscribe(self, game_id: str) -> Subscription:
        return self.bus.subscribe(game_id)

    async def page_closed(self, game_id: str, user: WebAppUser) -> None:
        if self._closed is not None:
            await self._closed(game_id, user.id)

    async def language(self, user: WebAppUser) -> str:
        with _pool_busy():
            async with self.sessions() as s:
                known = await repo.get_user(s, user.id)
        return user_language(known.language if known else None, user.language_code)

    async def deck(self, user: WebAppUser) -> str | None:
        with _pool_busy():
            async with self.sessions() as s:
                return await repo.get_user_deck(s, user.id)

    async def set_deck(self, user: WebAppUser, deck: str | None) -> None:
        with _pool_busy():
            async with self.sessions() as s, s.begin():
                if not await repo.set_user_deck(s, user.id, deck):
                    # Not seen in the chat yet: known from initData from now on.
                    await repo.get_or_create_user(
                        s, user.id, user.first_name, user.username, user.language_code
                    )
                    await repo.set_user_deck(s, user.id, deck)
