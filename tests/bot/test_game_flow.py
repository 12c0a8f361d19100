"""End to end: people in a Telegram group play Hokm with the real bot.

Each test runs python-telegram-bot's real Application against the Bot API emulator
and a real database, and reads only what Telegram would show each person.
"""

from __future__ import annotations

import re

import pytest

from core import Match, Phase, PlayCard
from telegram_bot.platform.storage import repo

from .driver import Table, assert_no_private_hand_in, buttons, by_level, lowest_card


async def _people(emu, names, lang="fa", start=True):
    users = [emu.add_user(n, language_code=lang) for n in names]
    for u in users:
        if start:
            await emu.send_message(u, u.private_chat_id, "/start")
    return users


async def _open(emu, runner, group, owner, players=None, **settings):
    # The owner's /start first: updates are handled concurrently, and /newgame seats
    # its sender only once the bot knows it may write to them.
    await runner.settle()
    await emu.send_message(owner, group.id, "/newgame")
    await runner.settle()
    game = await Table(emu, runner, group, []).game()
    assert game is not None and game.status == "lobby"
    lobby = emu.chat_log(group.id)[-1]
    if players is not None:
        settings = {"players": players, **settings}
    for name, value in settings.items():
        h = await emu.press(owner, group.id, lobby.message_id, f"o:{game.id}::{name}={value}")
        await runner.settle()
        assert h.answer is not None and not h.answer.show_alert, (name, value, h.answer)
    game = await Table(emu, runner, group, []).game()
    for name, value in settings.items():
        assert game.settings[name] == value, (name, game.settings)
    return game, lobby


def _data(game_id, action, arg=""):
    return f"{action}:{game_id}" + (f"::{arg}" if arg else "")


@pytest.mark.slow
async def test_four_people_play_a_full_persian_match_with_a_kot(emu, db_url):
    from .conftest import BotRunner

    # Deal seed 4 with these strategies gives a hakem-kot and a kot (checked against
    # the engine alone); the bot must announce both.
    runner = BotRunner(emu, db_url, deal_seed=4)
    await runner.start()
    try:
        await _full_persian_match(emu, runner)
    finally:
        await runner.stop()


async def _full_persian_match(emu, runner):
    people = await _people(emu, ["سارا", "علی", "مریم", "رضا"])
    group = emu.add_group("حکم‌بازها", members=people, admins=[people[0]])
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
        await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()

    table = Table(emu, runner, group, people)
    game = await table.game()
    match = Match.from_json(game.state)
    # Team of seats 0 and 2 plays well (the plain rule player, normal0, with which
    # the kot and hakem-kot were checked), the other side throws its lowest cards.
    strategies = {}
    for seat in range(4):
        uid = game.seats[match.order[seat]]["user_id"]
        strategies[uid] = by_level("normal0", seed=seat) if seat % 2 == 0 else lowest_card
    await table.play_out(strategies)
    await runner.settle()

    texts = [m.text for m in emu.chat_log(group.id)]
    joined = "\n".join(texts)
    assert "بازی تمام شد" in joined  # match over
    # Kot and hakem-kot name the hand, the side that took no trick, the points and who
    # scores, in one line.
    assert re.search("^دور [۰-۹]+: کوت! تیم ۲ کوت شد؛ ۲ امتیاز برای تیم ۱$", joined, re.M)
    assert re.search(
        "^دور [۰-۹]+: حاکم‌کوت! تیم حاکم \\(تیم ۲\\) کوت شد؛ ۳ امتیاز برای تیم ۱$", joined, re.M
    )
    assert "حاکم دور بعد: " in joined  # every hand result but the last names the next hakem
    assert "۷" in joined  # Persian digits in the score
    assert table.checks > 100
    assert_no_private_hand_in(emu, group)
    async with runner.service.sessions() as s:
        board = await repo.leaderboard(s, group.id)
    assert {row.user_id for row in board} == {p.id for p in people}
    assert sum(row.matches_won for row in board) == 2  # one winning team of two
    await emu.send_message(people[0], group.id, "/score")
    await runner.settle()
    # partners joined by «و», each name isolated
    assert "— \u2068سارا\u2069 و \u2068مریم\u2069 (۸ به ۰)" in emu.chat_log(group.id)[-1].text


