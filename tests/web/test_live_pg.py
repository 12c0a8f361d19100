"""The live bus across processes: PostgreSQL's LISTEN/NOTIFY (PgBus). Two buses on one
database stand for two processes. Runs on PostgreSQL only (skipped without it, a
failure with HOKM_TEST_PG=1)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from telegram_bot.platform.live import LiveBus, LocalBus, PgBus, notify, parse_notice
from telegram_bot.platform.storage import create_engine, migrate, repo, session_factory
from telegram_bot.platform.storage.models import Game
from tests.dbutil import fresh_database_url

#: A guard against a hang, never a wait for state: every wait below is on progress.
GUARD = 60.0


def wait(aw: Awaitable[Any]) -> Awaitable[Any]:
    return asyncio.wait_for(aw, GUARD)


@pytest.fixture
async def pg(tmp_path: Path) -> AsyncIterator[tuple[str, Any]]:
    async with fresh_database_url("postgresql", tmp_path) as url:
        await migrate(url)
        engine = create_engine(url)
        try:
            yield url, session_factory(engine)
        finally:
            await engine.dispose()


def test_notices_parse() -> None:
    assert parse_notice("ab12cd:7") == ("ab12cd", 7)
    for bad in ("", "ab", ":7", "ab:", "ab:-1", "ab:x", "ab:1e3", "ab:١", "ab:" + "9" * 10):
        assert parse_notice(bad) is None, bad


async def test_notify_does_nothing_on_sqlite(tmp_path: Path) -> None:
    async with fresh_database_url("sqlite", tmp_path) as url:
        await migrate(url)
        engine = create_engine(url)
        try:
            async with session_factory(engine)() as s, s.begin():
                await notify(s, "g", 1)
        finally:
            await engine.dispose()


async def test_a_committed_notice_reaches_the_other_process_a_rollback_none(pg) -> None:
    url, sessions = pg
    a, b = PgBus(url), PgBus(url)
    assert isinstance(a, LiveBus) and isinstance(LocalBus(), LiveBus)
    await a.start()
    await b.start()
    try:
        assert a.connected and b.connected and a.server_pid() != b.server_pid()
        on_a, on_b, other = a.subscribe("g1"), b.subscribe("g1"), b.subscribe("g2")
        # Committed in a transaction of its own (as a move is): both processes hear it.
        async with sessions() as s, s.begin():
            await notify(s, "g1", 7)
        assert await wait(on_b.next()) == 7
        assert await wait(on_a.next()) == 7
        assert other.latest == -1
        # A move whose transaction fails: its notice never leaves.
        with pytest.raises(RuntimeError):
            async with sessions() as s, s.begin():
                await notify(s, "g1", 8)
                raise RuntimeError("the move failed")
        async with sessions() as s:
            await notify(s, "g1", 9)
            await s.rollback()
        # A later committed notice is delivered after any earlier one (commit order):
        # once it is here, nothing of the rolled-back ones came.
        received = b.received
        async with sessions() as s, s.begin():
            await notify(s, "g2", 1)
        assert await wait(other.next()) == 1
        assert b.received == received + 1
        assert on_b.latest == 7 and await on_b.next(timeout=0) is None
        # publish() reaches this process's listeners at once, not the other's.
        b.publish("g2", 2)
        assert await other.next(timeout=0) == 2
        assert a.listeners() == 1 and b.listeners() == 2 and b.published >= 1
    finally:
        await a.close()
        await b.close()
    assert not a.connected and a.losses == 0


async def test_a_reconnecting_bus_catches_up_from_the_rows(pg) -> None:
    url, sessions = pg
    async with sessions() as s, s.begin():
        await repo.get_or_create_chat(s, -100, "group")
        game = await repo.create_game(s, -100, 1, [{"user_id": 1, "name": "A"}])
        await s.execute(update(Game).where(Game.id == game.id).values(move=3))
    gate = asyncio.Event()

    async def held(_delay: float) -> None:
        await gate.wait()

    bus = PgBus(url, pause=held)
    await bus.start()
    try:
        sub = bus.subscribe(game.id)
        # The connection is cut (a server restart, a network loss).
        async with sessions() as s:
            killed = await s.scalar(select(func.pg_terminate_backend(bus.server_pid())))
        assert killed
        await wait(bus.wait_for(lambda: bus.losses == 1))
        assert not bus.connected
        # A move commits while nobody listens: its notice is lost.
        async with sessions() as s, s.begin():
            await s.execute(update(Game).where(Game.id == game.id).values(move=5))
            await notify(s, game.id, 5)
        assert sub.latest == -1
        # Connected again, the bus reads where its games are: the listener catches up.
        gate.set()
        await wait(bus.wait_for(lambda: bus.connections == 2))
        assert bus.received == 0
        assert await sub.next(timeout=0) == 5
        # And hears the next moves as notices again.
        async with sessions() as s, s.begin():
            await notify(s, game.id, 6)
        assert await wait(sub.next()) == 6 and bus.received == 1
    finally:
        await bus.close()


async def test_a_bus_that_cannot_connect_keeps_trying(pg) -> None:
    url, sessions = pg
    attempts: list[str] = []
    gate = asyncio.Event()
    real = PgBus(url)._open

    async def flaky(dsn: str) -> Any:
        attempts.append(dsn)
        if len(attempts) == 1:
            raise OSError("connection refused")
        return await real()

    async def held(_delay: float) -> None:
        await gate.wait()

    bus = PgBus(url, connect=flaky, pause=held)
    await bus.start()  # returns after the first failure
    try:
        assert bus.losses == 1 and not bus.connected
        sub = bus.subscribe("g")
        gate.set()
        await wait(bus.wait_for(lambda: bus.connected))
        async with sessions() as s, s.begin():
            await notify(s, "g", 2)
        assert await wait(sub.next()) == 2
        assert len(attempts) == 2 and attempts[0].startswith("postgresql://")
    finally:
        await bus.close()
