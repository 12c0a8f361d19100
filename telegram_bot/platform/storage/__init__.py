"""The bot's database: SQLAlchemy 2 async models, Alembic migrations, small repository.

SQLite (aiosqlite's connection, run on the event loop's thread: see :mod:`.inline_sqlite`)
by default, PostgreSQL (asyncpg) when DATABASE_URL names it. See
:mod:`.db` for engines and migrations, :mod:`.models` for the tables and :mod:`.repo`
for the operations the bot uses.
"""

from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.db import (
    alembic_config,
    create_engine,
    database_url_from_env,
    downgrade,
    migrate,
    migrate_sync,
    normalize_url,
    session_factory,
)
from telegram_bot.platform.storage.models import (
    ACTIVE_STATUSES,
    CANCELLED,
    FINISHED,
    GAME_STATUSES,
    LOBBY,
    PLAYING,
    Base,
    Chat,
    Game,
    MatchResult,
    PlayerTally,
    User,
)
from telegram_bot.platform.storage.repo import ActiveGameExistsError, StaleGameError, StorageError

__all__ = [
    "ACTIVE_STATUSES",
    "CANCELLED",
    "FINISHED",
    "GAME_STATUSES",
    "LOBBY",
    "PLAYING",
    "ActiveGameExistsError",
    "Base",
    "Chat",
    "Game",
    "MatchResult",
    "PlayerTally",
    "StaleGameError",
    "StorageError",
    "User",
    "alembic_config",
    "create_engine",
    "database_url_from_env",
    "downgrade",
    "migrate",
    "migrate_sync",
    "normalize_url",
    "repo",
    "session_factory",
]
