"""End to end, in Persian and English: play with anyone (/online).

The real bot against the Bot API emulator. The matching pass is stepped by the tests
(``online.round()``, as the sweeper's tests step the sweeper), except in the first
test, where the bot's own loop seats the people and the test waits for that progress.

- 4 people /online → one table, each with their hand and their table message;
- a lone person is offered the computers after the wait and plays them (unrated);
- a leaver's seat goes to a computer, the others play on, and the ratings change as
  openskill computes them for that result (the leaver ranked last), called here
  independently; the hand message at the end shows the change;
- no message to a stranger carries another's id or username (texts and buttons);
- preset reactions reach the others, rate-limited;
- /rating and the rated leaderboard (/top).
"""

from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace

import pytest
from openskill.models import PlackettLuce

from core import Match
from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import utcnow
from telegram_bot.service.online_seats import is_online_chat
from testkit.simulation import BotRunner

from .driver import Table, buttons, lowest_card

NAMES = {
    "fa": ["آرش", "بهار", "کاوه", "دریا"],
    "en": ["Ann", "Bob", "Cy", "Dee"],
}
TEXTS = {
    "fa": {
        "which": "بازی با همه",
        "queued": "در صف",
        "seated": "میز آماده است",
        "offer": "با کامپیوترها شروع شود",
        "rating": "ریتینگ شما",
        "top": "جدول ریتینگ",
        "left_rated": "برای شما باخت حساب می‌شود",
        "sent": "فرستاده شد",
        "reaction": "👏 آفرین",
        "wait": "کمی صبر کنید",
    },
    "en": {
        "which": "Play with anyone",
        "queued": "in the queue",
        "seated": "A table is ready",
        "offer": "Start now with computers",
        "rating": "Your rating",
        "top": "Rated leaderboard",
        "left_rated": "It counts as lost for you",
        "sent": "Sent",
        "reaction": "👏 Well played",
        "wait": "Wait a moment",
    },
}


@pytest.fixture
async def online_runner(emu, db_url):
    # No matching loop: the tests step it. No wait before the computers' offer.
    r = BotRunner(emu, db_url, online_interval=0.0, online_wait=0.0)
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


def _people(emu, lang, n, prefix=""):
    return [
        emu.add_user(name, language_code=lang, username=f"{prefix}user{i}_{lang}", started=True)
        for i, name in enumerate(NAMES[lang][:n])
    ]


def _last_with(emu, user, data_prefix):
    for message in reversed(emu.chat_log(user.private_chat_id)):
        if message.from_bot and any(
            (b.get("callback_data") or "").startswith(data_prefix) for b in buttons(message)
        ):
            return message
    raise AssertionError(f"no message with a {data_prefix!r} button for {user.first_name}")


async def _queue(emu, runner, user, players, lang):
    await emu.send_message(user, user.private_chat_id, "/online")
    await runner.settle()
    ask = emu.chat_log(user.private_chat_id)[-1]
    assert TEXTS[lang]["which"] in ask.text
    await emu.press(user, user.private_chat_id, ask.message_id, f"q:::{players}")
    await runner.settle()
    assert TEXTS[lang]["queued"] in emu.message(user.private_chat_id, ask.message_id).text


async def _game_of(runner, user):
    async with runner.service.sessions() as s:
        return await repo.find_active_game_for_user(s, user.id)


def _private_texts(emu, user):
    """Everything the bot ever showed the user: every version's text and buttons."""
    out = []
    for message in emu.chat_log(user.private_chat_id):
        if not message.from_bot:
            continue
        for version in message.edit_history:
            out.append(version.text or "")
            out.append(json.dumps(version.reply_markup or {}, ensure_ascii=False))
    return "\n".join(out)


def _assert_no_stranger_ids(emu, people):
    for viewer in people:
        shown = _private_texts(emu, viewer)
        for other in people:
            if other is viewer:
                continue
            assert str(other.id) not in shown, f"{viewer.first_name} saw {other.first_name}'s id"
            assert other.username not in shown, f"{viewer.first_name} saw a username"


