"""A restarted single process: it takes its dead predecessor's computer turns over at
once, answers the presses left unanswered, and a SIGTERM sends what is queued."""

from __future__ import annotations

import asyncio
import html
import re
import signal
import time
from datetime import timedelta

import pytest

from core import ChooseTrump, Match, PlayCard
from telegram_bot.chat import render
from telegram_bot.chat.i18n import get_translator
from telegram_bot.platform.storage.db import normalize_url
from telegram_bot.platform.storage.models import utcnow
from testkit.chaos import ProcessRunner, bot_process, open_match
from testkit.simulation import Table, by_level

#: Seconds a polling loop may see nothing move before it fails: a hang, not slowness.
STALL = 120.0


class _Progress:
    """Fails a polling loop whose marker (a move number, a count of calls) stayed the
    same for :data:`STALL` seconds: the loops wait on progress, and a bot that stops
    making any fails the test instead of hanging CI."""

    def __init__(self) -> None:
        self.marker: object = None
        self.since = time.monotonic()

    def check(self, marker: object) -> None:
        if marker != self.marker:
            self.marker, self.since = marker, time.monotonic()
            return
        assert time.monotonic() - self.since < STALL, f"no progress for {STALL:.0f} s"


async def _until(check, runner: ProcessRunner):
    """Poll the database until ``check(game)`` holds (waits on progress)."""
    progress = _Progress()
    while True:
        game = await Table(runner.emu, runner, runner.group, []).game()
        if check(game):
            return game
        progress.check(game.move)
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
        progress = _Progress()
        while True:
            game = await table.game()
            progress.check(game.move)
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


@pytest.mark.slow
@pytest.mark.one_backend
async def test_sigterm_sends_the_queued_messages_before_exiting(emu, db_url, tmp_path):
    """The person plays as fast as their hand allows, so the group's paced table edits
    and results queue up; SIGTERM the moment the match is stored as over: everything
    decided is in the chats before the process exits, within the outbox's grace."""
    log_path = tmp_path / "bot.log"
    bot = bot_process(emu, normalize_url(db_url), log_path, HOKM_RATE_LIMIT="1")
    user = emu.add_user("Quick", language_code="en")
    group = emu.add_group("Closing", members=[user], admins=[user])
    runner = ProcessRunner(emu, bot, normalize_url(db_url), group.id)
    runner.group = group
    table = Table(emu, runner, group, [user])
    await bot.start()
    try:
        await open_match(runner, table, [user], ["timer=0", "target=1", "level=easy"])
        strategy = by_level("easy", seed=2)
        pressed = -1
        progress = _Progress()
        while True:
            game = await table.game()
            if game.status == "finished":
                break
            progress.check(game.move)
            match = Match.from_json(game.state)
            mid = (game.private_messages or {}).get(str(user.id))
            mine = match.turn is not None and game.seats[match.order[match.turn]].get("user_id")
            if mine and mid is not None and game.move != pressed:
                action = strategy(match.view(match.turn))
                if isinstance(action, PlayCard):
                    data = f"p:{game.id}:{match.hand_no}:{action.card.ascii}"
                elif isinstance(action, ChooseTrump):
                    data = f"t:{game.id}:{game.move}:{action.suit.letter}"
                else:  # pragma: no cover
                    raise AssertionError(action)
                pressed = game.move
                await emu.press(user, user.private_chat_id, mid, data)
            await asyncio.sleep(0.01)
        queued = await runner.outbox_rows()
        await bot.stop(signal.SIGTERM)
        assert bot.proc.returncode is not None
        log = log_path.read_text()
        assert "still queued" not in log, log[-2000:]
        assert await runner.outbox_rows() == 0
        result = render.match_result_text(game, Match.from_json(game.state), get_translator("fa"))
        shown = [m.text for m in emu.chat_log(group.id, include_deleted=False) if m.from_bot]
        assert any(_plain(result)[:40] in _plain(t) for t in shown), (queued, shown[-3:])
    finally:
        await bot.stop()
        await runner.close()


def _plain(text: str | None) -> str:
    return re.sub(r"<[^>]+>", "", html.unescape(text or "")).strip()


@pytest.mark.slow
async def test_a_press_left_unanswered_at_a_kill_is_answered_after_the_restart(
    emu, db_url, tmp_path
):
    """The play is stored, the answer never reaches Telegram (here: every answer
    fails), the process is killed: the next one answers the press from the store."""
    bot = bot_process(emu, normalize_url(db_url), tmp_path / "bot.log")
    user = emu.add_user("Pressed", language_code="en")
    group = emu.add_group("Answers", members=[user], admins=[user])
    runner = ProcessRunner(emu, bot, normalize_url(db_url), group.id)
    runner.group = group
    table = Table(emu, runner, group, [user])
    await bot.start()
    try:
        await open_match(runner, table, [user], ["timer=0", "target=1", "level=easy"])
        await runner.settle()
        game = await table.game()
        match = Match.from_json(game.state)
        assert game.seats[match.order[match.turn]].get("user_id") == user.id
        action = by_level("easy", seed=3)(match.view(match.turn))
        if isinstance(action, PlayCard):
            data = f"p:{game.id}:{match.hand_no}:{action.card.ascii}"
        else:
            data = f"t:{game.id}:{game.move}:{action.suit.letter}"
        emu.inject_error("answerCallbackQuery", code=502, times=None)
        mark = emu.mark()
        handle = await emu.press(
            user, user.private_chat_id, table.hand_message(game, user).message_id, data
        )
        move = game.move
        # Until the play is stored and its answer has failed once.
        progress = _Progress()
        while not any(
            c.method == "answerCallbackQuery" and c.ok is False for c in emu.calls[mark:]
        ):
            progress.check(sum(c.method != "getUpdates" for c in emu.calls[mark:]))
            await asyncio.sleep(0.01)
        assert (await table.game()).move > move
        await bot.stop(signal.SIGKILL)
        emu.clear_errors()
        assert handle.answer is None
        await bot.start()
        await runner.settle()
        assert handle.answer is not None, "the press was never answered"
        assert not handle.answer.show_alert, handle.answer
    finally:
        await bot.stop()
        await runner.close()
