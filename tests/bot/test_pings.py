"""End to end, in Persian and English: who is told that it is their turn.

A turn that waits gets one notifying message (a private re-post of the hand, or the
group table re-posted with a mention), the start of a match and the trump call notify
the people concerned, and the table comes back down when messages pushed it up.
Sweeps are run with an explicit time (no waiting for a clock), except in the test of
the periodic sweeper itself.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import update

from core import Match, Phase
from telegram_bot.chat.i18n import isolate
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game, utcnow
from telegram_bot.service.sweeper import claim
from testkit.simulation import BotRunner

from .driver import Table, buttons, by_level
from .test_game_flow import _data, _open, _people
from .test_table_talk import NAMES, _group

PRIVATE_PING = {"fa": "⏰ میز منتظر شماست.", "en": "⏰ The table is waiting for you."}
GROUP_PING = {"fa": "⏰ {name}، نوبت شماست.", "en": "⏰ {name}, it is your turn."}


async def _begin(emu, runner, group, people, **settings):
    game, lobby = await _open(emu, runner, group, people[0], timer=0, **settings)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
        await runner.settle()
    before = emu.mark()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    return Table(emu, runner, group, people), before


async def _on_turn(table, people):
    game = await table.game()
    match = Match.from_json(game.state)
    uid = game.seats[match.order[match.turn]]["user_id"]
    return game, match, next(p for p in people if p.id == uid)


def _sent_since(emu, mark: int) -> list[tuple[str, int | None]]:
    """The bot's calls since ``mark``, as (method, chat), but for its long polls: a
    getUpdates that ends in the window (its poll time-out) is not the bot acting."""
    return [(c.method, c.chat_id) for c in emu.calls[mark:] if c.method != "getUpdates"]


def _sweeper(runner):
    return runner.app.bot_data["sweeper"]


def _later(seconds: float):
    return utcnow() + timedelta(seconds=seconds)


async def _waited(table, seconds: float):
    """The moment the current turn has waited ``seconds`` (whatever the wall clock)."""
    return (await table.game()).updated_at + timedelta(seconds=seconds)


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_waiting_turn_is_pinged_once_in_private(emu, db_url, lang):
    runner = BotRunner(emu, db_url)
    await runner.start()
    try:
        people = await _people(emu, NAMES[lang][:2], lang=lang)
        group = await _group(emu, runner, people, lang)
        table, _ = await _begin(emu, runner, group, people)
        game, _, person = await _on_turn(table, people)
        mark = emu.mark()
        sweeper = _sweeper(runner)
        assert await sweeper.sweep(now=await _waited(table, 14)) == {}  # not long enough
        assert _sent_since(emu, mark) == []
        assert await sweeper.sweep(now=await _waited(table, 15)) == {"pinged": 1}
        await runner.settle()
        calls = _sent_since(emu, mark)
        assert calls == [("deleteMessage", person.id), ("sendMessage", person.id)]
        game = await table.game()
        hand = emu.message(person.id, game.private_messages[str(person.id)])
        assert hand.text.startswith(PRIVATE_PING[lang] + "\n") and buttons(hand)
        assert emu.chat_log(person.id, include_deleted=False)[-1] is hand  # at the bottom
        # Once a turn, across a restart too.
        assert await _sweeper(runner).sweep(now=_later(60)) == {}
        await runner.stop()
        runner = BotRunner(emu, db_url)
        await runner.start()
        table.runner = runner
        assert await _sweeper(runner).sweep(now=_later(60)) == {}
        # Their move replaces the ping: the same message, edited.
        strategies = {p.id: by_level("normal", seed=p.id) for p in people}
        await table.step(strategies)
        await runner.settle()
        assert not emu.message(person.id, hand.message_id).text.startswith("⏰")
        assert (await table.game()).private_messages[str(person.id)] == hand.message_id
        # The next person's turn is pinged in turn.
        game, _, person = await _on_turn(table, people)
        assert await _sweeper(runner).sweep(now=_later(20)) == {"pinged": 1}
    finally:
        await runner.stop()


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_group_chooses_mentions_or_no_pings(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:2], lang=lang)
    group = await _group(emu, runner, people, lang)
    table, _ = await _begin(emu, runner, group, people, ping_to="group", ping=30)
    game, _, person = await _on_turn(table, people)
    old_table = game.table_message_id
    sweeper = _sweeper(runner)
    assert await sweeper.sweep(now=await _waited(table, 29)) == {}  # the group chose 30 s
    mark = emu.mark()
    assert await sweeper.sweep(now=await _waited(table, 30)) == {"pinged": 1}
    await runner.settle()
    calls = _sent_since(emu, mark)
    assert calls == [("deleteMessage", group.id), ("sendMessage", group.id)]
    game = await table.game()
    board = emu.message(group.id, game.table_message_id)
    assert emu.message(group.id, old_table).deleted
    assert board.text.endswith(GROUP_PING[lang].format(name=isolate(person.first_name)))
    assert any(e.get("url") == f"tg://user?id={person.id}" for e in board.entities)
    # The next move edits the mention away.
    await table.step({p.id: by_level("normal", seed=p.id) for p in people})
    await runner.settle()
    assert "⏰" not in emu.message(group.id, game.table_message_id).text
    # The group's choice is kept for its next games; "off" sends nothing.
    async with runner.service.sessions() as s:
        chat = await repo.get_chat(s, group.id)
    assert chat.settings["ping_to"] == "group" and chat.settings["ping"] == 30
    await emu.send_message(people[0], group.id, "/cancel")
    await runner.settle()
    prompt = emu.chat_log(group.id)[-1]
    await emu.press(people[0], group.id, prompt.message_id, buttons(prompt)[0]["callback_data"])
    await runner.settle()
    table, _ = await _begin(emu, runner, group, people, ping=0)
    game = await table.game()
    assert game.settings["ping_to"] == "group"
    await runner.settle()  # the start's messages are all out before counting calls
    mark = emu.mark()
    assert await _sweeper(runner).sweep(now=_later(600)) == {}
    await runner.settle()  # and a ping sent late would still be counted
    assert _sent_since(emu, mark) == []


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_the_start_and_the_trump_call_notify(emu, runner, lang):
    people = await _people(emu, NAMES[lang], lang=lang)
    group = await _group(emu, runner, people, lang)
    table, before = await _begin(emu, runner, group, people)
    # The start: every person gets their hand as a new message (new messages notify).
    for p in people:
        assert len(emu.calls_to("sendMessage", p.private_chat_id, since=before)) == 1
    game, match, hakem = await _on_turn(table, people)
    assert match.phase is Phase.TRUMP
    mark = emu.mark()
    await table.step({hakem.id: by_level("normal", seed=1)})
    await runner.settle()
    game = await table.game()
    for p in people:
        sent = emu.calls_to("sendMessage", p.private_chat_id, since=mark)
        if p is hakem:  # they chose; their own message is edited
            assert sent == []
        else:  # the whole hand, as a new message at the bottom
            assert len(sent) == 1
            assert sent[0].result["message_id"] == game.private_messages[str(p.id)]
            assert len(emu.calls_to("deleteMessage", p.private_chat_id, since=mark)) == 1


async def test_the_sweeper_runs_by_itself(emu, db_url):
    runner = BotRunner(emu, db_url, sweep_seconds=0.02)
    await runner.start()
    try:
        people = await _people(emu, ["Sara"], lang="en")
        group = emu.add_group("Clock", members=people, admins=people)
        table, _ = await _begin(emu, runner, group, people)
        game, _, person = await _on_turn(table, people)
        async with runner.service.sessions.begin() as s:  # the turn has waited a minute
            await s.execute(
                update(Game)
                .where(Game.id == game.id)
                .values(updated_at=utcnow() - timedelta(minutes=1))
            )
        sweeper = _sweeper(runner)
        for _ in range(12000):  # until it pinged (the sweeper's clock is real)
            if sweeper.stats["pinged"]:
                break
            await asyncio.sleep(0.01)
        await runner.settle()
        assert sweeper.stats["pinged"] == 1
        hand = emu.message(person.id, (await table.game()).private_messages[str(person.id)])
        assert hand.text.startswith(PRIVATE_PING["en"])
    finally:
        await runner.stop()


async def test_a_game_held_by_another_process_is_skipped(emu, runner, db_url):
    if not db_url.startswith("postgresql"):
        pytest.skip("row locks: PostgreSQL (SQLite has one writer)")
    people = await _people(emu, ["Sara"], lang="en")
    group = emu.add_group("Locks", members=people, admins=people)
    table, _ = await _begin(emu, runner, group, people)
    game = await table.game()
    sessions = runner.service.sessions
    async with sessions.begin() as holder:
        assert (await claim(holder, game.id)).id == game.id
        async with sessions.begin() as other:
            assert await claim(other, game.id) is None
        # ... and a sweep leaves it for later rather than waiting.
        assert await _sweeper(runner).sweep(now=_later(60)) == {}
    assert await _sweeper(runner).sweep(now=_later(60)) == {"pinged": 1}


# ---------------------------------------------------------------- table re-post


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_the_table_comes_back_down_once_a_hand(emu, runner, lang):
    person = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    friend = (await _people(emu, ["Kian"], lang=lang))[0]
    group = await _group(emu, runner, [person, friend], lang)
    # 7 points take at least three hands (a hand is worth at most 3), so the match
    # cannot end before the second hand change this test looks at.
    table, _ = await _begin(emu, runner, group, [person], target=7)
    strategies = {person.id: by_level("normal", seed=3)}
    first = (await table.game()).table_message_id
    # People talk during the first hand (the bot cannot read it, privacy mode) and ask
    # for the score (it can): the table is pushed up.
    await table.step(strategies)
    await emu.send_message(friend, group.id, "nice one")
    await emu.send_message(friend, group.id, "/score")
    await runner.settle()
    hand_no = 1
    tables = [first]
    moved = []
    while len(moved) < 2:
        game = await table.game()
        assert game is not None and game.status == "playing", moved
        match = Match.from_json(game.state)
        if match.hand_no != hand_no:  # a new hand began: where is the table now?
            log = emu.chat_log(group.id, include_deleted=False)
            result = max(
                m.message_id for m in log if m.from_bot and m.message_id != game.table_message_id
            )
            moved.append(game.table_message_id != tables[-1])
            if moved[-1]:
                assert emu.message(group.id, tables[-1]).deleted
                assert game.table_message_id > result  # below the hand result
            tables.append(game.table_message_id)
            hand_no = match.hand_no
        await table.step(strategies)
    # The chat pushed the table up in hand 1: it came down. In hand 2 only the hand
    # result went below it: it stayed (at most once a hand, and not needlessly).
    assert moved == [True, False], moved