# ------------------------------------------------------------------ the tests


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_four_people_online_make_one_table_by_the_bots_own_loop(emu, db_url, lang):
    runner = BotRunner(emu, db_url, online_interval=0.05, online_wait=60.0)
    await runner.start()
    try:
        people = _people(emu, lang, 4)
        for p in people[:3]:
            await _queue(emu, runner, p, 4, lang)
        assert await _game_of(runner, people[0]) is None  # three do not make a table
        await _queue(emu, runner, people[3], 4, lang)
        # The loop seats them: wait for that progress (the emulator's own bound only
        # fails a bot that never does it).
        games = {}

        async def seated() -> bool:
            for p in people:
                games[p.id] = await _game_of(runner, p)
            return all(games.values())

        for _ in range(10_000):
            if await seated():
                break
            await runner.settle()
        assert all(games.values())
        await runner.settle()
        assert len({g.id for g in games.values()}) == 1
        game = await _game_of(runner, people[0])  # as delivered (the hands' message ids)
        assert is_online_chat(game.chat_id) and game.status == "playing"
        assert game.settings["online"]["rated"] is True
        assert sorted(game.user_ids()) == sorted(p.id for p in people)
        for p in people:
            hand = (game.private_messages or {}).get(str(p.id))
            assert hand is not None, f"{p.first_name} has no hand message"
            texts = [m.text for m in emu.chat_log(p.private_chat_id) if m.from_bot]
            assert any(TEXTS[lang]["seated"] in t for t in texts)
            # The table message: the others' display names, not in a group.
            others = [o.first_name for o in people if o is not p]
            assert any(all(name in t for name in others) for t in texts)
        async with runner.service.sessions() as s:
            assert await store.waiting(s) == []
        _assert_no_stranger_ids(emu, people)
    finally:
        await runner.stop()


