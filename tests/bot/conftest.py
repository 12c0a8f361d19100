"""The real bot, against the Bot API emulator, on SQLite (and PostgreSQL if reachable)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from telegram_bot.emulator import BotApiEmulator
from telegram_bot.simulation import TOKEN, BotRunner
from tests.dbutil import BACKENDS, fresh_database_url

from .driver import assert_no_private_hand_in

BOT_USERNAME = "HokmTestBot"


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[str]:
    async with fresh_database_url(request.param, tmp_path) as url:  # skips without PG
        yield url


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(token=TOKEN, bot_username=BOT_USERNAME, bot_name="Hokm") as e:
        yield e
        # Every test: no version of any group message ever carried a hand's buttons.
        # (Table.step also checks, before every action, that no hidden card appears
        # in any group text.)
        for chat in list(e.world.chats.values()):
            if chat.is_group:
                assert_no_private_hand_in(e, chat.id)


@pytest.fixture
async def runner(emu, db_url) -> AsyncIterator[BotRunner]:
    r = BotRunner(emu, db_url)
    await r.start()
    try:
        yield r
    finally:
        await r.stop()
