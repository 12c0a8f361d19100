"""End to end, in Persian and English: what the bot says at the table and around it.

The private hand view, the greeting, /help, /rules, the command menus, labelled
settings, kot and tie announcements, the out-of-turn inline hint, /play's language
and the texts of /score and /stats, read as each person sees them in the emulator.
"""

from __future__ import annotations

import re

import pytest

from core import Match, Phase, cards_in
from telegram_bot.chat.i18n import isolate, to_persian_digits

from .driver import Table, buttons, by_level, lowest_card
from .test_game_flow import _data, _open, _people

PERSIAN = re.compile("[\u0600-\u06ff]")
NAMES = {"fa": ["سارا", "علی", "مریم", "رضا"], "en": ["Sara", "Ali", "Maryam", "Reza"]}


def _n(lang: str, n: int) -> str:
    return to_persian_digits(n) if lang == "fa" else str(n)


async def _group(emu, runner, people, lang, title="Table"):
    group = emu.add_group(title, members=people, admins=[people[0]])
    if lang == "en":
        await emu.send_message(people[0], group.id, "/language")
        await runner.settle()
        await emu.press(people[0], group.id, emu.chat_log(group.id)[-1].message_id, "g:::c=en")
        await runner.settle()
    return group


async def _start(emu, runner, group, people, **settings):
    game, lobby = await _open(emu, runner, group, people[0], timer=0, **settings)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
        await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    return Table(emu, runner, group, people)


async def _command(emu, runner, user, chat_id, text):
    await emu.send_message(user, chat_id, text)
    await runner.settle()
    return emu.chat_log(chat_id)[-1].text


# ------------------------------------------------------------- the private view


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_the_hand_message_shows_partner_score_trick_and_whose_turn(emu, runner, lang):
    people = await _people(emu, NAMES[lang], lang=lang)
    group = await _group(emu, runner, people, lang)
    table = await _start(emu, runner, group, people)
    game = await table.game()
    board = emu.message(group.id, game.table_message_id).text
    if lang == "fa":  # «حکم» alone would stack two meanings over «حکم: …»
        assert board.startswith("بازی حکم · دور ۱")
        assert "برای تعیین حاکم، ورق‌ها روباز پخش شد تا اولین آس بیاید: " in board
    else:
        assert board.startswith("Hokm · Hand 1")
        assert "To choose the hakem, cards were dealt face up until the first ace: " in board
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    # Into the second trick or later, with cards on the table.
    for _ in range(60):
        game = await table.game()
        match = Match.from_json(game.state)
        if match.phase is Phase.PLAY and match.trick and match.tricks:
            break
        await table.step(strategies)
    assert match.phase is Phase.PLAY and match.trick
    by_seat = {s: game.seats[match.order[s]] for s in range(4)}
    name = {s: isolate(by_seat[s]["name"]) for s in range(4)}
    turn = match.turn
    view = match.view(None)
    for seat in range(4):
        user = next(p for p in people if p.id == by_seat[seat]["user_id"])
        text = table.hand_message(game, user).text
        partner = (seat + 2) % 4
        you = "شما" if lang == "fa" else "you"
        # The partner is named on the team's line, beside «شما» / "you" (below), not
        # again on a line of their own.
        assert "یار شما" not in text and "Your partner" not in text
        if lang == "fa":
            assert f"حاکم: {name[view.hakem]}" in text or "شما حاکم هستید" in text
            assert "حکم: " in text
        else:
            assert f"Hakem: {name[view.hakem]}" in text or "you are the hakem" in text
            assert "Trump: " in text
        # Live for the player on turn and the one who just played (a card by someone
        # else edits only the hand on turn: 3 calls a card, not 5).
        if seat in (turn, match.trick[-1][0]):
            assert ("روی میز: " if lang == "fa" else "On the table: ") in text
            for side in range(2):
                tricks = view.tricks_won[side] + view.tricks_won[side + 2]
                who = [you, name[partner]] if seat % 2 == side else [name[side], name[side + 2]]
                members = f" {'و' if lang == 'fa' else '&'} ".join(who)
                if lang == "fa":
                    line = (
                        f"تیم {_n(lang, side + 1)} ({members}): ۰ امتیاز · {_n(lang, tricks)} دست"
                    )
                else:
                    plural = "trick" if tricks == 1 else "tricks"
                    line = f"Team {side + 1} ({members}): 0 points · {tricks} {plural}"
                assert line in text, (line, text)
            for _, card in match.trick:  # the trick on the table, as everyone sees it
                assert str(card) in text
            if seat == turn:
                assert ("نوبت شماست" if lang == "fa" else "Your turn") in text
            else:
                expected = (
                    f"نوبت شما نیست؛ نوبت {name[turn]} است"
                    if lang == "fa"
                    else f"Not your turn: it is {name[turn]}'s turn"
                )
                assert expected in text
        # Nothing another player should not see: no card of another hand.
        hidden = [c for s in range(4) if s != seat for c in match.hand_of(s)]
        hidden += [c for d in match.discards for c in cards_in(d)]
        for card in hidden:
            assert str(card) not in text, (card, text)


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_play_shows_its_table_in_the_players_language(emu, runner, lang):
    user = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    texts = "\n".join(m.text for m in emu.chat_log(user.private_chat_id) if m.from_bot)
    if lang == "fa":
        assert "بازی حکم · دور ۱" in texts and "Hokm" not in texts
    else:
        assert "Hokm · Hand 1" in texts and not PERSIAN.search(texts.replace("حکم", ""))


