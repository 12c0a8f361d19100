"""The live bus: "game G is now at move M", from whoever committed the move to every
open page of that game.

A notice carries no cards, only the game id and its move number: each listener then
builds its own seat's view, so nothing hidden crosses the bus. A listener that falls
behind loses nothing that matters: notices of one game are coalesced to the newest
move (a page shows the latest state, and catches up from its last move number).

:class:`LocalBus` serves one process (asyncio, in memory). Several workers need the
same interface over PostgreSQL's LISTEN/NOTIFY (a ``NOTIFY hokm_moves, 'G:M'`` in the
move's transaction, one LISTEN connection per web server feeding a LocalBus): see
:class:`LiveBus` for what it has to provide.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

__all__ = ["LiveBus", "LocalBus", "Subscription"]


class Subscription:
    """One listener on one game: the newest move number announced since it last
    looked. Use as an async context manager (it unsubscribes on exit)."""

    __slots__ = ("_bus", "_changed", "_closed", "_seen", "game_id", "latest")

    def __init__(self, bus: LocalBus, game_id: str) -> None:
        self._bus = bus
        self.game_id = game_id
        #: The newest move announced, or -1 before any.
        self.latest = -1
        self._seen = -1
        self._changed = asyncio.Event()
        self._closed = False

    def _notify(self, move: int) -> None:
        if move > self.latest:
            self.latest = move
            self._changed.set()

    async def next(self, timeout: float | None = None) -> int | None:
        """The newest move announced after the last one returned; None on timeout
        or once closed."""
        while not self._closed:
            if self.latest > self._seen:
                self._seen = self.latest
                self._changed.clear()
                return self._seen
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except TimeoutError:
                return None
        return None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._changed.set()
            self._bus._remove(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def __aiter__(self) -> AsyncIterator[int]:
        while (move := await self.next()) is not None:
            yield move


@runtime_checkable
class LiveBus(Protocol):
    """What the web adapter needs of a live bus."""

    def publish(self, game_id: str, move: int) -> None:
        """Announce that ``game_id`` is now at ``move`` (after the move is committed)."""

    def subscribe(self, game_id: str) -> Subscription:
        """Start listening to ``game_id``; close the subscription when done."""


class LocalBus:
    """The live bus of one process."""

    def __init__(self) -> None:
        self._subs: dict[str, set[Subscription]] = {}
        #: Notices published so far (a statistic).
        self.published = 0

    def publish(self, game_id: str, move: int) -> None:
        self.published += 1
        for sub in tuple(self._subs.get(game_id, ())):
            sub._notify(move)

    def subscribe(self, game_id: str) -> Subscription:
        sub = Subscription(self, game_id)
        self._subs.setdefault(game_id, set()).add(sub)
        return sub

    def listeners(self, game_id: str | None = None) -> int:
        """How many subscriptions are open (on one game, or on all)."""
        if game_id is not None:
            return len(self._subs.get(game_id, ()))
        return sum(map(len, self._subs.values()))

    def _remove(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.game_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.game_id]
