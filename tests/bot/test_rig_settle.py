"""The process rig's settle() waits for updates handled, not only fetched.

A bot process short of CPU can have fetched an update (the emulator counts it
delivered) and not yet handled it. A settle() that returned then let a test read the
database before the bot had written to it (it failed that way once, beside a CPU
burner). Here the bot is stopped (SIGSTOP) with /newgame fetched: settle() must wait
until it runs again and has handled it.
"""

from __future__ import annotations

import asyncio
import signal

from telegram_bot.platform.storage.db import normalize_url
from testkit.chaos import BotProcess, ProcessRunner, bot_process
from testkit.emulator import BotApiEmulator
from testkit.simulation import Table


async def _fetched_while_stopped(emu: BotApiEmulator, bot: BotProcess, send) -> bool:
    """Stop the bot, send an update, and wait until its pending long poll has carried
    it. False (the bot is running again) when that poll ended empty first: a stopped
    process cannot poll again."""
    bot.proc.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]
    await send()
    while emu.world.updates.undelivered:
        polls = [c for c in emu.calls[bot.start_mark :] if c.method == "getUpdates"]
        if polls and polls[-1].ok is not None and emu.world.updates.undelivered:
            bot.proc.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
            return False
        await asyncio.sleep(0.01)
    return True


async def test_settle_waits_for_an_update_fetched_and_not_yet_handled(emu, db_url, tmp_path):
    bot = bot_process(emu, normalize_url(db_url), tmp_path / "bot.log")
    user = emu.add_user("Waiting", language_code="en")
    group = emu.add_group("Settle", members=[user], admins=[user])
    runner = ProcessRunner(emu, bot, normalize_url(db_url), group.id)
    table = Table(emu, runner, group, [user])
    await bot.start()
    try:
        await emu.send_message(user, user.private_chat_id, "/start")
        await runner.settle()
        assert not runner.unhandled()

        async def newgame() -> None:
            await emu.send_message(user, group.id, "/newgame")

        while not await _fetched_while_stopped(emu, bot, newgame):
            await runner.settle()
        try:
            settling = asyncio.create_task(runner.settle())
            # Five times settle()'s quiet time: without the bot's progress it returns
            # after one (no call in flight, nothing undelivered, no game to wait on).
            await asyncio.sleep(1.0)
            assert not settling.done(), "settle() returned with /newgame fetched, not handled"
            assert runner.unhandled()
            assert await table.game() is None
        finally:
            bot.proc.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
        await settling
        assert not runner.unhandled()
        game = await table.game()
        assert game is not None and game.status == "lobby"
    finally:
        await bot.stop()
        await runner.close()
