"""Fixtures of the play-with-anyone tests: as tests/storage's, on SQLite and PostgreSQL.

- ``db_url``: a fresh empty database (tmp SQLite file or ``hokm_test_<random>``).
- ``engine``: an engine on that database, migrated to head; ``sessions`` a sessionmaker.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

_REPO_ROOT = str(Path(__file__).resolve().parents[2])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from telegram_bot.platform.storage import create_engine, migrate, session_factory  # noqa: E402
from tests.dbutil import BACKENDS, fresh_database_url  # noqa: E402


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with fresh_database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    await migrate(db_url)
    eng = create_engine(db_url)
    try:
        yield eng
    finally:
        await eng.dispose()


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return session_factory(engine)
