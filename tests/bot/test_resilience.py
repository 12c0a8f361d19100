"""Telegram going wrong (429, 403, removed from the group) and the less common paths:
the bidding variant, scores and leaderboards, per-user languages, settings."""

from __future__ import annotations

import pytest

from core import Match, Phase
from telegram_bot.platform.storage import repo

from .driver import Table, by_level
from .test_game_flow import _data, _open, _people


async def _start_game(emu, runner, people, admins=None, **settings):
    group = emu.add_group("Table", members=people, admins=admins or people[:1])
    settings.setdefault("timer", 0)
    game, lobby = await _open(emu, runner, group, people[0], **settings)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    return group, Table(emu, runner, group, people)


async def test_a_flood_limit_on_the_table_never_stalls_the_game(emu, runner):
    people = await _people(emu, ["Fay", "Gus"], lang="en")
    group, table = await _start_game(emu, runner, people, target=1)
    game = await table.game()
    emu.inject_error(method="editMessageText", chat_id=group.id, code=429, retry_after=1, times=2)
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    moves_before = game.move
    for _ in range(6):
        await table.step(strategies)
    game = await table.game()
    assert game.move > moves_before + 5, "the game went on while the table was rate limited"
    await runner.settle()
    # Both injected 429s were met, and the table caught up with the latest state.
    limited = [c for c in emu.calls if c.method == "editMessageText" and c.error_code == 429]
    assert len(limited) == 2
    match = Match.from_json(game.state)
    table_msg = emu.message(group.id, game.table_message_id)
    if match.phase is Phase.PLAY and match.trick:
        assert str(match.trick[-1][1]) in table_msg.text


async def test_a_player_who_blocks_the_bot_does_not_break_the_game(emu, runner):
    people = await _people(emu, ["Hal", "Ivy"], lang="en")
    hal, ivy = people
    _group, table = await _start_game(emu, runner, people, target=1, timer=30)
    ivy.block_bot()
    svc = runner.service
    before = (await table.game()).move
    for _ in range(12):
        game = await table.game()
        match = Match.from_json(game.state)
        if match.is_over:  # a one-point match can end within these steps
            break
        if game.seats[match.order[match.turn]].get("user_id") == ivy.id:
            # Ivy cannot see her cards any more; her clock runs out and the
            # computer plays for her (the stored deadline is what a restart reads).
            await svc.clock.time_out(game.id, game.move)
            await runner.settle()
        else:
            await table.step({hal.id: by_level("normal")})
    assert (await table.game()).move > before + 6
    refused = [c for c in emu.calls if c.chat_id == ivy.id and c.error_code == 403]
    assert refused, "edits to Ivy's private chat were refused (and ignored)"


async def test_the_bot_removed_from_the_group_keeps_private_play_going(emu, runner):
    people = await _people(emu, ["Jan", "Kim"], lang="en")
    group, table = await _start_game(emu, runner, people, target=1)
    group.remove_bot()
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    game = await table.game()
    before = game.move
    for _ in range(4):
        await table.step(strategies)
    assert (await table.game()).move > before


@pytest.mark.slow
@pytest.mark.one_backend
async def test_the_bidding_variant_through_the_buttons(emu, runner):
    people = await _people(emu, ["Lea"], lang="en")
    group = emu.add_group("Spades", members=people, admins=people)
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "o", "kind=bidding"))
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "o", "target=100"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    await table.play_out({people[0].id: by_level("normal", seed=5)})
    game = await table.game()
    match = Match.from_json(game.state)
    assert match.is_over and match.variant.kind == "bidding"
    assert max(match.scores) >= 100
    joined = "\n".join(m.text for m in emu.chat_log(group.id))
    assert "بازی تمام شد" in joined  # the group speaks Persian by default


async def test_forged_settings_are_refused(emu, runner):
    people = await _people(emu, ["Max"], lang="en")
    group = emu.add_group("S", members=people, admins=people)
    game, lobby = await _open(emu, runner, group, people[0])
    for forged in ("target=9999", "players=5", "timer=1", "level=god", "nosuch=1"):
        h = await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "o", forged))
        await runner.settle()
        assert h.answer.show_alert, forged
    fresh = await Table(emu, runner, group, []).game()
    assert fresh.settings == game.settings


