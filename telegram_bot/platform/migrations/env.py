"""Alembic environment for the bot's database (async engines: aiosqlite, asyncpg).

Two ways in:
- ``telegram_bot.platform.storage.db.migrate()`` hands over an open connection in
  ``config.attributes["connection"]``; migrations run on it, inside the caller's
  transaction, and logging is left alone.
- The ``alembic`` command line: the URL is ``config.attributes["url"]``, else
  ``sqlalchemy.url`` from the ini file if set, else DATABASE_URL / HOKM_DATA_DIR.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection

from telegram_bot.platform.storage.db import create_engine, database_url_from_env, normalize_url
from telegram_bot.platform.storage.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    return normalize_url(url) if url else database_url_from_env()


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        compare_server_default=False,
        **kwargs,
    )


def run_migrations_offline() -> None:
    url = _url()
    _configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    _configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    engine = create_engine(_url(), poolclass=pool.NullPool)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    asyncio.run(run_async_migrations())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