@pytest.mark.one_backend
@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_lone_person_gets_computers_after_the_wait(emu, online_runner, lang):
    runner = online_runner
    (alone,) = _people(emu, lang, 1)
    await _queue(emu, runner, alone, 4, lang)
    await runner.service.online.round()
    await runner.settle()
    offer = _last_with(emu, alone, "q:::c")
    assert TEXTS[lang]["offer"] in offer.text or any(
        TEXTS[lang]["offer"] in b["text"] for b in buttons(offer)
    )
    await emu.press(alone, alone.private_chat_id, offer.message_id, "q:::c")
    await runner.settle()
    game = await _game_of(runner, alone)
    assert game is not None and game.status == "playing"
    assert game.settings["online"]["rated"] is False
    assert sum(1 for x in game.seats if x.get("bot")) == 3
    table = Table(emu, runner, SimpleNamespace(id=game.chat_id), [alone])
    table.check_hidden = False
    await table.play_out({alone.id: lowest_card})
    async with runner.service.sessions() as s:
        assert await store.rated_match(s, game.id) is None
        assert await store.get_ratings(s, 4, [alone.id]) == {}
        assert (await repo.get_game(s, game.id)).status == "finished"


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_leaver_loses_the_rated_match_and_the_ratings_follow_openskill(
    emu, online_runner, lang
):
    runner = online_runner
    leaver, stayer = _people(emu, lang, 2)
    for p in (leaver, stayer):
        await _queue(emu, runner, p, 2, lang)
    assert await runner.service.online.round() == 1
    await runner.settle()
    game = await _game_of(runner, leaver)
    assert game is not None and game.settings["online"]["rated"]
    # Both in the match: nobody may queue again meanwhile.
    text, _ = await runner.service.online.join(leaver, 4)
    assert "/leave" in text

    # A reaction reaches the other, and a second at once is refused.
    table_message = _last_with(emu, stayer, "z:")
    handle = await emu.press(
        stayer, stayer.private_chat_id, table_message.message_id, f"z:{game.id}::0"
    )
    await runner.settle()
    assert TEXTS[lang]["sent"] in (handle.answer.text or "")
    assert any(
        TEXTS[lang]["reaction"] in (m.text or "") and NAMES[lang][1] in m.text
        for m in emu.chat_log(leaver.private_chat_id)
    )
    handle = await emu.press(
        stayer, stayer.private_chat_id, table_message.message_id, f"z:{game.id}::1"
    )
    await runner.settle()
    assert TEXTS[lang]["wait"] in (handle.answer.text or "")

    await emu.send_message(leaver, leaver.private_chat_id, "/leave")
    await runner.settle()
    assert TEXTS[lang]["left_rated"] in emu.chat_log(leaver.private_chat_id)[-1].text
    game = await _game_of(runner, stayer)
    assert game.user_ids() == [stayer.id] and any(x.get("bot") for x in game.seats)
    assert await _game_of(runner, leaver) is None

    table = Table(emu, runner, SimpleNamespace(id=game.chat_id), [stayer])
    table.check_hidden = False
    await table.play_out({stayer.id: lowest_card})
    async with runner.service.sessions() as s:
        done = await repo.get_game(s, game.id)
        assert done.status == "finished"
        rated = await store.rated_match(s, game.id)
        stored = {
            uid: (await store.get_ratings(s, 2, [uid]))[uid] for uid in (leaver.id, stayer.id)
        }
    assert rated is not None
    # Independently: openskill's Plackett-Luce, the newcomers' prior, the leaver last
    # (whatever the points: the stayer played on against a computer).
    model = PlackettLuce()
    [[lost], [won]] = model.rate([[model.rating()], [model.rating()]], ranks=[2, 1])
    order = [p["user_id"] for p in rated.seats]
    assert sorted(order) == sorted([leaver.id, stayer.id])
    assert {p["user_id"]: p["rank"] for p in rated.seats} == {leaver.id: 2, stayer.id: 1}
    assert stored[leaver.id].mu == pytest.approx(lost.mu)
    assert stored[leaver.id].sigma == pytest.approx(lost.sigma)
    assert stored[stayer.id].mu == pytest.approx(won.mu)
    assert stored[stayer.id].sigma == pytest.approx(won.sigma)
    assert stored[stayer.id].matches == stored[leaver.id].matches == 1

    # The stayer's hand message at the end shows the change (display scale:
    # 200/beta (mu - 3 sigma) + 1500 - 200/beta mu0, from the library's ordinal).
    alpha = 200 / model.beta
    target = 1500 - alpha * model.mu
    before = round(model.rating().ordinal(z=3.0, alpha=alpha, target=target))
    after = round(won.ordinal(z=3.0, alpha=alpha, target=target))
    hand = table.hand_message(done, stayer)
    from telegram_bot.chat.i18n import get_translator

    tr = get_translator(lang)
    assert tr.format_number(before) in hand.text and tr.format_number(after) in hand.text
    assert TEXTS[lang]["rating"] in hand.text

    # /rating for each, and the leaderboard (names only), in the person's language.
    await emu.send_message(stayer, stayer.private_chat_id, "/rating")
    await runner.settle()
    shown = emu.chat_log(stayer.private_chat_id)[-1].text
    assert TEXTS[lang]["rating"] in shown and tr.format_number(after) in shown
    await emu.send_message(leaver, leaver.private_chat_id, "/top")
    await runner.settle()
    board = emu.chat_log(leaver.private_chat_id)[-1].text
    assert TEXTS[lang]["top"] in board
    assert board.index(NAMES[lang][1]) < board.index(NAMES[lang][0])  # the winner first
    assert str(stayer.id) not in board and stayer.username not in board

    _assert_no_stranger_ids(emu, [leaver, stayer])
    # The table message had the reactions while the match ran; at its end it shows
    # no button (no rematch among strangers).
    assert not buttons(emu.message(stayer.private_chat_id, table_message.message_id))


