"""The hot path's few statements on PostgreSQL, run on asyncpg directly.

A press runs a handful of statements (the game read under its lock and saved, the
outbox's rows written, rows carried out deleted). Through SQLAlchemy each one costs
more of the bot's CPU than the round trip: the statement's cache key, an execution
context, parameter processing, the result's wrapping, and the ORM session's
bookkeeping around them (a profile under load had SQLAlchemy in nearly 40% of the
samples; run this way the bot's CPU per play fell by about a quarter in the same run,
``benchmarks/results/loadtest-people-postgresql-pgdirect-pgcpu.json``). Here they run
as fixed SQL on the asyncpg connection of the session's own transaction, so they
commit or roll back with everything else the session does (:func:`connection` begins
that transaction as SQLAlchemy would). With SQLite, or any other driver,
:func:`connection` returns None and callers use SQLAlchemy as before.

Values go in and come out as SQLAlchemy would hand them to asyncpg: ``jsonb`` as JSON
text (the dialect's codec on every connection decodes it when read), timestamps as
aware UTC datetimes. Errors are raised as SQLAlchemy would raise them (an
``IntegrityError`` for a unique index, and so on), translated by its own adapter; the
session's rollback then finds a broken connection as with any statement and the pool
drops it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import exc
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.util import greenlet_spawn

#: Called with each statement's SQL (benchmarks.statements counts them).
observers: list[Callable[[str], None]] = []

_INFO_KEY = "pgdirect"
_NOT_ASYNCPG = ("not asyncpg",)


def _observe(sql: str) -> None:
    for observer in observers:
        observer(sql)


def is_asyncpg(session: AsyncSession) -> bool:
    return session.get_bind().dialect.driver == "asyncpg"


async def connection(session: AsyncSession) -> Any | None:
    """The (SQLAlchemy-adapted) asyncpg connection of the session's transaction, that
    transaction begun, for :func:`fetchrow`, :func:`fetch` and :func:`execute`; None
    when the session is not on asyncpg."""
    cached = session.info.get(_INFO_KEY)
    if cached is _NOT_ASYNCPG:
        return None
    sync = session.sync_session
    transaction = sync.get_transaction()
    if cached is not None and transaction is not None and cached[0] is transaction:
        return cached[1]
    if not is_asyncpg(session):
        session.info[_INFO_KEY] = _NOT_ASYNCPG
        return None
    conn = await session.connection()  # begins the session's transaction
    adapted = (await conn.get_raw_connection()).dbapi_connection
    if adapted._transaction is None:
        async with adapted._execute_mutex:
            if adapted._transaction is None:
                await adapted._start_transaction()  # BEGIN, as its first statement would
    session.info[_INFO_KEY] = (sync.get_transaction(), adapted)
    return adapted


async def _call(adapted: Any, method: str, sql: str, args: tuple[Any, ...]) -> Any:
    _observe(sql)
    try:
        return await getattr(adapted._connection, method)(sql, *args)
    except Exception as error:
        raise _translated(adapted, sql, args, error) from error


def _translated(adapted: Any, sql: str, args: tuple[Any, ...], error: Exception) -> Exception:
    """The exception SQLAlchemy would raise for this asyncpg error."""
    try:
        adapted._handle_exception(error)  # raises the adapter's DBAPI error for it
    except Exception as dbapi_error:
        return exc.DBAPIError.instance(sql, args, dbapi_error, adapted.dbapi.Error)
    return error


async def fetchrow(conn: Any, sql: str, *args: Any) -> Any:
    """``conn`` is what :func:`connection` returned."""
    return await _call(conn, "fetchrow", sql, args)


async def fetch(conn: Any, sql: str, *args: Any) -> list[Any]:
    return await _call(conn, "fetch", sql, args)


async def execute(conn: Any, sql: str, *args: Any) -> int:
    """Run a statement; the number of rows it changed."""
    status = await _call(conn, "execute", sql, args)
    try:
        return int(status.rsplit(" ", 1)[1])
    except (IndexError, ValueError):
        return -1


def json_param(value: Any) -> str | None:
    """A ``jsonb`` parameter (JSON text, as SQLAlchemy's JSON type would bind it)."""
    return None if value is None else json.dumps(value)


def utc(value: datetime | None) -> datetime | None:
    """A timestamp parameter: aware, in UTC (naive ones are taken to be UTC)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def is_asyncpg_engine(engine: AsyncEngine | None) -> bool:
    return engine is not None and engine.sync_engine.dialect.driver == "asyncpg"


async def delete_ids(engine: AsyncEngine, table: str, ids: Sequence[int]) -> None:
    """``DELETE FROM table WHERE id = ANY(ids)`` as a statement of its own."""
    await execute_alone(engine, f"DELETE FROM {table} WHERE id = ANY($1::integer[])", list(ids))


async def execute_alone(engine: AsyncEngine, sql: str, *args: Any) -> None:
    """One statement on a pooled connection outside any transaction: atomic by
    itself, in one round trip (no BEGIN and COMMIT)."""
    raw = await engine.raw_connection()
    try:
        adapted = raw.dbapi_connection
        async with adapted._execute_mutex:
            await _call(adapted, "execute", sql, args)
    except BaseException:
        await greenlet_spawn(raw.invalidate)  # (SQLAlchemy's closing awaits in a greenlet)
        raise
    finally:
        await greenlet_spawn(raw.close)
