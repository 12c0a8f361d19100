"""Telegram refusing a call for an expected reason (a flood limit, a blocked bot, an
unchanged message) is one log line, never an ERROR with a traceback (#22, item 9):
the single process's rate limiter as build_application wires it, against the emulator."""

from __future__ import annotations

import logging

import pytest
from telegram.error import BadRequest, Forbidden, RetryAfter

from telegram_bot.runtime.app import build_application
from telegram_bot.runtime.config import Settings
from testkit.emulator import BotApiEmulator

TOKEN = "123456:TEST"


async def test_expected_api_errors_are_one_line_each(tmp_path, caplog) -> None:
    async with BotApiEmulator(token=TOKEN) as emu:
        settings = Settings(
            token=TOKEN,
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'unused.sqlite3'}",
            api_url=emu.server.url,
            think_processes=0,
        )
        app = build_application(settings)
        assert app.bot.rate_limiter is not None, "the single process paces itself"
        alice, bob = emu.add_user("Alice", started=True), emu.add_user("Bob", started=True)
        group = emu.add_group("Club", members=[alice, bob])
        await app.bot.initialize()
        try:
            caplog.set_level(logging.DEBUG)
            sent = await app.bot.send_message(group.id, "table")
            emu.inject_error("sendMessage", group, retry_after=3, times=2)
            for _ in range(2):
                with pytest.raises(RetryAfter):
                    await app.bot.send_message(group.id, "move")
            bob.block_bot()
            with pytest.raises(Forbidden):
                await app.bot.send_message(bob.id, "your hand")
            with pytest.raises(BadRequest, match="not modified"):
                await app.bot.edit_message_text(
                    "table", chat_id=group.id, message_id=sent.message_id
                )
        finally:
            await app.bot.shutdown()

    ours = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore", "asyncio"))]
    loud = [(r.name, r.levelname, r.getMessage()) for r in ours if r.levelno >= logging.ERROR]
    assert not loud, loud
    traced = [(r.name, r.getMessage()) for r in ours if r.exc_info or r.exc_text]
    assert not traced, traced
    floods = [r for r in ours if "429" in r.getMessage() or "flood" in r.getMessage().lower()]
    assert len(floods) == 2, [r.getMessage() for r in floods]
    assert all("\n" not in r.getMessage() and r.levelno <= logging.WARNING for r in floods)
