"""The durable outbox, end to end: a decided message is delayed by Telegram's errors,
never dropped, and survives a crash between the move's commit and its sending."""

from __future__ import annotations

import pytest

from core import Match
from telegram_bot.chat import render
from telegram_bot.chat.i18n import get_translator
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import OutboxMessage

from .driver import BotRunner, Table, by_level
from .test_game_flow import _data, _open, _people


async def _lobby(emu, runner, people):
    group = emu.add_group("Outbox", members=people, admins=people[:1])
    game, lobby = await _open(emu, runner, group, people[0], timer=30, target=1)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    return group, game, lobby


def _hand_sends(emu, user):
    return [
        c
        for c in emu.calls
        if c.method == "sendMessage" and c.chat_id == user.id and c.error_code is None
    ]


async def test_a_rate_limited_deal_is_delayed_not_dropped(emu, runner):
    """Five 429s on the private message that deals a hand: the hand still arrives
    (once), and the player is not timed out or marked away for it."""
    people = await _people(emu, ["Ann", "Ben"], lang="en")
    ann, ben = people
    group, game, lobby = await _lobby(emu, runner, people)
    emu.inject_error("sendMessage", chat_id=ben.id, code=429, retry_after=1, times=5)
    before = len(_hand_sends(emu, ben))
    await emu.press(ann, group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()

    limited = [c for c in emu.calls if c.chat_id == ben.id and c.error_code == 429]
    assert len(limited) == 5
    assert len(_hand_sends(emu, ben)) == before + 1, "Ben's hand was sent exactly once"
    table = Table(emu, runner, group, people)
    game = await table.game()
    assert table.hand_message(game, ben) is not None
    assert not any(s.get("away") or s.get("timeouts") for s in game.seats)
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(4):
        await table.step(strategies)


async def test_a_player_who_blocked_the_bot_gets_their_hand_on_return(emu, runner):
    people = await _people(emu, ["Cal", "Dee"], lang="en")
    cal, dee = people
    group, game, lobby = await _lobby(emu, runner, people)
    dee.block_bot()
    await emu.press(cal, group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    game = await Table(emu, runner, group, people).game()
    assert str(dee.id) not in (game.private_messages or {}), "the deal to Dee was refused"

    await emu.send_message(dee, dee.private_chat_id, "/start")  # unblocks, as in Telegram
    await runner.settle()
    game = await Table(emu, runner, group, people).game()
    hand = Table(emu, runner, group, people).hand_message(game, dee)
    match = Match.from_json(game.state)
    seat = next(s for s in range(match.n) if game.seats[match.order[s]].get("user_id") == dee.id)
    assert hand.source == render.private_text(game, match, seat, get_translator("en"))


async def test_messages_decided_before_a_crash_are_sent_after_the_restart(emu, db_url):
    """The move is committed with its messages; the process dies before sending any.
    The next start sends them all: hands, table, nothing twice."""
    runner = BotRunner(emu, db_url)
    await runner.start()
    people = await _people(emu, ["Eve", "Fox"], lang="en")
    eve, fox = people
    group, game, lobby = await _lobby(emu, runner, people)
    # Nothing is drained from here on: the process "dies" right after the commit.
    runner.service.outbox._drains.start_drain = lambda chat_id: None  # type: ignore[method-assign]
    sends_before = len(_hand_sends(emu, fox))
    await emu.press(eve, group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    async with runner.service.sessions() as s:
        queued = (await s.scalars(OutboxMessage.__table__.select())).all()
    assert len(queued) >= 3, "the deal and the table were decided with the start"
    assert len(_hand_sends(emu, fox)) == sends_before, "no hand went out before the crash"
    await runner.crash()

    runner2 = BotRunner(emu, db_url)
    await runner2.start()
    try:
        await runner2.settle()
        table = Table(emu, runner2, group, people)
        game = await table.game()
        for person in people:
            assert table.hand_message(game, person) is not None
        async with runner2.service.sessions() as s:
            assert await repo.slot_message_id(s, repo.table_slot(game.id)) is not None
            left = (await s.scalars(OutboxMessage.__table__.select())).all()
        assert left == []
        assert len(_hand_sends(emu, fox)) == sends_before + 1, "Fox's hand, once"
        strategies = {p.id: by_level("normal", seed=p.id) for p in people}
        for _ in range(4):
            await table.step(strategies)
    finally:
        await runner2.stop()


@pytest.mark.slow
async def test_flood_limits_on_every_kind_of_message_lose_and_double_nothing(emu, runner):
    """429s on the deal, the hand edits, the table edits, and the hand and match
    results: each is sent late, once, and the group ends with every result."""
    people = await _people(emu, ["Gil", "Hu"], lang="en")
    gil = people[0]
    group, game, lobby = await _lobby(emu, runner, people)
    mark = max(m.message_id for m in emu.chat_log(group.id))
    for person in people:
        emu.inject_error("sendMessage", chat_id=person.id, code=429, retry_after=1, times=2)
        emu.inject_error("editMessageText", chat_id=person.id, code=429, retry_after=1, times=3)
    emu.inject_error("editMessageText", chat_id=group.id, code=429, retry_after=1, times=3)
    emu.inject_error("sendMessage", chat_id=group.id, code=429, retry_after=1, times=4)
    await emu.press(gil, group.id, lobby.message_id, _data(game.id, "s"))
    table = Table(emu, runner, group, people)
    await table.play_out({p.id: by_level("normal", seed=p.id) for p in people})
    await runner.settle()

    assert len([c for c in emu.calls if c.error_code == 429]) == 2 * 2 + 2 * 3 + 3 + 4
    game = await table.game()
    match = Match.from_json(game.state)
    assert game.status == "finished"
    results = [
        m.text
        for m in emu.chat_log(group.id)
        if m.from_bot and m.message_id > mark and m.message_id != game.table_message_id
    ]
    assert len(results) == len(match.history) + 1 and len(set(results)) == len(results)
    shown = emu.message(group.id, game.table_message_id).source
    assert shown == render.table_text(game, match, get_translator("fa"))
    for person in people:  # each hand was dealt once, and shows the match's end
        hand = table.hand_message(game, person)
        seat = next(
            s for s in range(match.n) if game.seats[match.order[s]].get("user_id") == person.id
        )
        assert hand.source == render.private_text(game, match, seat, get_translator("en"))
    async with runner.service.sessions() as s:
        assert (await s.scalars(OutboxMessage.__table__.select())).all() == []