async def test_one_game_per_group_and_one_game_per_person(emu, runner):
    people = await _people(emu, ["Ned", "Ola"], lang="en")
    g1 = emu.add_group("One", members=people, admins=people)
    g2 = emu.add_group("Two", members=people, admins=people)
    for g in (g1, g2):
        await emu.send_message(people[0], g.id, "/language")
        await runner.settle()
        await emu.press(people[0], g.id, emu.chat_log(g.id)[-1].message_id, "g:::c=en")
        await runner.settle()
    game1, lobby1 = await _open(emu, runner, g1, people[0])
    await emu.send_message(people[0], g1.id, "/newgame")
    await runner.settle()
    assert "already open" in emu.chat_log(g1.id)[-1].text
    await emu.press(people[1], g1.id, lobby1.message_id, _data(game1.id, "j"))
    await runner.settle()
    game2, lobby2 = await _open(emu, runner, g2, people[0])
    h = await emu.press(people[1], g2.id, lobby2.message_id, _data(game2.id, "j"))
    await runner.settle()
    assert h.answer.show_alert and "another game" in h.answer.text
    # Two /newgame at the same moment in a fresh group: one lobby, one refusal.
    import asyncio

    g3 = emu.add_group("Three", members=people, admins=people)
    await asyncio.gather(
        emu.send_message(people[0], g3.id, "/newgame"),
        emu.send_message(people[1], g3.id, "/newgame"),
    )
    await runner.settle()
    replies = [m.text for m in emu.chat_log(g3.id) if m.from_bot]
    assert len(replies) == 2
    assert sum("بازی تازه" in t for t in replies) == 1  # one lobby (Persian group)


async def test_scores_leaderboard_and_languages(emu, runner):
    people = await _people(emu, ["پرستو", "Quinn"], lang="fa")
    # Quinn reads private messages in English; the group stays Persian.
    await emu.send_message(people[1], people[1].private_chat_id, "/language")
    await runner.settle()
    lang_msg = emu.chat_log(people[1].private_chat_id)[-1]
    await emu.press(people[1], people[1].private_chat_id, lang_msg.message_id, "g:::u=en")
    await runner.settle()
    assert emu.message(people[1].private_chat_id, lang_msg.message_id).text == "Language: English"
    # Parastoo picks Persian explicitly: the confirmation is in Persian.
    await emu.send_message(people[0], people[0].private_chat_id, "/language")
    await runner.settle()
    fa_msg = emu.chat_log(people[0].private_chat_id)[-1]
    await emu.press(people[0], people[0].private_chat_id, fa_msg.message_id, "g:::u=fa")
    await runner.settle()
    assert emu.message(people[0].private_chat_id, fa_msg.message_id).text == "زبان: فارسی"
    group, table = await _start_game(emu, runner, people, target=1)
    game = await table.game()
    quinn_msg = table.hand_message(game, people[1])
    parastoo_msg = table.hand_message(game, people[0])
    assert any(w in quinn_msg.text for w in ("Hand", "Trump", "hakem"))
    assert "دور" in parastoo_msg.text or "حکم" in parastoo_msg.text
    await table.play_out({p.id: by_level("normal", seed=p.id) for p in people})
    await emu.send_message(people[0], group.id, "/score")
    await runner.settle()
    score = emu.chat_log(group.id)[-1].text
    assert "بازی‌های اخیر" in score or "اخیر" in score
    assert any(month in score for month in ("آذر", "آبان", "دی"))  # a Jalali date
    await emu.send_message(people[0], group.id, "/stats")
    await runner.settle()
    stats = emu.chat_log(group.id)[-1].text
    assert "پرستو" in stats and "Quinn" in stats


async def test_webhook_mode_receives_and_answers(emu, db_url):
    import socket

    from .conftest import BotRunner

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    runner = BotRunner(emu, db_url)
    runner.webhook_port = port
    await runner.start()
    try:
        user = (await _people(emu, ["Web"], lang="en"))[0]
        await runner.settle()
        reply = emu.chat_log(user.private_chat_id)[-1]
        assert reply.from_bot and "Hokm" in reply.text
        assert any(c.method == "setWebhook" for c in emu.calls)
        assert not any(c.method == "getUpdates" for c in emu.calls)
    finally:
        await runner.stop()


