"""The lobby queries read the active games through the partial index, never the whole
games table (which keeps every finished match).

Each repository function is called for real; the SQL it sends is captured and asked
for its plan: SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN with sequential scans
discouraged (so a Seq Scan in the plan means no index could serve the query).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import repo

INDEX = "uq_games_one_active_per_topic"
CHAT = -1001234567890


def seat(user_id: int) -> dict[str, Any]:
    return {"user_id": user_id, "name": f"u{user_id}", "bot": None, "away": False}


async def _fill(sessions: async_sessionmaker[AsyncSession]) -> None:
    """A few chats with finished matches and one active game each."""
    async with sessions.begin() as s:
        for c in range(4):
            chat = CHAT - c
            await repo.get_or_create_chat(s, chat, "supergroup", f"group {c}")
            for _ in range(5):
                game = await repo.create_game(s, chat, 1, [seat(10 * c + 1)], status="finished")
            game = await repo.create_game(s, chat, 1, [seat(10 * c + 1), seat(10 * c + 2)])
            game.status = "playing"
            await repo.save_game(s, game, game.move)


async def _statements(engine: AsyncEngine, sessions, call) -> list[tuple[str, Any]]:
    """The SELECTs on games that ``call(session)`` sends, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def capture(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM games" in statement:
            seen.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", capture)
    try:
        async with sessions() as s:
            await call(s)
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", capture)
    assert seen, "the call sent no query on games"
    return seen


async def _plan(engine: AsyncEngine, statement: str, parameters: Any) -> list[str]:
    async with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            result = await conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            return [row[-1] for row in result.all()]
        await conn.exec_driver_sql("SET enable_seqscan = off")
        result = await conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters)
        plan = result.scalar()
        plan = json.loads(plan) if isinstance(plan, str) else plan
        nodes: list[str] = []

        def walk(node: dict[str, Any]) -> None:
            # A bitmap scan names the index in its child and the table in itself.
            if node.get("Relation Name") == "games" or "Index Name" in node:
                nodes.append(
                    f"{node['Node Type']} {node.get('Relation Name', '')} "
                    f"{node.get('Index Name', '')}".strip()
                )
            for child in node.get("Plans", []):
                walk(child)

        walk(plan[0]["Plan"])
        return nodes


def _reads_games_by_index(engine: AsyncEngine, plan: list[str]) -> bool:
    if engine.dialect.name == "sqlite":
        games = [line for line in plan if line.split()[1:2] == ["games"]]
        return bool(games) and all(INDEX in line for line in games)
    full = any(node.startswith("Seq Scan games") for node in plan)
    return not full and any(INDEX in node for node in plan)


LOBBY_QUERIES = {
    "get_active_game": lambda s: repo.get_active_game(s, CHAT),
    "find_active_game_for_user": lambda s: repo.find_active_game_for_user(s, 2),
    "list_active_games": lambda s: repo.list_active_games(s),
}


@pytest.mark.parametrize("name", sorted(LOBBY_QUERIES))
async def test_lobby_queries_use_the_active_games_index(engine, sessions, name) -> None:
    await _fill(sessions)
    for statement, parameters in await _statements(engine, sessions, LOBBY_QUERIES[name]):
        plan = await _plan(engine, statement, parameters)
        assert _reads_games_by_index(engine, plan), f"{name} reads games without {INDEX}: {plan}"


async def test_the_check_sees_a_full_scan(engine, sessions) -> None:
    """The same check fails on the query as it was written before (status IN bound).

    SQLite only: PostgreSQL plans a statement with its parameters' values (a custom
    plan), so it proves the bound form implies the index predicate too."""
    from sqlalchemy import select

    if engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL serves the bound form by the index as well")

    from telegram_bot.platform.storage import ACTIVE_STATUSES, Game

    await _fill(sessions)

    async def old(s: AsyncSession) -> None:
        await s.scalars(select(Game).where(Game.status.in_(ACTIVE_STATUSES)))

    for statement, parameters in await _statements(engine, sessions, old):
        plan = await _plan(engine, statement, parameters)
        assert not _reads_games_by_index(engine, plan), plan


async def test_lobby_queries_still_find_the_active_games(sessions) -> None:
    await _fill(sessions)
    async with sessions() as s:
        active = await repo.get_active_game(s, CHAT)
        mine = await repo.find_active_game_for_user(s, 2)
        every = await repo.list_active_games(s)
    assert active is not None and active.status == "playing" and active.chat_id == CHAT
    assert mine is not None and mine.id == active.id
    assert len(every) == 4 and all(g.status == "playing" for g in every)
