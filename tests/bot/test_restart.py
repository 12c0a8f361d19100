"""A restarted single process: it takes its dead predecessor's computer turns over at
once, answers the presses left unanswered, and a SIGTERM sends what is queued."""

from __future__ import annotations

import asyncio
import signal
from datetime import timedelta

import pytest

from core import Match
from telegram_bot.platform.storage.db import normalize_url
from telegram_bot.platform.storage.models import utcnow
from testkit.chaos import ProcessRunner, bot_process, open_match
from testkit.simulation import Table, by_level


async def _until(check, runner: ProcessRunner):
    """Poll the database until ``check(game)`` holds (waits on progress: the bot's
    own stall detection fails it, never a deadline)."""
    while True:
        game = await Table(runner.emu, runner, runner.group, []).game()
        if check(game):
            return game
        await asyncio.sleep(0.02)


@pytest.mark.slow
async def test_a_restarted_process_takes_its_computers_turn_over_at_once(emu, db_url, tmp_path):
    # Three hard computers thinking 2 s a move: the lease is 10 + 4 x 2 x 4 = 42 s.
    bot = bot_process(emu, normalize_url(db_url), tmp_path / "bot.log", HOKM_THINK_SECONDS="2")
    user = emu.add_user("Solo", language_code="en")
    group = emu.add_group("Restart", members=[user], admins=[user])
    runner = ProcessRunner(emu, bot, normalize_url(db_url), group.id)
    runner.group = group
    table = Table(emu, runner, group, [user])
    await bot.start()
    try:
        await open_match(runner, table, [user], ["timer=0", "target=1", "level=hard"])
        strategies = {user.id: by_level("easy", seed=1)}
        # Play until the computers hold their thinking lease (the person's press goes
        # on in the background: its settle would wait the computers out).
        stepping: asyncio.Task[bool] | None = None
        while True:
            game = await table.game()
            assert game.status == "playing", "the match ended before the computers thought"
            if game.due_at is not None and game.due_at > utcnow() + timedelta(seconds=5):
                break
            if stepping is None or stepping.done():
                if stepping is not None:
                    stepping.result()
                stepping = asyncio.create_task(table.step(strategies))
            await asyncio.sleep(0.01)
        lease, move = game.due_at, game.move
        await bot.restart(signal.SIGKILL)
        await _until(lambda g: g.move > move, runner)
        assert utcnow() < lease, "the restarted process waited out its predecessor's lease"
        if stepping is not None:
            await stepping
    finally:
        await bot.stop()
        await runner.close()