async def test_three_players_with_a_computer_seat_in_english(emu, runner):
    people = await _people(emu, ["Ann", "Ben"], lang="en")
    group = emu.add_group("Card night", members=people, admins=[people[0]])
    await emu.send_message(people[0], group.id, "/language")
    await runner.settle()
    lang_msg = emu.chat_log(group.id)[-1]
    await emu.press(people[0], group.id, lang_msg.message_id, "g:::c=en")
    await runner.settle()
    assert emu.message(group.id, lang_msg.message_id).text == "Language: English"
    game, lobby = await _open(emu, runner, group, people[0], timer=0, target=1)
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "o", "players=3"))
    await runner.settle()
    await emu.press(people[1], group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    await table.play_out({p.id: by_level("normal", seed=p.id) for p in people})
    joined = "\n".join(m.text for m in emu.chat_log(group.id))
    assert "Match over" in joined
    assert re.search(r"^Hand \d+: (.+ won, \d+ to \d+ to \d+|Kot! .+|Hakem-kot! .+)$", joined, re.M)
    game = await table.game()
    assert Match.from_json(game.state).variant.players == 3


async def test_two_players_draw_phase_through_buttons(emu, runner):
    people = await _people(emu, ["Kian"], lang="en")
    group = emu.add_group("Duo", members=people, admins=people)
    game, lobby = await _open(emu, runner, group, people[0], timer=0, target=1)
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "o", "players=2"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    await table.play_out({people[0].id: by_level("normal", seed=3)})
    game = await table.game()
    match = Match.from_json(game.state)
    assert match.is_over and match.variant.players == 2
    assert table.presses > 13  # discards, draws and tricks were pressed


async def test_stale_forged_and_out_of_turn_presses_change_nothing(emu, runner):
    people = await _people(emu, ["Ava", "Bo"], lang="en")
    stranger = (await _people(emu, ["Eve"], lang="en"))[0]
    group = emu.add_group("G", members=[*people, stranger], admins=[people[0]])
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    await emu.press(people[1], group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    # A non-owner, non-admin cannot start.
    h = await emu.press(stranger, group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    assert h.answer.show_alert and "Only the player" in h.answer.text
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    game = await table.game()
    match = Match.from_json(game.state)
    # Bring the game to a human's card turn.
    for _ in range(20):
        if match.phase is Phase.PLAY and game.seats[match.order[match.turn]].get("user_id"):
            break
        await table.step({p.id: by_level("normal") for p in people})
        game = await table.game()
        match = Match.from_json(game.state)
    seat = match.turn
    uid = game.seats[match.order[seat]]["user_id"]
    user = next(p for p in people if p.id == uid)
    other = next(p for p in people if p.id != uid)
    before = (game.move, game.state)
    msg = table.hand_message(game, user)

    async def press_and_check(u, chat_id, message_id, data, expect):
        h = await emu.press(u, chat_id, message_id, data)
        await runner.settle()
        assert h.answer is not None and h.answer.show_alert, data
        assert expect in h.answer.text, (data, h.answer.text)
        g = await table.game()
        assert (g.move, g.state) == before, data

    h = match.hand_no
    # A card button from an earlier hand, and a trump button from an earlier move.
    card = match.legal_cards(seat)[0]
    await press_and_check(
        user, user.private_chat_id, msg.message_id, f"p:{game.id}:{h + 1}:{card.ascii}", "earlier"
    )
    await press_and_check(
        user, user.private_chat_id, msg.message_id, f"t:{game.id}:{game.move - 1}:S", "earlier"
    )
    # Another game id.
    await press_and_check(
        user, user.private_chat_id, msg.message_id, f"p:zzzzzz:{h}:{card.ascii}", "earlier game"
    )
    # Malformed data.
    await press_and_check(user, user.private_chat_id, msg.message_id, "p:%%%:1", "not valid")
    # The other player presses out of turn.
    other_msg = table.hand_message(game, other)
    other_seat = next(
        s for s in range(match.n) if game.seats[match.order[s]].get("user_id") == other.id
    )
    other_card = match.hand_of(other_seat)[0]
    await press_and_check(
        other,
        other.private_chat_id,
        other_msg.message_id,
        f"p:{game.id}:{h}:{other_card.ascii}",
        "Not your turn",
    )
    # A stranger forges a press on the group's table message.
    await press_and_check(
        stranger, group.id, game.table_message_id, f"p:{game.id}:{h}:{card.ascii}", "not playing"
    )
    # A card that breaks follow-suit.
    if match.trick:
        led = match.trick[0][1].suit
        off = [c for c in match.hand_of(seat) if c.suit != led]
        if off and any(c.suit == led for c in match.hand_of(seat)):
            await press_and_check(
                user,
                user.private_chat_id,
                msg.message_id,
                f"p:{game.id}:{h}:{off[0].ascii}",
                "must follow",
            )
    # A card not in the hand.
    foreign = next(c for c in match.hand_of(other_seat))
    await press_and_check(
        user,
        user.private_chat_id,
        msg.message_id,
        f"p:{game.id}:{h}:{foreign.ascii}",
        "not in your hand",
    )


async def test_two_presses_at_the_same_moment_play_once(emu, runner):
    import asyncio

    people = await _people(emu, ["Ada"], lang="en")
    group = emu.add_group("G2", members=people, admins=people)
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    strategies = {people[0].id: by_level("normal")}
    for _ in range(30):
        game = await table.game()
        match = Match.from_json(game.state)
        if (
            match.phase is Phase.PLAY
            and match.turn is not None
            and not match.trick
            and len(match.legal_cards(match.turn)) >= 2
        ):
            break
        await table.step(strategies)
    cards = match.legal_cards(match.turn)[:2]
    msg = table.hand_message(game, people[0])
    h1, h2 = await asyncio.gather(
        emu.press(
            people[0],
            people[0].private_chat_id,
            msg.message_id,
            f"p:{game.id}:{match.hand_no}:{cards[0].ascii}",
        ),
        emu.press(
            people[0],
            people[0].private_chat_id,
            msg.message_id,
            f"p:{game.id}:{match.hand_no}:{cards[1].ascii}",
        ),
    )
    await runner.settle()
    after = Match.from_json((await table.game()).state)
    played = [c for t in after.tricks for _, c in t.plays] + [c for _, c in after.trick]
    assert (cards[0] in played) != (cards[1] in played), "exactly one of the two presses played"
    alerts = [h.answer for h in (h1, h2) if h.answer is not None and h.answer.show_alert]
    assert len(alerts) == 1


async def test_restart_in_the_middle_of_a_hand_loses_nothing(emu, db_url):
    from .conftest import BotRunner

    runner = BotRunner(emu, db_url)
    await runner.start()
    people = await _people(emu, ["Nima", "Lale"], lang="fa")
    group = emu.add_group("G3", members=people, admins=[people[0]])
    game, lobby = await _open(emu, runner, group, people[0], timer=0, target=1)
    await emu.press(people[1], group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(8):
        await table.step(strategies)
    game = await table.game()
    before = (game.move, game.state)
    await runner.crash()
    runner2 = BotRunner(emu, db_url)
    await runner2.start()
    try:
        await runner2.settle()
        table.runner = runner2
        game = await table.game()
        assert (game.move, game.state) == before
        await table.play_out(strategies)
        final = await table.game()
        assert Match.from_json(final.state).is_over
    finally:
        await runner2.stop()


async def test_timeout_plays_for_the_player_then_away_then_back(emu, db_url):
    from .conftest import BotRunner

    runner = BotRunner(emu, db_url)
    await runner.start()
    try:
        people = await _people(emu, ["Tara", "Uma"], lang="en")
        tara, uma = people
        group = emu.add_group("G4", members=people, admins=[tara])
        game, lobby = await _open(emu, runner, group, tara, timer=30)
        await emu.press(uma, group.id, lobby.message_id, _data(game.id, "j"))
        await runner.settle()
        await emu.press(tara, group.id, lobby.message_id, _data(game.id, "s"))
        await runner.settle()
        table = Table(emu, runner, group, people)
        svc = runner.service
        for _ in range(200):
            game = await table.game()
            match = Match.from_json(game.state)
            me = next(s for s in game.seats if s.get("user_id") == tara.id)
            if me.get("away"):
                break
            if game.seats[match.order[match.turn]].get("user_id") == tara.id:
                # Tara's clock runs out (the stored deadline is what a restart reads).
                assert game.deadline is not None
                table_msg = emu.message(group.id, game.table_message_id)
                assert "⏱ ۳۰ ثانیه" in table_msg.text  # the group sees the clock
                await svc.clock.time_out(game.id, game.move)
                await runner.settle()
                msg = table.hand_message(await table.game(), tara)
                assert "Time is up" in msg.text
            else:
                await table.step({uma.id: by_level("normal")})
        assert me["away"] is True and me["timeouts"] >= 2
        # Away: the computer plays Tara's cards; Uma's turns still wait for Uma.
        await runner.settle()
        game = await table.game()
        match = Match.from_json(game.state)
        assert game.seats[match.order[match.turn]].get("user_id") == uma.id
        msg = table.hand_message(game, tara)
        back = [
            b["callback_data"] for b in buttons(msg) if b.get("callback_data", "").startswith("r:")
        ]
        assert back, "an I'm back button is offered"
        await emu.press(tara, tara.private_chat_id, msg.message_id, back[0])
        await runner.settle()
        game = await table.game()
        me = next(s for s in game.seats if s.get("user_id") == tara.id)
        assert me["away"] is False and me["timeouts"] == 0
    finally:
        await runner.stop()


async def test_inline_mode_plays_from_the_group(emu, runner):
    people = await _people(emu, ["Omid"], lang="en")
    group = emu.add_group("G5", members=people, admins=people)
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    strategies = {people[0].id: by_level("normal")}
    for _ in range(30):
        game = await table.game()
        match = Match.from_json(game.state)
        if match.phase is Phase.PLAY and match.turn is not None:
            break
        await table.step(strategies)
    seat = match.turn
    results = await emu.inline_query(people[0], group, "")
    titles = sorted(r["title"] for r in results)
    assert titles == sorted(str(c) for c in match.legal_cards(seat))
    await emu.choose_inline_result(people[0], group, results[0])
    await runner.settle()
    after = Match.from_json((await table.game()).state)
    played = [c for t in after.tricks for _, c in t.plays] + [c for _, c in after.trick]
    assert any(str(c) == results[0]["title"] for c in played)
    # Someone else's inline query shows nothing of this hand.
    outsider = (await _people(emu, ["Pat"], lang="en"))[0]
    assert list(await emu.inline_query(outsider, group, "")) == []


async def test_late_joiner_through_the_deep_link(emu, runner):
    host = (await _people(emu, ["Host"], lang="en"))[0]
    late = (await _people(emu, ["Late"], lang="en", start=False))[0]
    group = emu.add_group("G6", members=[host, late], admins=[host])
    game, lobby = await _open(emu, runner, group, host, timer=0)
    h = await emu.press(late, group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    assert h.answer.url == f"https://t.me/HokmTestBot?start=join_{game.id}"
    await emu.send_message(late, late.private_chat_id, f"/start join_{game.id}")
    await runner.settle()
    game = await Table(emu, runner, group, []).game()
    assert any(s.get("user_id") == late.id for s in game.seats)
    assert "Late" in emu.chat_log(group.id)[-1].text or any(
        "Late" in m.text for m in emu.chat_log(group.id)
    )


async def test_commands_in_the_wrong_chat_get_a_translated_answer(emu, runner):
    user = (await _people(emu, ["Ali"], lang="fa"))[0]
    await emu.send_message(user, user.private_chat_id, "/newgame")
    await runner.settle()
    reply = emu.chat_log(user.private_chat_id)[-1].text
    assert "گروه" in reply  # "this command works in a group"


async def test_solo_match_in_private(emu, runner):
    user = (await _people(emu, ["Solo"], lang="en"))[0]
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    game = await Table(emu, runner, type("C", (), {"id": user.id})(), []).game()
    assert game is not None and game.status == "playing"
    assert sum(1 for s in game.seats if s.get("bot")) == 3
    # A second /play while this match runs is refused, and changes nothing.
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    assert "already playing" in emu.chat_log(user.private_chat_id)[-1].text
    again = await Table(emu, runner, type("C", (), {"id": user.id})(), []).game()
    assert again.id == game.id


#: What the calls-per-card tests count: every message sent, edited or deleted.
MESSAGE_CALLS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")


async def _play_counting(runner, table, strategies, ping_every_turn: bool) -> None:
    """Play the match out; with ``ping_every_turn`` every person's turn waits past the
    reminder time first (a sweep as of 20 s later), the most pings there can be."""
    from datetime import timedelta

    from telegram_bot.platform.storage.models import utcnow

    sweeper = runner.app.bot_data["sweeper"]
    while True:
        await runner.settle()
        if ping_every_turn:
            await sweeper.sweep(now=utcnow() + timedelta(seconds=20))
        if not await table.step(strategies):
            return


def _breakdown(calls) -> str:
    from collections import Counter

    return ", ".join(f"{m} {n}" for m, n in sorted(Counter(c.method for c in calls).items()))


@pytest.mark.parametrize("pings", ["no pings", "a ping every turn"])
async def test_calls_per_card_and_no_hand_in_group(emu, runner, pings):
    """Counts Bot API sends, edits and deletes per card played (reported in docs/performance.md)."""
    people = await _people(emu, ["A1", "A2", "A3", "A4"], lang="en")
    group = emu.add_group("Count", members=people, admins=[people[0]])
    game, lobby = await _open(emu, runner, group, people[0], timer=0, target=1)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    start = len(emu.calls)
    table = Table(emu, runner, group, people)
    every = pings != "no pings"
    await _play_counting(
        runner, table, {p.id: by_level("normal", seed=p.id) for p in people}, every
    )
    game = await table.game()
    match = Match.from_json(game.state)
    cards = sum(len(t.plays) for t in match.tricks)  # last hand
    calls = [c for c in emu.calls[start:] if c.method in MESSAGE_CALLS]
    per_card = len(calls) / max(1, table.presses)
    pinged = runner.app.bot_data["sweeper"].stats["pinged"]
    print(
        f"\nBot API sends+edits+deletes per human play (4 humans, {pings}): {per_card:.2f} "
        f"over {table.presses} plays ({_breakdown(calls)}; {pinged} pings)"
    )
    # The table and all four hand messages (each shows the trick and whose turn it is),
    # The table, the player's own hand and the hand of the player now on turn, plus
    # the deal, the trump call's new hand messages and the hand results; a ping is one
    # delete and one send.
    assert pinged == (table.presses if every else 0)
    assert per_card <= (5.5 if every else 3.5)
    assert_no_private_hand_in(emu, group)
    assert cards > 0
    assert isinstance(PlayCard, type)


@pytest.mark.parametrize("pings", ["no pings", "a ping every turn"])
async def test_calls_per_card_with_computer_seats(emu, runner, pings):
    """One person and three computers: computer plays join the table edits."""
    people = await _people(emu, ["Solo"], lang="en")
    group = emu.add_group("Solo table", members=people, admins=people)
    game, lobby = await _open(emu, runner, group, people[0], timer=0, target=1)
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    start = len(emu.calls)
    table = Table(emu, runner, group, people)
    every = pings != "no pings"
    await _play_counting(runner, table, {people[0].id: by_level("normal", seed=1)}, every)
    game = await table.game()
    match = Match.from_json(game.state)
    cards = 4 * sum(sum(h["tricks"]) for h in match.history)
    calls = [c for c in emu.calls[start:] if c.method in MESSAGE_CALLS]
    pinged = runner.app.bot_data["sweeper"].stats["pinged"]
    print(
        f"\nBot API sends+edits+deletes with 3 computer seats ({pings}): "
        f"{len(calls) / table.presses:.2f} per human play, {len(calls) / cards:.2f} per card "
        f"over {cards} cards ({_breakdown(calls)}; {pinged} pings)"
    )
    assert pinged == (table.presses if every else 0)
    # Table + own hand, hand results aside; a ping adds a delete and a send.
    assert len(calls) / table.presses <= (4.5 if every else 2.5)
    assert len(calls) / cards <= (1.5 if every else 1.0)