# ---------------------------------------------------------------- help and rules


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_greeting_when_the_bot_joins_a_group(emu, runner, lang):
    owner = emu.add_user(NAMES[lang][0], language_code=lang)
    group = emu.add_group("New group", admins=[owner], notify_bot=True)
    await runner.settle()
    log = [m.text for m in emu.chat_log(group.id) if m.from_bot]
    assert len(log) == 1
    if lang == "fa":
        assert log[0].startswith("سلام!") and "/newgame" in log[0] and "/rules" in log[0]
    else:
        assert log[0].startswith("Hello! I host Hokm games") and "/newgame" in log[0]
        assert not PERSIAN.search(log[0])
    # Promoted to admin: no second greeting.
    group.add_bot(admin=True, by=owner)
    await runner.settle()
    assert len([m for m in emu.chat_log(group.id) if m.from_bot]) == 1
    # The group speaks the language of whoever added the bot.
    await emu.send_message(owner, owner.private_chat_id, "/start")
    lobby = await _command(emu, runner, owner, group.id, "/newgame")
    assert ("بازیکن" in lobby) == (lang == "fa")


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_help_names_the_target_choices(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:1], lang=lang)
    group = await _group(emu, runner, people, lang)
    text = await _command(emu, runner, people[0], group.id, "/help")
    if lang == "fa":
        assert "۱، ۳، ۵، ۷ یا ۱۰ امتیاز" in text
        assert "وگرنه می‌توانید هر ورقی، حتی حکم، بازی کنید" in text
    else:
        assert "1, 3, 5, 7 or 10 points" in text
        assert "first to 7 points" not in text
    assert "/rules" in text


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_rules_follow_the_tables_variant(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:1], lang=lang)
    group = await _group(emu, runner, people, lang)
    owner = people[0]
    text = await _command(emu, runner, owner, group.id, "/rules")
    assert ("حکم ۴ نفره، تا ۷ امتیاز" if lang == "fa" else "Hokm, 4 players, to 7 points") in text
    game, lobby = await _open(emu, runner, group, owner, players=3, target=5)
    for option in ("removed_two=S", "hakem_rule=winner"):
        await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o", option))
        await runner.settle()
    text = await _command(emu, runner, owner, group.id, "/rules")
    if lang == "fa":
        assert "حکم ۳ نفره، تا ۵ امتیاز" in text and "دوی پیک ♠" in text
        assert "برندهٔ هر دور حاکم می‌شود" in text and "۷ و ۰ و ۰" in text
    else:
        assert "Hokm, 3 players, to 5 points" in text and "2 of spades ♠" in text
        assert "The winner of each hand becomes the hakem." in text and "7-0-0" in text
    await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o", "kind=bidding"))
    await runner.settle()
    text = await _command(emu, runner, owner, group.id, "/rules")
    assert ("حکم ۲ نفره با خواندن" if lang == "fa" else "Hokm with bidding, 2 players") in text
    assert ("صفر کور" if lang == "fa" else "blind nil") in text


