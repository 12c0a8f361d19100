"""Lobby queries against a games table holding many finished matches.

    python -m benchmarks.lobby_queries [--finished 10000] [--db sqlite|postgresql://...]

Times repo.get_active_game, find_active_game_for_user and list_active_games, and the
same three with the bound ``status IN (?, ?)`` they used before, in the same run.
SQLite only for the "before" forms of find_active_game_for_user (json_each).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import select, text

from telegram_bot.platform.storage import ACTIVE_STATUSES, Game, create_engine, migrate, repo
from telegram_bot.platform.storage.db import session_factory

from . import procstat
from .botprocess import fresh_database

CHATS = 50


def _finished_state() -> str:
    """A whole 7-point match as the games table keeps it (a few KB of JSON)."""
    from core import Match, Variant
    from core.players import make_player

    match = Match(Variant(players=4, target=7), seed=3)
    match.start()
    players = [make_player("random", seed=i) for i in range(4)]
    while not match.is_over:
        seat = match.turn
        match.apply(seat, players[seat].act(match.view(seat)))
    return match.to_json()


async def _fill(sessions, finished: int) -> None:
    state = _finished_state()
    async with sessions.begin() as s:
        for c in range(CHATS):
            await repo.get_or_create_chat(s, -c - 1, "supergroup", f"g{c}")
    per = 500
    for start in range(0, finished, per):
        async with sessions.begin() as s:
            for i in range(start, min(finished, start + per)):
                seats = [{"user_id": 1000 + i % 400, "name": "x"}]
                game = await repo.create_game(s, -(i % CHATS) - 1, 1, seats, status="finished")
                game.state = state
                await repo.save_game(s, game, game.move)
    async with sessions.begin() as s:
        for c in range(CHATS):
            await repo.create_game(s, -c - 1, 1, [{"user_id": 5000 + c, "name": "y"}])


async def _old_active(s, chat_id: int) -> Any:
    return await s.scalar(
        select(Game).where(Game.chat_id == chat_id, Game.status.in_(ACTIVE_STATUSES))
    )


async def _old_find(s, user_id: int) -> Any:
    query = select(Game).where(
        Game.status.in_(ACTIVE_STATUSES),
        text(
            "EXISTS (SELECT 1 FROM json_each(games.seats) "
            "WHERE json_extract(json_each.value, '$.user_id') = :uid)"
        ),
    )
    return (await s.scalars(query.params(uid=user_id))).all()


async def _old_list(s) -> Any:
    return (
        await s.scalars(
            select(Game).where(Game.status.in_(ACTIVE_STATUSES)).order_by(Game.created_at)
        )
    ).all()


async def _time(sessions, call, repeat: int) -> float:
    """Median milliseconds of one call (a fresh session each time)."""
    times = []
    for _ in range(repeat):
        async with sessions() as s:
            t = time.perf_counter()
            await call(s)
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


async def main_async(opts: argparse.Namespace) -> None:
    print(f"load average {procstat.load_average()}  db {opts.db}  finished games {opts.finished}")
    with tempfile.TemporaryDirectory() as tmp:
        async with fresh_database(opts.db, Path(tmp)) as url:
            await migrate(url)
            engine = create_engine(url)
            sessions = session_factory(engine)
            try:
                await _fill(sessions, opts.finished)
                cases = {
                    "get_active_game": lambda s: repo.get_active_game(s, -7),
                    "get_active_game (bound IN, before)": lambda s: _old_active(s, -7),
                    "find_active_game_for_user": lambda s: repo.find_active_game_for_user(s, 5006),
                    "find_active_game_for_user (bound IN, before)": lambda s: _old_find(s, 5006),
                    "list_active_games": lambda s: repo.list_active_games(s),
                    "list_active_games (bound IN, before)": _old_list,
                }
                for name, call in cases.items():
                    ms = await _time(sessions, call, opts.repeat)
                    print(f"  {name:<46} {ms:8.2f} ms")
            finally:
                await engine.dispose()
    print(f"load average {procstat.load_average()}")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.lobby_queries")
    p.add_argument("--finished", type=int, default=10_000)
    p.add_argument("--db", default="sqlite")
    p.add_argument("--repeat", type=int, default=30)
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
