"""Periodic work over the games table: idle games end, waiting turns are pinged.

Every few seconds (HOKM_SWEEP_SECONDS) one query finds the games that may need
something, then each is claimed in its own transaction: ``SELECT … FOR UPDATE SKIP
LOCKED`` on PostgreSQL, so with several bot processes each game is handled by one of
them and a game busy with a move is left for the next sweep; SQLite has one writer
anyway. What was done is stored in the game row (the status, a seat's ``pinged``
move) in the same transaction as its messages, so it happens once, across restarts.

- Idle end: a lobby or match with no action (``games.updated_at``) for the idle time
  (HOKM_IDLE_HOURS, default 24) ends as abandoned, whether or not a turn timer runs,
  which frees its group and its players.
- Turn pings: see :mod:`telegram_bot.service.pings`.

Not folded into the game clock (:mod:`telegram_bot.service.clock`), which also polls the
games table: the clock takes over run-out turns every second and waits for a busy
game's lock (the turn must happen), while this pass runs every few seconds, skips
locked games, and is stepped with its own ``now`` by the tests.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from core import Match
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import (
    ACTIVE_GAME_PREDICATE,
    ACTIVE_STATUSES,
    PLAYING,
    Game,
    utcnow,
)
from telegram_bot.service import pings
from telegram_bot.service.games import GameService

__all__ = ["Sweeper", "claim"]

log = logging.getLogger(__name__)

#: Games looked at per sweep and kind (the rest wait for the next sweep).
BATCH = 200


async def claim(s: AsyncSession, game_id: str) -> Game | None:
    """The game, locked for this transaction; None if another process holds it."""
    return await repo.get_game(s, game_id, lock="skip")


class Sweeper:
    def __init__(
        self, svc: GameService, *, idle_hours: float = 24.0, interval: float = 5.0
    ) -> None:
        self.svc = svc
        self.idle_hours = idle_hours
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        #: What the sweeps did so far (ended, pinged).
        self.stats: Counter[str] = Counter()

    # ------------------------------------------------------------------ running

    def start(self) -> None:
        if self.interval > 0 and self._task is None:
            self._task = asyncio.create_task(self._run(), name="sweeper")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be away for a moment; try again later
                log.exception("sweep failed")

    async def sweep(self, now: datetime | None = None) -> Counter[str]:
        """One pass: end idle games, then ping waiting turns (as of ``now``)."""
        now = now or utcnow()
        done: Counter[str] = Counter()
        if self.idle_hours > 0:
            cutoff = now - timedelta(hours=self.idle_hours)
            for game_id in await self._ids(Game.updated_at <= cutoff, text(ACTIVE_GAME_PREDICATE)):
                if await self._end_idle(game_id, cutoff):
                    done["ended"] += 1
        shortest = min(p for p in pings.PING_CHOICES if p > 0)
        waited = now - timedelta(seconds=shortest)
        # The active-games predicate lets the database read only the partial index of
        # active games: without it, this query scanned every game ever finished, every
        # few seconds (and SQLite kept the pages read in each pooled connection's cache).
        playing = (text(ACTIVE_GAME_PREDICATE), Game.status == PLAYING)
        for game_id in await self._ids(Game.updated_at <= waited, *playing):
            if await self._ping(game_id, now):
                done["pinged"] += 1
        self.stats.update(done)
        return done

    async def _ids(self, *where: Any) -> list[str]:
        async with self.svc.sessions() as s:
            query = select(Game.id).where(*where).order_by(Game.updated_at).limit(BATCH)
            rows = await s.scalars(query)
            return list(rows.all())

    # ------------------------------------------------------------------- work

    async def _end_idle(self, game_id: str, cutoff: datetime) -> bool:
        svc = self.svc
        async with svc.locks[game_id]:
            async with svc.outbox.transaction() as s:
                game = await claim(s, game_id)
                if game is None or game.status not in ACTIVE_STATUSES:
                    return False
                if game.updated_at > cutoff:  # a move came in meanwhile
                    return False
                await svc.exits.abandon(s, game, "idle", hours=self.idle_hours)
        svc.exits.released(game)
        log.info("game %s ended after %s h without a move", game_id, self.idle_hours)
        return True

    async def _ping(self, game_id: str, now: datetime) -> bool:
        svc = self.svc
        async with svc.locks[game_id]:
            async with svc.outbox.transaction() as s:
                game = await claim(s, game_id)
                if game is None or game.status != PLAYING or game.state is None:
                    return False
                match = Match.from_json(game.state)
                seat = pings.due(game, match, now)
                if seat is None:
                    return False
                await pings.ping(svc.views, svc.translators, s, game, match, seat)
        return True
