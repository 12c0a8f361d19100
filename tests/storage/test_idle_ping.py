"""PostgreSQL pools ping a connection only after it sat idle (telegram_bot.platform.storage.db):
a busy worker pings nothing, and a connection the server closed meanwhile (a restart,
a proxy's timeout) is replaced before use, not handed to a transaction that fails."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from telegram_bot.platform.storage import db
from tests.dbutil import fresh_database_url


async def _pid(engine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(text("SELECT pg_backend_pid()")))


async def _terminate(url: str, pid: int) -> None:
    other = db.create_engine(url, pool_size=1, max_overflow=0)
    try:
        async with other.connect() as conn:
            assert await conn.scalar(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
    finally:
        await other.dispose()


def _count_pings(engine) -> list[int]:
    dialect = engine.sync_engine.dialect
    real, pings = dialect.do_ping, [0]

    def counted(dbapi_connection):
        pings[0] += 1
        return real(dbapi_connection)

    dialect.do_ping = counted
    return pings


async def test_busy_connections_are_not_pinged_idle_ones_are(tmp_path, monkeypatch):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        engine = db.create_engine(url, pool_size=1, max_overflow=0)
        pings = _count_pings(engine)
        try:
            first = await _pid(engine)
            for _ in range(20):  # handed back and out again at once: no pings
                assert await _pid(engine) == first
            assert pings[0] == 0

            # The server closes the pooled connection while it sits idle.
            await _terminate(url, first)
            monkeypatch.setattr(db, "IDLE_PING_SECONDS", 0.0)
            second = await _pid(engine)  # pinged, found dead, replaced: no error
            assert second != first and pings[0] == 1
        finally:
            await engine.dispose()


async def test_without_the_idle_ping_a_closed_connection_fails_its_transaction(
    tmp_path, monkeypatch
):
    """The check above can fail: unpinged, the dead connection reaches the caller."""
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        engine = db.create_engine(url, pool_size=1, max_overflow=0)
        try:
            first = await _pid(engine)
            await _terminate(url, first)
            monkeypatch.setattr(db, "IDLE_PING_SECONDS", 3600.0)
            with pytest.raises(Exception):  # noqa: B017 (asyncpg's or SQLAlchemy's)
                await _pid(engine)
            # The failure invalidated the pool: the next transaction gets a new one.
            assert await _pid(engine) != first
        finally:
            await engine.dispose()