async def test_command_menus_one_language_each(emu, runner):
    fa = emu.commands(language_code="fa")
    en = emu.commands(language_code="en")
    default = emu.commands()
    assert [c["command"] for c in fa] == [c["command"] for c in en]
    assert {"newgame", "play", "rules", "help", "score", "stats"} <= {c["command"] for c in en}
    assert all(PERSIAN.search(c["description"]) for c in fa), fa
    assert not any(PERSIAN.search(c["description"]) for c in en), en
    assert default == fa  # Persian first, for every other app language


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_settings_rows_are_labelled(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:1], lang=lang)
    group = await _group(emu, runner, people, lang)
    owner = people[0]
    game, lobby = await _open(emu, runner, group, owner, players=3)
    await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o"))
    await runner.settle()
    labels = [
        b["text"]
        for b in buttons(emu.message(group.id, lobby.message_id))
        if b["callback_data"].startswith(f"o:{game.id}::about=")
    ]
    if lang == "fa":
        expected = ["👥 بازیکنان", "🎯 امتیاز برد", "⏱ زمان هر نوبت", "🤖 بازیکنان کامپیوتری"]
        expected += ["🃏 دویی که کنار می‌رود", "👑 حاکم دور بعد", "🧮 امتیاز ورق‌ها"]
        expected += ["🔔 یادآوری نوبت", "📣 جای یادآوری"]
    else:
        expected = ["👥 Players", "🎯 Points to win", "⏱ Turn timer", "🤖 Computer players"]
        expected += ["🃏 The 2 taken out", "👑 The next hakem", "🧮 Card points"]
        expected += ["🔔 Turn reminder", "📣 Reminders go to"]
    assert labels == [f"— {label} —" for label in expected]
    # A label explains its row and changes nothing.
    before = (await Table(emu, runner, group, []).game()).settings
    h = await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o", "about=target"))
    await runner.settle()
    assert not h.answer.show_alert
    assert h.answer.text == (
        "اولین طرفی که به این امتیاز برسد برنده است."
        if lang == "fa"
        else "The first side to reach this many points wins."
    )
    # The level's row says what each level costs: the hard one's thinking time.
    h = await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o", "about=level"))
    await runner.settle()
    assert h.answer.text == (
        "بازیکنان کامپیوتری چقدر خوب بازی کنند. آسان و معمولی بی‌درنگ بازی می‌کنند؛ "
        "سخت برای هر ورق تا ۰٫۰۵ ثانیه فکر می‌کند و از همه بهتر بازی می‌کند."
        if lang == "fa"
        else "How well the computer players play. Easy and normal play at once; hard "
        "thinks up to 0.05 s a card and plays best."
    )
    assert (await Table(emu, runner, group, []).game()).settings == before
    # With 4 players hard thinks half the budget (it stops most searches early there).
    await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o", "players=4"))
    await runner.settle()
    h = await emu.press(owner, group.id, lobby.message_id, _data(game.id, "o", "about=level"))
    await runner.settle()
    assert ("۰٫۰۲۵ ثانیه" if lang == "fa" else "up to 0.025 s a card") in h.answer.text


# ------------------------------------------------------------- announcements

# Deal seeds checked against the engine alone: with one person playing their lowest
# card and two "normal" computers, 3 players, the first hand ends like this.
ANNOUNCEMENTS = [
    ("en", 24, f"Hand 1: {isolate('Sara')} won, 5 to 6 to 6\nA tie at 6–6: the third player wins"),
    ("fa", 24, f"دور ۱: {isolate('سارا')} برد، ۵ به ۶ به ۶\nتساوی ۶–۶؛ نفر سوم می‌برد"),
    (
        "en",
        85,
        f"Hand 1: Hakem-kot! The hakem, {isolate('Sara')}, and {isolate('🤖 Computer 2')} took "
        f"no tricks: 3 points to {isolate('🤖 Computer 3')}",
    ),
    (
        "fa",
        145,
        f"دور ۱: کوت! {isolate('سارا')} و {isolate('🤖 کامپیوتر ۳')} کوت شدند؛ "
        f"۲ امتیاز برای {isolate('🤖 کامپیوتر ۲')}",
    ),
]


