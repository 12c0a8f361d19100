"""End to end, in Persian and English: the ways out of a game.

/cancel (confirmed; abandoned, never counted), /leave (a computer takes the seat),
/takeover (a computer's or an away player's seat), /quit (a solo match) and the idle
end of a game nobody moved in, read as each person sees them in the emulator.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from core import Match
from telegram_bot.chat.i18n import isolate
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import utcnow
from telegram_bot.runtime.config import Settings
from testkit.simulation import BotRunner

from .driver import Table, buttons, by_level
from .test_game_flow import _data, _open, _people
from .test_table_talk import NAMES, _command, _group, _start

TEXTS = {
    "fa": {
        "ask": "این بازی تمام شود؟ برای هیچ‌کس حساب نمی‌شود.",
        "yes": "بله، بازی تمام شود",
        "no": "نه، ادامه می‌دهیم",
        "goes_on": "بازی ادامه دارد.",
        "only": "فقط کسی که بازی را باز کرده یا مدیر گروه می‌تواند این کار را بکند",
        "checking": "یک لحظه: از تلگرام می‌پرسم که آیا شما مدیر گروه هستید…",
        "ended_by": "{name} بازی را تمام کرد. این بازی برای هیچ‌کس حساب نمی‌شود.",
        "head": "بازی حکم · زودتر از موعد تمام شد",
        "open": "در این گروه یک بازی باز است: آن را تا آخر بازی کنید یا با \u200e/cancel\u200e "
        "تمامش کنید.",
        "you_left": "از بازی رفتید؛ یک بازیکن کامپیوتری جای شما را گرفت. "
        "این بازی برای شما حساب نمی‌شود.",
        "left": "{name} از بازی رفت؛ از حالا \u2068🤖 کامپیوتر {n}\u2069 به جای او بازی می‌کند.",
        "everyone_left": "همه از بازی رفتند و بازی تمام شد. این بازی برای هیچ‌کس حساب نمی‌شود.",
        "which": "جای کدام بازیکن را می‌گیرید؟",
        "took": "{name} جای {old} را در بازی گرفت.",
        "your_seat": "{name} جای شما را در بازی گرفت.",
        "away": "غایب",
        "idle": "چون ۲ ساعت کسی بازی نکرد، بازی تمام شد. برای هیچ‌کس حساب نمی‌شود.",
        "idle_lobby": "چون ۲ ساعت کسی بازی نکرد، بازی لغو شد.",
        "quit": "بازی تک‌نفره‌تان را تمام کردید. این بازی حساب نمی‌شود.",
        "no_solo": "بازی تک‌نفره‌ای ندارید که تمام شود.",
        "computer": "🤖 کامپیوتر {n}",
        "busy": "شما در بازی دیگری مشغول هستید؛ برای رفتن از آن \u200e/leave\u200e را بفرستید "
        "(یا \u200e/quit\u200e اگر بازی تک‌نفره است).",
    },
    "en": {
        "ask": "End this match? It will not count for anyone.",
        "yes": "Yes, end the match",
        "no": "No, keep playing",
        "goes_on": "The match goes on.",
        "only": "Only the player who opened the game or a group admin can do that",
        "checking": "One moment: asking Telegram whether you are a group admin…",
        "ended_by": "{name} ended the match. It does not count for anyone.",
        "head": "Hokm · the match ended early",
        "open": "A game is already open in this group: play it out, or end it with /cancel.",
        "you_left": "You left the match; a computer player took your seat. "
        "It does not count for you.",
        "left": "{name} left the match; \u2068🤖 Computer {n}\u2069 now plays in their place.",
        "everyone_left": "Everyone left the match, so it ended. It does not count for anyone.",
        "which": "Which seat will you take over?",
        "took": "{name} took over the seat of {old}.",
        "your_seat": "{name} took over your seat.",
        "away": "away",
        "idle": "The match ended after 2 hours without a move. It does not count for anyone.",
        "idle_lobby": "The game was cancelled after 2 hours without a move.",
        "quit": "You ended your solo match. It does not count.",
        "no_solo": "You have no solo match to end.",
        "computer": "🤖 Computer {n}",
        "busy": "You are already playing in another game: to leave it, send /leave (or /quit "
        "for a solo match).",
    },
}


def _digits(lang: str, n: int) -> str:
    from telegram_bot.chat.i18n import to_persian_digits

    return to_persian_digits(n) if lang == "fa" else str(n)


async def _game(runner, game_id):
    async with runner.service.sessions() as s:
        return await repo.get_game(s, game_id)


async def _free(runner, user) -> bool:
    async with runner.service.sessions() as s:
        return await repo.find_active_game_for_user(s, user.id) is None


async def _nothing_counted(runner, group) -> None:
    async with runner.service.sessions() as s:
        assert await repo.recent_matches(s, group.id) == []
        assert await repo.leaderboard(s, group.id) == []


async def _play_a_little(table, people, steps=3):
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(steps):
        await table.step(strategies)


# ------------------------------------------------------------------------ /cancel


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_cancel_is_confirmed_restart_safe_and_not_counted(emu, db_url, lang):
    t = TEXTS[lang]
    runner = BotRunner(emu, db_url)
    await runner.start()
    try:
        people = await _people(emu, NAMES[lang][:2], lang=lang)
        group = await _group(emu, runner, people, lang)
        table = await _start(emu, runner, group, people)
        await _play_a_little(table, people)
        game = await table.game()
        board = emu.message(group.id, game.table_message_id)

        # Someone who neither opened the game nor runs the group may not.
        reply = await _command(emu, runner, people[1], group.id, "/cancel")
        assert reply == t["only"]
        # A new game is refused with a way out that exists now.
        assert await _command(emu, runner, people[1], group.id, "/newgame") == t["open"]
        # The lobby's Cancel, pressed on an old view during play, asks too (it used to
        # answer that the button belonged to an earlier game).
        h = await emu.press(people[0], group.id, board.message_id, _data(game.id, "c"))
        await runner.settle()
        assert h.answer.text == t["ask"] and not h.answer.show_alert
        prompt = emu.chat_log(group.id)[-1]
        assert prompt.text == t["ask"]
        assert [b["text"] for b in buttons(prompt)] == [t["yes"], t["no"]]
        no, yes = buttons(prompt)[1]["callback_data"], buttons(prompt)[0]["callback_data"]

        h = await emu.press(people[0], group.id, prompt.message_id, no)
        await runner.settle()
        assert h.answer.text == t["goes_on"]
        assert emu.message(group.id, prompt.message_id).text == t["goes_on"]
        assert (await _game(runner, game.id)).status == "playing"

        await emu.send_message(people[0], group.id, "/cancel")
        await runner.settle()
        prompt = emu.chat_log(group.id)[-1]
        assert prompt.text == t["ask"]
        # The question survives a restart: it is only a button with the game's id.
        await runner.stop()
        runner = BotRunner(emu, db_url)
        await runner.start()
        # Not known to this process as an admin or not: answered at once, then the
        # question says why not (its buttons kept); known from then on, the refusal
        # is the answer itself.
        h = await emu.press(people[1], group.id, prompt.message_id, yes)
        await runner.settle()
        assert h.answer.text == t["checking"] and not h.answer.show_alert
        assert emu.message(group.id, prompt.message_id).text == f"{t['ask']}\n\n{t['only']}"
        assert [b["text"] for b in buttons(emu.message(group.id, prompt.message_id))] == [
            t["yes"],
            t["no"],
        ]
        h = await emu.press(people[1], group.id, prompt.message_id, yes)
        await runner.settle()
        assert h.answer.show_alert and h.answer.text == t["only"]
        h = await emu.press(people[0], group.id, prompt.message_id, yes)
        await runner.settle()
        ended_by = t["ended_by"].format(name=isolate(people[0].first_name))
        assert h.answer.text == ended_by

        ended = await _game(runner, game.id)
        assert ended.status == "cancelled" and ended.state is not None  # abandoned
        text = emu.message(group.id, ended.table_message_id).text
        assert text.startswith(t["head"]) and text.endswith(ended_by)
        assert buttons(emu.message(group.id, ended.table_message_id)) == []
        for person in people:
            hand = emu.message(person.id, ended.private_messages[str(person.id)])
            assert hand.text == ended_by and buttons(hand) == []
            assert await _free(runner, person)
        await _nothing_counted(runner, group)
        # A card pressed on the old hand changes nothing.
        match = Match.from_json(ended.state)
        card = match.hand_of(0)[0]
        hand = emu.message(people[0].id, ended.private_messages[str(people[0].id)])
        h = await emu.press(
            people[0], people[0].id, hand.message_id, f"p:{game.id}:{match.hand_no}:{card.ascii}"
        )
        await runner.settle()
        assert h.answer.show_alert
        assert (await _game(runner, game.id)).move == ended.move
        # The group is free again.
        await emu.send_message(people[1], group.id, "/newgame")
        await runner.settle()
        assert (await Table(emu, runner, group, []).game()).status == "lobby"
    finally:
        await runner.stop()


# ------------------------------------------------------------------------- /leave


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_leave_gives_the_seat_to_a_computer(emu, runner, lang):
    t = TEXTS[lang]
    people = await _people(emu, NAMES[lang][:3], lang=lang)
    group = await _group(emu, runner, people, lang)
    table = await _start(emu, runner, group, people, target=1)
    await _play_a_little(table, people)
    game = await table.game()
    leaver, stayers = people[1], [people[0], people[2]]
    index = next(i for i, x in enumerate(game.seats) if x.get("user_id") == leaver.id)

    reply = await _command(emu, runner, leaver, leaver.private_chat_id, "/leave")
    assert reply == t["you_left"]
    said = [m.text for m in emu.chat_log(group.id) if m.from_bot]
    assert t["left"].format(name=isolate(leaver.first_name), n=_digits(lang, index + 1)) in said
    game = await table.game()
    assert game.seats[index] == {"bot": "normal"}
    assert await _free(runner, leaver)
    hand = emu.message(leaver.id, game.private_messages[str(leaver.id)])
    assert hand.text == t["you_left"] and buttons(hand) == []
    # The table names the computer now, and the match goes on to its end.
    board = emu.message(group.id, game.table_message_id).text
    assert t["computer"].format(n=_digits(lang, index + 1)) in board
    await table.play_out({p.id: by_level("normal", seed=p.id) for p in stayers})
    async with runner.service.sessions() as s:
        [result] = await repo.recent_matches(s, group.id)
        tallies = {row.user_id for row in await repo.leaderboard(s, group.id)}
    assert tallies == {p.id for p in stayers}  # the match does not count for the leaver
    assert result.players[index]["bot"] == "normal"


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_when_everyone_leaves_the_match_ends(emu, runner, lang):
    t = TEXTS[lang]
    people = await _people(emu, NAMES[lang][:2], lang=lang)
    group = await _group(emu, runner, people, lang)
    table = await _start(emu, runner, group, people)
    game = await table.game()
    await _command(emu, runner, people[0], group.id, "/leave")
    assert (await _game(runner, game.id)).status == "playing"
    await _command(emu, runner, people[1], group.id, "/leave")
    ended = await _game(runner, game.id)
    assert ended.status == "cancelled"
    assert emu.message(group.id, ended.table_message_id).text.endswith(t["everyone_left"])
    await _nothing_counted(runner, group)


# ---------------------------------------------------------------------- /takeover


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_take_over_a_computer_or_an_away_seat(emu, runner, lang):
    t = TEXTS[lang]
    people = await _people(emu, NAMES[lang][:2], lang=lang)
    newcomer, late = await _people(emu, ["Nima", "Lale"], lang=lang)
    stranger = (await _people(emu, ["Omid"], lang=lang, start=False))[0]
    group = await _group(emu, runner, [*people, newcomer, late, stranger], lang)
    table = await _start(emu, runner, group, people, target=1)
    game = await table.game()
    away = people[1]
    await runner.service.set_away(game.id, away.id, True)
    await runner.settle()

    # Three seats to choose from: the two computers and the away player.
    await emu.send_message(newcomer, group.id, "/takeover")
    await runner.settle()
    choice = emu.chat_log(group.id)[-1]
    assert choice.text == t["which"]
    labels = [b["text"] for b in buttons(choice)]
    assert len(labels) == 3 and sum(t["away"] in label for label in labels) == 1
    away_index = next(i for i, x in enumerate(game.seats) if x.get("user_id") == away.id)
    data = f"w:{game.id}::{away_index}"
    assert data in [b["callback_data"] for b in buttons(choice)]

    # Someone who never opened the bot is sent there first.
    h = await emu.press(stranger, group.id, choice.message_id, data)
    await runner.settle()
    assert h.answer.url and (await table.game()).seats[away_index].get("user_id") == away.id

    before = emu.mark()
    h = await emu.press(newcomer, group.id, choice.message_id, data)
    await runner.settle()
    assert not h.answer.show_alert
    game = await table.game()
    assert game.seats[away_index]["user_id"] == newcomer.id
    assert await _free(runner, away)
    # The newcomer's cards arrive as a new (notifying) private message.
    sent = emu.calls_to("sendMessage", newcomer.private_chat_id, since=before)
    assert len(sent) == 1
    assert sent[0].result["message_id"] == game.private_messages[str(newcomer.id)]
    match = Match.from_json(game.state)
    seat = match.order.index(away_index)
    hand = emu.message(newcomer.id, game.private_messages[str(newcomer.id)])
    assert all(card.ascii in str(hand.reply_markup) for card in match.hand_of(seat))
    old = emu.message(away.id, game.private_messages[str(away.id)])
    assert (
        old.text == t["your_seat"].format(name=isolate(newcomer.first_name)) and buttons(old) == []
    )
    said = [m.text for m in emu.chat_log(group.id) if m.from_bot]
    assert t["took"].format(name=isolate(newcomer.first_name), old=isolate(away.first_name)) in said

    # Already seated: refused. With two computers left, the next person chooses; with
    # one left, the last one takes it at once.
    computers = [i for i, x in enumerate(game.seats) if x.get("bot")]
    h = await emu.press(newcomer, group.id, choice.message_id, f"w:{game.id}::{computers[0]}")
    await runner.settle()
    assert h.answer.show_alert and (await table.game()).seats[computers[0]].get("bot")
    await emu.send_message(late, group.id, "/takeover")
    await runner.settle()
    second = emu.chat_log(group.id)[-1]
    assert len(buttons(second)) == 2
    await emu.press(late, group.id, second.message_id, f"w:{game.id}::{computers[0]}")
    await runner.settle()
    last = (await _people(emu, ["Sina"], lang=lang))[0]
    group.set_member(last, "member")
    await emu.send_message(last, group.id, "/takeover")
    await runner.settle()
    game = await table.game()
    assert [game.seats[i].get("user_id") for i in computers] == [late.id, last.id]
    said = [m.text for m in emu.chat_log(group.id) if m.from_bot]
    for person, i in ((late, computers[0]), (last, computers[1])):
        old = t["computer"].format(n=_digits(lang, i + 1))
        assert t["took"].format(name=isolate(person.first_name), old=isolate(old)) in said
    # Everyone plays it out; the match counts for the people seated at its end.
    players = [people[0], newcomer, late, last]
    table = Table(emu, runner, group, players)
    await table.play_out({p.id: by_level("normal", seed=p.id) for p in players})
    async with runner.service.sessions() as s:
        tallies = {row.user_id for row in await repo.leaderboard(s, group.id)}
    assert tallies == {p.id for p in players}


# --------------------------------------------------------------------- idle end


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_idle_games_end_and_free_the_group(emu, db_url, lang):
    t = TEXTS[lang]
    assert Settings.from_env({"HOKM_IDLE_HOURS": "2"}).idle_hours == 2.0
    assert Settings.from_env({}).idle_hours == 24.0
    runner = BotRunner(emu, db_url, idle_hours=2.0)
    await runner.start()
    try:
        sweeper = runner.app.bot_data["sweeper"]
        people = await _people(emu, NAMES[lang][:2], lang=lang)
        group = await _group(emu, runner, people, lang)
        other = await _group(emu, runner, people[1:], lang, title="Lobby only")
        # A match with the turn timer on, and a lobby elsewhere.
        game, lobby = await _open(emu, runner, group, people[0], timer=60)
        await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
        await runner.settle()
        await emu.send_message(people[1], other.id, "/newgame")
        await runner.settle()
        waiting = await Table(emu, runner, other, []).game()
        assert waiting.status == "lobby"

        assert await sweeper.sweep(now=utcnow() + timedelta(hours=1)) == {}
        assert (await _game(runner, game.id)).status == "playing"
        done = await sweeper.sweep(now=utcnow() + timedelta(hours=3))
        await runner.settle()
        assert done["ended"] == 2
        ended = await _game(runner, game.id)
        assert ended.status == "cancelled" and ended.deadline is None
        assert emu.message(group.id, ended.table_message_id).text.endswith(t["idle"])
        hand = emu.message(people[0].id, ended.private_messages[str(people[0].id)])
        assert hand.text == t["idle"] and buttons(hand) == []
        gone = await _game(runner, waiting.id)
        assert gone.status == "cancelled"
        assert emu.message(other.id, gone.table_message_id).text == t["idle_lobby"]
        for person in people:
            assert await _free(runner, person)
        await _nothing_counted(runner, group)
        # Once: a second sweep finds nothing.
        assert await sweeper.sweep(now=utcnow() + timedelta(hours=5)) == {}
        await emu.send_message(people[0], group.id, "/newgame")
        await runner.settle()
        assert (await Table(emu, runner, group, []).game()).status == "lobby"
    finally:
        await runner.stop()


# -------------------------------------------------------------------------- /quit


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_quit_ends_a_solo_match(emu, runner, lang):
    t = TEXTS[lang]
    user = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    await runner.settle()
    reply = await _command(emu, runner, user, user.private_chat_id, "/quit")
    assert reply.startswith(t["no_solo"])
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    async with runner.service.sessions() as s:
        game = await repo.find_active_game_for_user(s, user.id)
    assert game is not None and game.status == "playing"
    # A group game is refused meanwhile, with the way out.
    friend = (await _people(emu, ["Kian"], lang=lang))[0]
    group = await _group(emu, runner, [friend, user], lang)
    g, lobby = await _open(emu, runner, group, friend)
    h = await emu.press(user, group.id, lobby.message_id, _data(g.id, "j"))
    await runner.settle()
    assert h.answer.show_alert and h.answer.text == t["busy"]
    hand_id = (await _game(runner, game.id)).private_messages[str(user.id)]
    await emu.send_message(user, user.private_chat_id, "/quit")
    await runner.settle()
    ended = await _game(runner, game.id)
    assert ended.status == "cancelled"
    assert emu.message(user.id, ended.table_message_id).text.endswith(t["quit"])
    said = [m.text for m in emu.chat_log(user.private_chat_id, include_deleted=False) if m.from_bot]
    assert sum(t["quit"] in text for text in said) == 1, "said once, in the table: no reply too"
    hand = emu.message(user.id, hand_id)
    assert hand.deleted, "the solo hand goes with the match (the table above says why)"
    assert await _free(runner, user)
    async with runner.service.sessions() as s:
        assert await repo.recent_matches(s, user.id) == []
    # Free for a group game now.
    h = await emu.press(user, group.id, lobby.message_id, _data(g.id, "j"))
    await runner.settle()
    assert not h.answer.show_alert
    assert any(x.get("user_id") == user.id for x in (await _game(runner, g.id)).seats)
