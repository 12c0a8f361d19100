"""Fresh, empty databases for tests: a SQLite file or a throwaway PostgreSQL database.

    from tests.dbutil import BACKENDS, fresh_database_url

    @pytest.fixture(params=BACKENDS)
    async def db_url(request, tmp_path):
        async with fresh_database_url(request.param, tmp_path) as url:  # skips if no PG
            yield url

PostgreSQL is looked for at ``HOKM_TEST_PG_URL`` (an admin DSN, for example
``postgresql://postgres@127.0.0.1:5432/postgres``); by default at 127.0.0.1:5432 as
user postgres or root (trust auth), connecting to the ``postgres`` or ``test``
database. Each fresh database is ``hokm_test_<random>``, created by
``CREATE DATABASE`` and dropped (``WITH (FORCE)``) afterwards. Set
``HOKM_TEST_PG=0`` to skip PostgreSQL, ``HOKM_TEST_PG=1`` to fail instead of skipping
when it cannot be reached.

The URLs returned are async SQLAlchemy URLs (``sqlite+aiosqlite://`` /
``postgresql+asyncpg://``), empty: run ``telegram_bot.platform.storage.migrate(url)`` for tables.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

BACKENDS = ("sqlite", "postgresql")

PG_HOST = "127.0.0.1"
PG_PORT = 5432
_CANDIDATE_DSNS = tuple(
    f"postgresql://{user}@{PG_HOST}:{PG_PORT}/{db}"
    for user in ("postgres", "root")
    for db in ("postgres", "test")
)

_admin_dsn: str | None = None
_probed = False


def sqlite_url(directory: str | Path, name: str = "hokm.sqlite3") -> str:
    """A SQLAlchemy URL for a SQLite file ``name`` in ``directory``."""
    path = (Path(directory) / name).resolve()
    return f"sqlite+aiosqlite:///{path.as_posix()}"


async def postgres_admin_dsn(timeout: float = 1.5) -> str | None:
    """A plain libpq DSN of a PostgreSQL server we may create databases on, or None.

    Probed once per process (fast: a quick TCP check, then a short asyncpg connect).
    """
    global _admin_dsn, _probed
    if _probed:
        return _admin_dsn
    _probed = True
    if os.environ.get("HOKM_TEST_PG", "").strip() == "0":
        return None
    try:
        import asyncpg
    except ImportError:
        return None
    configured = os.environ.get("HOKM_TEST_PG_URL", "").strip()
    candidates = (configured,) if configured else _CANDIDATE_DSNS
    for dsn in candidates:
        dsn = dsn.replace("postgresql+asyncpg://", "postgresql://")
        try:
            conn = await asyncio.wait_for(asyncpg.connect(dsn, timeout=timeout), timeout)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
            continue
        try:
            can_create = await conn.fetchval(
                "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user"
            )
        finally:
            await conn.close()
        if can_create:
            _admin_dsn = dsn
            return dsn
    return None


def _with_database(dsn: str, database: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(dsn).set(database=database).render_as_string(hide_password=False)


@asynccontextmanager
async def fresh_postgres_url() -> AsyncIterator[str]:
    """Create ``hokm_test_<random>`` and yield its asyncpg URL; drop it on exit.

    Raises ``RuntimeError`` if no PostgreSQL server is reachable.
    """
    import asyncpg

    admin = await postgres_admin_dsn()
    if admin is None:
        raise RuntimeError("PostgreSQL is not reachable")
    name = f"hokm_test_{secrets.token_hex(6)}"
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        url = _with_database(admin, name).replace("postgresql://", "postgresql+asyncpg://", 1)
        yield url
    finally:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


@asynccontextmanager
async def fresh_database_url(backend: str, tmp_path: str | Path) -> AsyncIterator[str]:
    """Yield the URL of a new empty database of ``backend`` ('sqlite' | 'postgresql').

    For PostgreSQL, calls ``pytest.skip`` when no server is reachable (unless
    ``HOKM_TEST_PG=1``, which makes that a failure).
    """
    if backend == "sqlite":
        directory = Path(tmp_path)
        directory.mkdir(parents=True, exist_ok=True)
        yield sqlite_url(directory, f"hokm_{secrets.token_hex(4)}.sqlite3")
        return
    if backend != "postgresql":
        raise ValueError(f"unknown backend {backend!r}")
    if await postgres_admin_dsn() is None:
        if os.environ.get("HOKM_TEST_PG", "").strip() == "1":
            pytest.fail("PostgreSQL required (HOKM_TEST_PG=1) but not reachable")
        pytest.skip("PostgreSQL not reachable at 127.0.0.1:5432")
    async with fresh_postgres_url() as url:
        yield url


# The database fixtures of tests/storage and tests/online (their conftests import them):
# ``db_url`` a fresh empty database per backend, ``engine`` on it migrated to head,
# ``sessions`` an async_sessionmaker bound to it, ``workers`` several engines on it.


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with fresh_database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    from telegram_bot.platform.storage import create_engine, migrate

    await migrate(db_url)
    eng = create_engine(db_url)
    try:
        yield eng
    finally:
        await eng.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    from telegram_bot.platform.storage import session_factory

    return session_factory(engine)


#: How many engines ``workers`` makes.
WORKER_ENGINES = 3


@pytest.fixture
async def workers(db_url: str) -> AsyncIterator[list[AsyncEngine]]:
    """``WORKER_ENGINES`` engines on one database migrated to head, each with a pool of
    its own, as that many worker processes would have (a test takes as many as it needs:
    an engine connects only when used)."""
    from telegram_bot.platform.storage import create_engine, migrate

    await migrate(db_url)
    engines = [create_engine(db_url, pool_size=5) for _ in range(WORKER_ENGINES)]
    try:
        yield engines
    finally:
        for eng in engines:
            await eng.dispose()