@pytest.mark.parametrize(("lang", "seed", "expected"), ANNOUNCEMENTS)
async def test_three_player_tie_and_kot_announcements(emu, db_url, lang, seed, expected):
    from testkit.simulation import BotRunner

    runner = BotRunner(emu, db_url, deal_seed=seed)
    await runner.start()
    try:
        people = await _people(emu, NAMES[lang][:1], lang=lang)
        group = await _group(emu, runner, people, lang)
        table = await _start(emu, runner, group, people, players=3, target=1)
        await table.play_out({people[0].id: lowest_card})
        await runner.settle()
        joined = "\n".join(m.text for m in emu.chat_log(group.id))
        assert expected in joined, joined[-600:]
    finally:
        await runner.stop()


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_score_and_stats_texts(emu, db_url, lang):
    from testkit.simulation import BotRunner

    runner = BotRunner(emu, db_url, deal_seed=85)  # Computer 3 wins the hand and the match
    await runner.start()
    try:
        people = await _people(emu, NAMES[lang][:1], lang=lang)
        group = await _group(emu, runner, people, lang)
        table = await _start(emu, runner, group, people, players=3, target=1)
        await table.play_out({people[0].id: lowest_card})
        score = await _command(emu, runner, people[0], group.id, "/score")
        stats = await _command(emu, runner, people[0], group.id, "/stats")
    finally:
        await runner.stop()
    if lang == "fa":
        assert "\u2068🤖 کامپیوتر ۳\u2069 (۳ به ۰ به ۰)" in score
        assert "۱. \u2068سارا\u2069: ۰ برد از ۱ بازی · ۰ دور برده · ۰ کوت" in stats
    else:
        assert "\u2068🤖 Computer 3\u2069 (3 to 0 to 0)" in score
        assert "1. \u2068Sara\u2069: 0 of 1 match won · 0 hands won · 0 kots" in stats


# ----------------------------------------------------------------- inline hint


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_an_out_of_turn_inline_query_says_whose_turn_it_is(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:2], lang=lang)
    group = await _group(emu, runner, people, lang)
    table = await _start(emu, runner, group, people)
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(40):
        game = await table.game()
        match = Match.from_json(game.state)
        if match.phase is Phase.PLAY:
            break
        await table.step(strategies)
    on_turn = next(p for p in people if p.id == game.seats[match.order[match.turn]]["user_id"])
    waiting = next(p for p in people if p is not on_turn)
    playable = await emu.inline_query(on_turn, group, "")
    assert len(playable) == len(match.legal_cards(match.turn)) and playable.button is None
    assert {r["description"] for r in playable} == {
        "این ورق را بازی کنید" if lang == "fa" else "Play this card"
    }
    results = await emu.inline_query(waiting, group, "")
    assert list(results) == []  # nothing to play ...
    expected = (
        f"نوبت شما نیست؛ نوبت {isolate(on_turn.first_name)} است"
        if lang == "fa"
        else f"Not your turn: it is {isolate(on_turn.first_name)}'s turn"
    )
    assert results.button == {"text": expected, "start_parameter": "hand"}  # ... and why
    # The button opens the private chat: the answer points to the hand message.
    await emu.send_message(waiting, waiting.private_chat_id, "/start hand")
    await runner.settle()
    reply = emu.chat_log(waiting.private_chat_id)[-1]
    assert reply.reply_to is not None
    assert reply.reply_to.message_id == game.private_messages[str(waiting.id)]
    assert ("همین پیام" if lang == "fa" else "Your cards are in this message") in reply.text
    # Someone not playing gets no cards either, and a reason.
    outsider = (await _people(emu, ["Pat"], lang=lang))[0]
    results = await emu.inline_query(outsider, group, "")
    assert list(results) == []
    assert results.button["text"] == (
        "شما الان در هیچ بازی‌ای نیستید." if lang == "fa" else "You are not in a game right now."
    )