async def test_a_deleted_table_message_is_posted_again(emu, runner):
    people = await _people(emu, ["Rod", "Sue"], lang="en")
    group, table = await _start_game(emu, runner, people, target=1)
    game = await table.game()
    old_table = game.table_message_id
    emu.message(group.id, old_table).deleted = True  # an admin deleted it
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(3):
        await table.step(strategies)
    await runner.settle()
    game = await table.game()
    assert game.table_message_id != old_table
    fresh = emu.message(group.id, game.table_message_id)
    assert not fresh.deleted
    assert "حکم" in fresh.text  # the group speaks Persian by default


@pytest.mark.slow
async def test_the_rate_limiter_keeps_a_busy_group_within_telegram_limits(emu, tmp_path):
    """With python-telegram-bot's limiter on (as in production), a fast table stays
    under 20 group messages a minute while presses are still answered at once."""
    from telegram_bot.chat import render
    from telegram_bot.chat.i18n import get_translator

    from .conftest import BotRunner

    emu.enforce_limits(per_group_per_minute=20, per_second=30)
    runner = BotRunner(emu, f"sqlite+aiosqlite:///{tmp_path / 'rl.sqlite3'}", rate_limit=True)
    runner.wait_for_edits = False  # the table may lag behind; the game must not
    await runner.start()
    try:
        people = await _people(emu, ["Vic"], lang="en")
        group, table = await _start_game(emu, runner, people)
        table.check_hidden = False
        strategies = {people[0].id: by_level("normal", seed=2)}
        before = (await table.game()).move
        since = emu.mark()
        for _ in range(26):
            if not await table.step(strategies):
                break
        game = await table.game()
        assert game.move > before + 25
        # Presses never waited for the group's budget: the moves went on while the
        # table was edited less often than once a move (however slow the machine).
        assert emu.count_calls(chat_id=group.id, since=since, ok=True) < game.move - before
        # The table catches up with the newest state: edits were coalesced, not queued.
        runner.wait_for_edits = True
        await runner.settle()
        match = Match.from_json(game.state)
        shown = emu.message(group.id, game.table_message_id).source
        assert shown == render.table_text(game, match, get_translator("fa"))
        group_calls = emu.count_calls(chat_id=group.id, ok=True)
        assert group_calls < game.move - before
        assert emu.rate_violations == 0, emu.rate_violation_log
    finally:
        await runner.stop()


async def test_a_restart_rearms_the_turn_timer_from_the_stored_deadline(emu, db_url):
    from datetime import timedelta

    from telegram_bot.platform.storage.models import utcnow

    from .conftest import BotRunner

    runner = BotRunner(emu, db_url)
    await runner.start()
    people = await _people(emu, ["Wes", "Xia"], lang="en")
    _group, table = await _start_game(emu, runner, people, timer=30)
    game = await table.game()
    assert game.deadline is not None  # a human is on turn with the clock running
    move = game.move
    await runner.crash()
    # The bot is down while the player's time runs out.
    async with _session(db_url) as s:
        stored = await repo.get_game(s, game.id)
        stored.deadline = utcnow() - timedelta(seconds=1)
        await repo.save_game(s, stored, stored.move)
    runner2 = BotRunner(emu, db_url)
    await runner2.start()
    try:
        table.runner = runner2
        await runner2.settle()
        after = await table.game()
        assert after.move > move, "the computer played for the player whose time ran out"
        timed_out = [s for s in after.seats if s.get("timeouts")]
        assert len(timed_out) == 1
    finally:
        await runner2.stop()


def _session(db_url):
    import contextlib

    from telegram_bot.platform.storage.db import create_engine, session_factory

    @contextlib.asynccontextmanager
    async def scope():
        engine = create_engine(db_url)
        try:
            async with session_factory(engine).begin() as s:
                yield s
        finally:
            await engine.dispose()

    return scope()
