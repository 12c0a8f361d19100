"""A dead worker's turns are taken over at once, not after their clock (telegram_bot.service.clock,
PostgreSQL): each worker holds a liveness lock, and a game row names the worker whose
clock its turn is on.

Two services on one database stand for two workers. Worker A leases the computers' move
of a game (as while they think: the lease runs for many seconds) and dies; worker B's
next sweep takes the move over at once, its lease notwithstanding. While A lives, B
leaves the leased move alone, and a person's timer of a dead worker waits for its time.
A timer B armed for an earlier move of the game does not keep B off it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from types import SimpleNamespace

from core import Match
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage import create_engine, migrate, repo
from telegram_bot.platform.storage.db import session_factory
from telegram_bot.platform.storage.models import utcnow
from telegram_bot.service.config import ServiceConfig
from telegram_bot.service.games import GameService
from telegram_bot.service.lobby import variant_of
from tests.dbutil import fresh_database_url

GROUP = -100555
PERSON = 501


def _worker(sessions) -> GameService:
    config = ServiceConfig(computer_delay=0.0, hand_pause=0.0, think_seconds=0.05, deal_seed=3)
    return GameService(sessions, Outbox(None, sessions, shared=True), config)  # type: ignore[arg-type]


async def _game(sessions, seats, **clock) -> tuple[str, int]:
    """A game in progress with these seats and this clock; (id, move)."""
    settings = {"players": 4, "target": 1, "level": "easy"}
    match = Match(variant_of(settings), seed=3)
    match.start()
    async with sessions.begin() as s:
        await repo.get_or_create_user(s, PERSON, "P")
        await repo.get_or_create_chat(s, GROUP, "supergroup", "G")
        game = await repo.create_game(s, GROUP, PERSON, seats, settings, status="playing")
        game.state = match.to_json()
        for name, value in clock.items():
            setattr(game, name, value)
        await repo.save_game(s, game, game.move)
    return game.id, game.move


async def _settle(worker: GameService) -> None:
    await worker.background.wait()


@asynccontextmanager
async def _two_workers(tmp_path) -> AsyncIterator[tuple]:
    """A fresh PostgreSQL database and two services on it, A and B; (sessions, A, B).
    What they still have running at the end is cancelled."""
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        engine = create_engine(url)
        sessions = session_factory(engine)
        a, b = _worker(sessions), _worker(sessions)
        try:
            yield sessions, a, b
        finally:
            for w in (a, b):
                await w.background.cancel()
                await w.outbox.close(timeout=0)
                await w.shutdown()
            await engine.dispose()


async def test_a_dead_workers_leased_computers_are_taken_over_at_once(tmp_path):
    async with _two_workers(tmp_path) as (sessions, a, b):
        assert a.worker is not None and b.worker is not None and a.worker != b.worker
        await a.liveness.connection()  # A is alive
        lease = utcnow() + timedelta(minutes=5)  # A's computers are thinking
        bots = [{"bot": "easy"} for _ in range(4)]
        game_id, move = await _game(sessions, bots, due_at=lease, clock_worker=a.worker)

        # A lives: its lease holds, and the move is not late.
        assert await b.sweep() == 0
        # B once armed a timer in this game, for a move since played on: it must
        # not make B believe it has the game in hand.
        b.clock.schedule_timer(
            SimpleNamespace(id=game_id, move=move - 1, deadline=lease)  # type: ignore[arg-type]
        )

        await a.liveness.close()  # A dies: PostgreSQL drops its lock
        assert await b.sweep() == 1
        await _settle(b)
        async with sessions() as s:
            game = await repo.get_game(s, game_id)
        assert game.move > move, "the dead worker's computers never moved"
        # B leased the move (and armed the next turn's clock): it is B's now.
        assert game.clock_worker == b.worker


async def test_a_dead_workers_timer_fires_at_its_time_not_before(tmp_path):
    async with _two_workers(tmp_path) as (sessions, a, b):
        await a.liveness.connection()
        seats = [{"user_id": PERSON, "name": "P"}] + [{"bot": "easy"} for _ in range(3)]
        later = utcnow() + timedelta(minutes=5)
        game_id, _ = await _game(sessions, seats, deadline=later, clock_worker=a.worker)
        await a.liveness.close()
        # Dead, but its person still has time: nobody fires the timer early.
        assert await b.sweep() == 0
        async with sessions.begin() as s:
            game = await repo.get_game(s, game_id, lock=True)
            game.deadline = utcnow() - timedelta(seconds=0.1)
            await repo.save_game(s, game, game.move)
        # Run out (by far less than the grace a live worker gets): taken over.
        assert await b.sweep() == 1