# ----------------------------------------------------------------------- rematch


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_rematch_reopens_the_same_seats_and_settings(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:2], lang=lang)
    stranger = (await _people(emu, ["Eve"], lang=lang))[0]
    group = await _group(emu, runner, [*people, stranger], lang)
    table = await _start(emu, runner, group, people, target=1, level="easy")
    await table.play_out({p.id: by_level("normal", seed=p.id) for p in people})
    await runner.settle()
    old = await table.game()
    assert old.status == "finished"
    board = emu.message(group.id, old.table_message_id)
    [button] = buttons(board)
    assert button["text"] == ("🔁 بازی دوباره" if lang == "fa" else "🔁 Rematch")
    assert button["callback_data"] == f"m:{old.id}"

    h = await emu.press(stranger, group.id, board.message_id, button["callback_data"])
    await runner.settle()
    assert h.answer.show_alert and (await table.game()).id == old.id  # players only

    h = await emu.press(people[1], group.id, board.message_id, button["callback_data"])
    await runner.settle()
    assert not h.answer.show_alert
    assert h.answer.text.startswith("بازی دوباره" if lang == "fa" else "Rematch: the same")
    new = await table.game()
    assert new.id != old.id and new.status == "lobby" and new.owner_id == people[1].id
    assert new.settings == old.settings and new.settings["level"] == "easy"
    assert [s.get("user_id") for s in new.seats] == [s.get("user_id") for s in old.seats]
    assert [s.get("bot") for s in new.seats] == [s.get("bot") for s in old.seats]
    lobby = emu.chat_log(group.id)[-1]
    assert lobby.message_id == new.table_message_id
    assert all(p.first_name in lobby.text for p in people)

    # A second press while the new lobby is open changes nothing.
    h = await emu.press(people[0], group.id, board.message_id, button["callback_data"])
    await runner.settle()
    assert h.answer.show_alert and (await table.game()).id == new.id

    await emu.press(people[1], group.id, lobby.message_id, _data(new.id, "s"))
    await runner.settle()
    again = await table.game()
    assert again.id == new.id and again.status == "playing"
    # The new match deals new hands: none of their cards shows in the new messages
    # (the old table still shows the old match's last trick).
    match = Match.from_json(again.state)
    shown = "\n".join(
        m.text for m in emu.chat_log(group.id) if m.message_id >= new.table_message_id
    )
    for seat in range(4):
        for card in match.hand_of(seat):
            assert str(card) not in shown or card in {c for _, c in match.first_draw}


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_solo_rematch_starts_at_once(emu, runner, lang):
    from telegram_bot.platform.storage import repo

    user = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    await runner.settle()
    async with runner.service.sessions.begin() as s:
        await repo.get_or_create_chat(s, user.id, "private", None)
        await repo.update_chat_settings(s, user.id, {"target": 1, "timer": 0})
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    chat = type("Chat", (), {"id": user.id})()
    table = Table(emu, runner, chat, [user])
    table.check_hidden = False  # the table is the player's own chat, beside their hand
    await table.play_out({user.id: by_level("normal", seed=5)})
    old = await table.game()
    board = emu.message(user.id, old.table_message_id)
    [button] = buttons(board)
    await emu.press(user, user.private_chat_id, board.message_id, button["callback_data"])
    await runner.settle()
    new = await table.game()
    assert new.id != old.id and new.status == "playing"
    assert new.settings == old.settings
    texts = "\n".join(m.text for m in emu.chat_log(user.private_chat_id) if m.from_bot)
    assert ("بازی حکم · دور ۱" if lang == "fa" else "Hokm · Hand 1") in texts


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_lobby_and_back_texts(emu, runner, lang):
    people = await _people(emu, NAMES[lang][:3], lang=lang)
    group = await _group(emu, runner, people, lang)
    game, lobby = await _open(emu, runner, group, people[0])
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
        await runner.settle()
    h = await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "o", "players=2"))
    await runner.settle()
    assert h.answer.show_alert
    assert h.answer.text == (
        "تعداد بازیکنان واردشده از این عدد بیشتر است"
        if lang == "fa"
        else "Too many players have joined for that"
    )
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    game = await Table(emu, runner, group, people).game()
    await runner.service.set_away(game.id, people[1].id, True)
    await runner.settle()
    reply = await _command(emu, runner, people[1], people[1].private_chat_id, "/back")
    assert reply == ("به بازی برگشتید!" if lang == "fa" else "Welcome back!")