async def test_two_timeouts_in_a_row_give_the_seat_to_a_computer(emu, online_runner):
    runner = online_runner
    a, b = _people(emu, "en", 2)
    for p in (a, b):
        await _queue(emu, runner, p, 2, "en")
    await runner.service.online.round()
    await runner.settle()
    game = await _game_of(runner, a)
    svc = runner.service
    forfeited = None
    for _ in range(200):
        async with svc.sessions() as s:
            game = await repo.get_game(s, game.id)
        match = Match.from_json(game.state)
        if game.status != "playing":
            break
        uid = game.seats[match.order[match.turn]].get("user_id")
        if uid is None:
            await runner.settle()
            continue
        await svc.clock.time_out(game.id, game.move)
        await runner.settle()
        async with svc.sessions() as s:
            after = await repo.get_game(s, game.id)
        if uid not in after.user_ids():
            forfeited = uid
            break
    assert forfeited is not None
    loser = a if forfeited == a.id else b
    assert "away for two turns" in emu.chat_log(loser.private_chat_id)[-1].text or any(
        "away for two turns" in (m.text or "") for m in emu.chat_log(loser.private_chat_id)
    )
    assert await _game_of(runner, loser) is None


async def test_someone_who_started_another_game_while_queued_is_not_seated(emu, online_runner):
    runner = online_runner
    solo, waiting, late = _people(emu, "en", 3)
    for p in (solo, waiting):
        await _queue(emu, runner, p, 2, "en")
    async with runner.service.sessions() as s:
        joined_at = (await store.queued(s, waiting.id)).joined_at
    await emu.send_message(solo, solo.private_chat_id, "/play")  # a solo match meanwhile
    await runner.settle()
    solo_game = await _game_of(runner, solo)
    assert solo_game is not None and not is_online_chat(solo_game.chat_id)
    assert await runner.service.online.round() == 0
    async with runner.service.sessions() as s:
        assert await store.queued(s, solo.id) is None
        kept = await store.queued(s, waiting.id)
    assert kept is not None and kept.joined_at == joined_at  # their place kept
    assert (await _game_of(runner, solo)).id == solo_game.id
    await _queue(emu, runner, late, 2, "en")
    assert await runner.service.online.round() == 1
    await runner.settle()
    game = await _game_of(runner, waiting)
    assert sorted(game.user_ids()) == sorted([waiting.id, late.id])


