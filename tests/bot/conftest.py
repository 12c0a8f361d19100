"""The real bot, against the Bot API emulator, on SQLite (and PostgreSQL if reachable)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from telegram_bot.app import build_application
from telegram_bot.config import Settings
from telegram_bot.emulator import BotApiEmulator
from tests.dbutil import BACKENDS, fresh_database_url

TOKEN = "123456:TEST-TOKEN"
BOT_USERNAME = "HokmTestBot"


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[str]:
    async with fresh_database_url(request.param, tmp_path) as url:  # skips without PG
        yield url


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(token=TOKEN, bot_username=BOT_USERNAME, bot_name="Hokm") as e:
        yield e


class BotRunner:
    """Starts and stops the real Application the way ``run_polling`` does."""

    def __init__(self, emu: BotApiEmulator, db_url: str, **overrides: Any) -> None:
        self.emu = emu
        self.settings = Settings(
            token=TOKEN,
            database_url=db_url,
            api_url=emu.base_url,
            rate_limit=False,
            computer_delay=0.0,
            hand_pause=0.0,
            think_seconds=0.05,
        )
        for k, v in overrides.items():
            object.__setattr__(self.settings, k, v)
        self.app: Any = None

    @property
    def service(self):
        return self.app.bot_data["service"]

    async def start(self) -> None:
        app = build_application(self.settings)
        await app.initialize()
        if app.post_init:
            await app.post_init(app)
        await app.updater.start_polling(poll_interval=0.0, timeout=1, drop_pending_updates=False)
        await app.start()
        self.app = app

    async def stop(self, graceful: bool = True) -> None:
        app = self.app
        if app is None:
            return
        self.app = None
        if graceful:
            with contextlib.suppress(Exception):
                await app.bot_data["service"].idle()
        await app.updater.stop()
        await app.stop()
        if app.post_stop:
            await app.post_stop(app)
        await app.shutdown()
        if app.post_shutdown:
            await app.post_shutdown(app)

    async def crash(self) -> None:
        """Stop without waiting for anything in flight, as a killed process would."""
        await self.stop(graceful=False)

    async def settle(self) -> None:
        """Until the emulator is quiet, every update is handled and no game work is left."""
        for _ in range(100):
            await self.emu.settle(quiet=0.02, timeout=30)
            if self.app is None:
                return
            processor = self.app.update_processor
            busy = processor.in_flight or not self.app.update_queue.empty()
            await processor.wait_idle()
            await self.service.idle()
            if not busy and not self.emu.world.updates.undelivered:
                await asyncio.sleep(0.01)
                if processor.in_flight == 0 and not self.service._background:
                    return
        raise AssertionError("the bot never settled")


@pytest.fixture
async def runner(emu, db_url) -> AsyncIterator[BotRunner]:
    r = BotRunner(emu, db_url)
    await r.start()
    try:
        yield r
    finally:
        await r.stop()
