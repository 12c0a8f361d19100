"""Engine, sessions and migrations.

>>> url = database_url_from_env()          # DATABASE_URL, or SQLite in HOKM_DATA_DIR / cwd
>>> await migrate(url)                      # Alembic upgrade to head
>>> engine = create_engine(url)
>>> Session = session_factory(engine)
>>> async with Session.begin() as session:  # one transaction, committed on exit
...     game = await repo.get_active_game(session, chat_id)
"""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

SQLITE_FILENAME = "hokm.sqlite3"
# How long a SQLite connection waits for another one's write lock before failing.
SQLITE_BUSY_TIMEOUT_MS = 15_000

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
ALEMBIC_INI = MIGRATIONS_DIR / "alembic.ini"


def normalize_url(url: str | URL) -> str:
    """Pick the async driver for a database URL.

    ``postgres://`` and ``postgresql://`` (as hosting providers hand them out) become
    ``postgresql+asyncpg://``, with libpq's ``sslmode`` turned into asyncpg's ``ssl``;
    ``sqlite://`` becomes ``sqlite+aiosqlite://``. Other URLs are returned unchanged.
    """
    text = url.render_as_string(hide_password=False) if isinstance(url, URL) else str(url)
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://") :]
    parsed = make_url(text)
    if parsed.drivername in ("postgresql", "postgresql+psycopg2", "postgresql+psycopg"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
        if "sslmode" in parsed.query:
            query = dict(parsed.query)
            query["ssl"] = query.pop("sslmode")
            parsed = parsed.set(query=query)
    elif parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


def database_url_from_env(environ: dict[str, str] | None = None) -> str:
    """The database URL the bot should use.

    ``DATABASE_URL`` if set (normalized by :func:`normalize_url`); otherwise a SQLite
    file ``hokm.sqlite3`` in ``HOKM_DATA_DIR`` if that is set, else in the current
    directory (``sqlite+aiosqlite:///hokm.sqlite3``).
    """
    env = os.environ if environ is None else environ
    url = env.get("DATABASE_URL", "").strip()
    if url:
        return normalize_url(url)
    data_dir = env.get("HOKM_DATA_DIR", "").strip()
    if data_dir:
        path = Path(data_dir).expanduser().resolve() / SQLITE_FILENAME
        return f"sqlite+aiosqlite:///{path.as_posix()}"
    return f"sqlite+aiosqlite:///{SQLITE_FILENAME}"


def _sqlite_on_connect(dbapi_connection: Any, _record: Any, busy_timeout_ms: int) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")  # 'memory' for in-memory databases
        cursor.execute("PRAGMA synchronous = NORMAL")  # safe with WAL, much faster
    finally:
        cursor.close()


def sqlite_threads(environ: dict[str, str] | None = None) -> bool:
    """``HOKM_SQLITE_THREADS=1``: SQLite calls in aiosqlite's threads, as before
    :mod:`telegram_bot.platform.storage.inline_sqlite` (default: on the event loop's thread)."""
    env = os.environ if environ is None else environ
    return env.get("HOKM_SQLITE_THREADS", "0") == "1"


def create_engine(
    url: str | URL | None = None, *, threads: bool | None = None, **kwargs: Any
) -> AsyncEngine:
    """An async engine for ``url`` (default: :func:`database_url_from_env`).

    SQLite connections get WAL journaling, foreign keys, ``synchronous=NORMAL`` and a
    busy timeout; the folder of a SQLite file is created if missing. They run their
    calls on the event loop's thread (see :mod:`telegram_bot.platform.storage.inline_sqlite`),
    or with ``threads`` (default: :func:`sqlite_threads`) in aiosqlite's threads.
    Extra keyword arguments go to :func:`sqlalchemy.ext.asyncio.create_async_engine`.
    """
    text = normalize_url(url if url is not None else database_url_from_env())
    parsed = make_url(text)
    # SQLAlchemy's default (5 kept, 10 more opened and closed as needed) made a busy
    # bot open a connection or two every second: a PostgreSQL backend forked and
    # asyncpg's set-up queries, or a SQLite connection with its thread. A ceiling of 15.
    # On PostgreSQL all 15 are kept once opened: with 10 kept and 5 more opened and
    # closed in bursts, each asyncpg connection's buffers left holes in glibc's heap
    # and RSS grew by ~4 MiB every 100 matches (``python -m benchmarks.memtrace --db
    # postgresql://...``: 109 connects in 450 matches, the heap's free space 8 -> 21
    # MiB; flat with none closed). SQLite's connections come and go rarely (one
    # writer) and cost no backend: 10 kept and 5 more.
    kept, more = (15, 0) if parsed.get_backend_name() == "postgresql" else (10, 5)
    kwargs.setdefault("pool_size", kept)
    kwargs.setdefault("max_overflow", more)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        busy_timeout = SQLITE_BUSY_TIMEOUT_MS
        if not (sqlite_threads() if threads is None else threads):
            from sqlalchemy.dialects.sqlite.aiosqlite import SQLiteDialect_aiosqlite

            from telegram_bot.platform.storage.inline_sqlite import inline_creator

            cargs, cparams = SQLiteDialect_aiosqlite().create_connect_args(parsed)
            kwargs.setdefault("async_creator", inline_creator(*cargs, busy_timeout, **cparams))
            busy_timeout = 0  # waits for a lock without stopping the event loop
        engine = create_async_engine(text, **kwargs)
        event.listen(
            engine.sync_engine,
            "connect",
            functools.partial(_sqlite_on_connect, busy_timeout_ms=busy_timeout),
        )
        return engine
    if kwargs.pop("pool_pre_ping", None):
        return create_async_engine(text, pool_pre_ping=True, **kwargs)
    engine = create_async_engine(text, **kwargs)
    _ping_when_idle(engine)
    return engine


#: A pooled connection unused for this long is pinged before it is handed out.
IDLE_PING_SECONDS = 10.0


def _ping_when_idle(engine: AsyncEngine) -> None:
    """Ping a pooled connection before use only if it sat unused for a while.

    SQLAlchemy's ``pool_pre_ping`` pings at every checkout, and asyncpg's ping is three
    round trips (BEGIN, an empty query, ROLLBACK): ~16% of a busy worker's CPU. A
    connection handed back a moment ago is as alive as a ping would show; one that sat
    idle may have been closed by a database restart or a proxy's timeout. A failed ping
    invalidates the pool's older connections (as ``pool_pre_ping`` does) and the
    checkout opens a new one; a connection lost while in use fails that transaction and
    the pool is invalidated the same way.
    """
    import time

    from sqlalchemy import exc

    pool = engine.sync_engine.pool
    dialect = engine.sync_engine.dialect

    @event.listens_for(pool, "checkin")
    def _checked_in(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info["checked_in"] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("checked_in")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise exc.InvalidatePoolError(f"ping failed: {error!r}") from error


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded objects usable after commit (``expire_on_commit=False``).

    Use ``async with factory.begin() as session:`` for one transaction; the functions in
    :mod:`telegram_bot.platform.storage.repo` never commit by themselves.
    """
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str | URL | None = None) -> Any:
    """The Alembic ``Config`` for the bot's migrations, independent of the current directory."""
    from alembic.config import Config

    cfg = Config(str(ALEMBIC_INI))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        # Given to env.py as an attribute: no '%' interpolation troubles with passwords.
        cfg.attributes["url"] = normalize_url(url)
    return cfg


def _run_alembic(connection: Connection, cfg: Any, direction: str, revision: str) -> None:
    from alembic import command

    cfg.attributes["connection"] = connection
    getattr(command, direction)(cfg, revision)


_MIGRATION_LOCK = 0x686F6B6D  # "hokm"


async def _run(url: str | URL | None, direction: str, revision: str) -> None:
    text = normalize_url(url if url is not None else database_url_from_env())
    cfg = alembic_config(text)
    engine = create_engine(text)
    try:
        async with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # Workers starting together migrate one after the other (the lock
                # goes with the transaction).
                await connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
            await connection.run_sync(_run_alembic, cfg, direction, revision)
    finally:
        await engine.dispose()


async def migrate(url: str | URL | None = None, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` (default head).

    Safe to call from inside a running event loop: Alembic runs synchronously on the
    engine's connection through ``run_sync``. Does not touch logging configuration.
    """
    await _run(url, "upgrade", revision)


async def downgrade(url: str | URL | None = None, revision: str = "base") -> None:
    """Undo migrations down to ``revision`` (default: base, dropping every table)."""
    await _run(url, "downgrade", revision)


def migrate_sync(url: str | URL | None = None, revision: str = "head") -> None:
    """:func:`migrate` for code that has no event loop running."""
    asyncio.run(migrate(url, revision))