async def test_a_table_of_two_languages_shows_each_person_the_table_in_theirs(emu, online_runner):
    runner = online_runner
    (fa,) = _people(emu, "fa", 1)
    (en,) = _people(emu, "en", 1, prefix="x")
    await _queue(emu, runner, fa, 2, "fa")
    await _queue(emu, runner, en, 2, "en")
    # Each waits for their own language first: mixed only after a while.
    assert await runner.service.online.round() == 0
    later = utcnow() + timedelta(seconds=60)
    assert await runner.service.online.round(later) == 1
    await runner.settle()
    game = await _game_of(runner, fa)
    assert sorted(game.user_ids()) == sorted([fa.id, en.id])
    fa_table = _last_with(emu, fa, "z:").text
    en_table = _last_with(emu, en, "z:").text
    assert "Hokm · Hand 1" in en_table and "Hand" not in fa_table
    assert "حکم" in fa_table and "حکم" not in en_table
    assert NAMES["fa"][0] in en_table and NAMES["en"][0] in fa_table


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_group_that_chose_rated_matches_rates_them(emu, runner, lang):
    from .test_table_talk import _group, _start

    people = _people(emu, lang, 2, prefix="g")
    for p in people:  # the bot may write to them
        await emu.send_message(p, p.private_chat_id, "/start")
    await runner.settle()
    group = await _group(emu, runner, people, lang)
    # Off by default: only an admin turns it on.
    await emu.send_message(people[1], group.id, "/rated")
    await runner.settle()
    async with runner.service.sessions() as s:
        chat = await repo.get_chat(s, group.id)
    assert chat is None or not (chat.settings or {}).get("rated")
    await emu.send_message(people[0], group.id, "/rated")
    await runner.settle()
    assert "/rated" in emu.chat_log(group.id)[-1].text
    table = await _start(emu, runner, group, people, players=2, target=1)
    game = await table.game()
    assert game.settings.get("rated") is True
    await table.play_out({p.id: lowest_card for p in people})
    game = await table.game()
    assert game.status == "finished"
    async with runner.service.sessions() as s:
        rated = await store.rated_match(s, game.id)
        stored = await store.get_ratings(s, 2, [p.id for p in people])
    assert rated is not None and set(stored) == {p.id for p in people}
    winner = next(p["user_id"] for p in rated.seats if p["rank"] == 1)
    loser = next(p["user_id"] for p in rated.seats if p["rank"] == 2)
    model = PlackettLuce()
    [[lost], [won]] = model.rate([[model.rating()], [model.rating()]], ranks=[2, 1])
    assert stored[winner].mu == pytest.approx(won.mu)
    assert stored[loser].mu == pytest.approx(lost.mu)
    for p in people:
        assert TEXTS[lang]["rating"] in table.hand_message(game, p).text


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_start_and_play_offer_play_with_anyone(emu, online_runner, lang):
    runner = online_runner
    from telegram_bot.chat.i18n import get_translator
    from telegram_bot.handlers import online as handlers_online

    tr = get_translator(lang)

    (user,) = _people(emu, lang, 1)
    # /start: the button asks which game, in a new message.
    await emu.send_message(user, user.private_chat_id, "/start")
    await runner.settle()
    welcome = _last_with(emu, user, "q:::a")
    assert [b["text"] for b in buttons(welcome)] == [tr(handlers_online.ONLINE_BUTTON)]
    await emu.press(user, user.private_chat_id, welcome.message_id, "q:::a")
    await runner.settle()
    menu = _last_with(emu, user, "q:::4")
    assert TEXTS[lang]["which"] in menu.text and menu.message_id > welcome.message_id

    # /play: the solo match starts, with a button to play with people instead.
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    solo = await _game_of(runner, user)
    assert solo is not None and solo.status == "playing" and solo.chat_id == user.id
    hint = _last_with(emu, user, f"q:{solo.id}::s")
    assert hint.text == tr(handlers_online.SOLO_HINT)
    assert [b["text"] for b in buttons(hint)] == [tr(handlers_online.INSTEAD_BUTTON)]
    await emu.press(user, user.private_chat_id, hint.message_id, f"q:{solo.id}::s")
    await runner.settle()
    # The solo match ended, the button is gone, and the person is asked which game.
    assert await _game_of(runner, user) is None
    async with runner.service.sessions() as s:
        assert (await repo.get_game(s, solo.id)).status != "playing"
    assert not buttons(emu.message(user.private_chat_id, hint.message_id))
    menu = _last_with(emu, user, "q:::4")
    assert menu.message_id > hint.message_id and TEXTS[lang]["which"] in menu.text
    await emu.press(user, user.private_chat_id, menu.message_id, "q:::4")
    await runner.settle()
    assert TEXTS[lang]["queued"] in emu.message(user.private_chat_id, menu.message_id).text
    async with runner.service.sessions() as s:
        assert await store.queued(s, user.id) is not None

    # The old button, pressed again under a newer solo match, ends nothing.
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    newer = await _game_of(runner, user)
    assert newer is not None and newer.id != solo.id
    await emu.press(user, user.private_chat_id, hint.message_id, f"q:{solo.id}::s")
    await runner.settle()
    assert (await _game_of(runner, user)).id == newer.id


async def test_the_reaction_limit_holds_across_two_services(emu, online_runner, db_url):
    """A second service on the same database (another worker) refuses a reaction made
    within the gap of one the first service sent."""
    from telegram_bot.runtime.app import build_application, close_application, open_application

    runner = online_runner
    a, b = _people(emu, "en", 2)
    for p in (a, b):
        await _queue(emu, runner, p, 2, "en")
    assert await runner.service.online.round() == 1
    await runner.settle()
    game = await _game_of(runner, a)
    table_message = _last_with(emu, a, "z:")
    handle = await emu.press(a, a.private_chat_id, table_message.message_id, f"z:{game.id}::0")
    await runner.settle()
    assert TEXTS["en"]["sent"] in (handle.answer.text or "")
    other = build_application(runner.settings)
    await open_application(other)
    await other.start()  # as a cluster worker does (its updates come from the inbox)
    try:
        answer = await other.bot_data["service"].online.react(game.id, a.id, "1")
        assert TEXTS["en"]["wait"] in (answer.text or "")
        # Someone else at the table may react there.
        answer = await other.bot_data["service"].online.react(game.id, b.id, "2")
        assert TEXTS["en"]["sent"] in (answer.text or "")
    finally:
        await close_application(other)
