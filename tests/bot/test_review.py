"""End to end, in Persian and English: a player's private review of a finished hand.

Four people play a hand in a group; under the hand result a «Review this hand»
button sends whoever presses it, in private, the double-dummy review of the hand for
their team. The figures are checked against :func:`core.review.review_hand` run here
on the deal and plays the test itself saw (not on anything the bot stored), and the
review must name no card of the other team. Old, forged and outsiders' presses are
refused in the presser's language; no group message shows a review.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core import Match, Phase, PlayCard, SeatView, Suit, cards_in
from core.review import review_hand
from telegram_bot.chat.i18n import LRI, PDI, isolate, to_persian_digits
from telegram_bot.platform.storage.models import HandRecord
from telegram_bot.service import hands

from .driver import Table, buttons, by_level, lowest_card
from .test_game_flow import _data, _open, _people

NAMES = {"fa": ["سارا", "علی", "مریم", "رضا"], "en": ["Sara", "Ali", "Maryam", "Reza"]}
BYSTANDER = {"fa": "نگار", "en": "Nina"}
# What each language must say (the catalogs' wording, read as a person reads it).
TEXT = {
    "fa": {
        "button": "🔎 مرور این دور",
        "preparing": "مرور شما در حال آماده شدن است…",
        "heading": "🔎 <b>مرور دور {n}</b>",
        "par": "تیم شما از دست اول می‌توانست {par} دست از ۱۳ دست را بگیرد.",
        "taken": "تیم شما از {played} دست بازی‌شده {taken} دست گرفت.",
        "own": "دست {trick}: شما {played} را بازی کردید؛ با {best} تیمتان {n} دست بیشتر می‌گرفت.",
        "partner": (
            "دست {trick}: یارتان ({name}) {played} را بازی کرد؛ با {best} تیمتان {n} دست بیشتر "
            "می‌گرفت."
        ),
        "none": "تیم شما با هیچ ورقی دستی از دست نداد.",
        "total": "روی هم، تیم شما با این ورق‌ها {n} دست از دست داد.",
        "not_playing": "شما در این بازی نیستید",
        "invalid": "این دکمه معتبر نیست",
        "old": "این دور دیگر مرور نمی‌شود: فقط {n} دور آخر شما نگه داشته می‌شود.",
        "private": "مرور هر دور خصوصی است: \u200e/review\u200e را در گفتگوی خصوصی با ربات بفرستید.",
        "nothing": "هنوز دور تمام‌شده‌ای برای مرور ندارید.",
        "suits": {"S": "پیک", "H": "دل", "D": "خشت", "C": "گشنیز"},
        "trump": "حکم: {suit}",
    },
    "en": {
        "button": "🔎 Review this hand",
        "preparing": "Preparing your review…",
        "heading": "🔎 <b>Review of hand {n}</b>",
        "par": "your team could have taken {par} of the 13 tricks from the first trick",
        "taken": "Your team took {taken} of the {played} tricks played.",
        "own": "Trick {trick}: you played {played}; {best} would have taken {n} more {tricks}.",
        "partner": (
            "Trick {trick}: your partner {name} played {played}; {best} would have taken "
            "{n} more {tricks}."
        ),
        "none": "None of your team's plays cost a trick.",
        "total": "In all, your team's plays cost {n} {tricks}.",
        "not_playing": "You are not playing in this game",
        "invalid": "This button is not valid",
        "old": "This hand can no longer be reviewed: only your last hand is kept.",
        "private": "Reviews are private: send /review to me in a private chat.",
        "nothing": "No finished hand of yours to review yet.",
        "suits": {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"},
        "trump": "Trump: {suit}",
    },
}


def _n(lang: str, n: int) -> str:
    return to_persian_digits(n) if lang == "fa" else str(n)


def _say(lang: str, key: str, **values) -> str:
    numbers = {k: _n(lang, v) for k, v in values.items() if isinstance(v, int)}
    words = {"tricks": "trick" if values.get("n") == 1 else "tricks"}
    return TEXT[lang][key].format(**{**values, **words, **numbers})


class Recorder:
    """What the test itself sees of each hand: the deal when play begins (read from
    the stored match before the first card) and every card the people play."""

    def __init__(self) -> None:
        self.deal: dict[int, tuple[list[int], Suit]] = {}
        self.plays: dict[int, list[tuple[int, int]]] = {}

    def wrap(self, strategy):
        def play(view: SeatView):
            action = strategy(view)
            if isinstance(action, PlayCard):
                self.plays.setdefault(view.hand_no, []).append((view.seat, int(action.card)))
            return action

        return play

    def see(self, match: Match) -> None:
        if match.phase is Phase.PLAY and not match.tricks and not match.trick:
            self.deal.setdefault(match.hand_no, (list(match.hands), match.trump))


async def _play_hand(table: Table, strategies, recorder: Recorder, hand_no: int) -> None:
    """Until hand ``hand_no`` is over."""
    for _ in range(200):
        game = await table.game()
        match = Match.from_json(game.state)
        recorder.see(match)
        if match.hand_no > hand_no or match.is_over:
            return
        await table.step(strategies)
    raise AssertionError("the hand did not end")


async def _table(emu, runner, lang):
    people = await _people(emu, NAMES[lang], lang=lang)
    bystander = (await _people(emu, [BYSTANDER[lang]], lang=lang))[0]
    group = emu.add_group("Table", members=[*people, bystander], admins=[people[0]])
    if lang == "en":
        await emu.send_message(people[0], group.id, "/language")
        await runner.settle()
        await emu.press(people[0], group.id, emu.chat_log(group.id)[-1].message_id, "g:::c=en")
        await runner.settle()
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, _data(game.id, "j"))
        await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    return Table(emu, runner, group, people), people, bystander, group


def _result_message(emu, group, game_id: str, hand_no: int):
    data = f"y:{game_id}:{hand_no}"
    found = [
        m
        for m in emu.chat_log(group.id)
        if m.from_bot and any(b.get("callback_data") == data for b in buttons(m))
    ]
    assert len(found) == 1, f"no single hand result with {data!r}"
    return found[0]


def _check_review(text: str, lang: str, seat: int, names, recorder: Recorder, hand_no: int):
    """The review of ``hand_no`` as ``seat`` must read it, figures from core.review."""
    deal, trump = recorder.deal[hand_no]
    plays = recorder.plays[hand_no]
    expected = review_hand(deal, int(trump), plays)
    side = seat % 2
    assert text.startswith(_say(lang, "heading", n=hand_no)), text
    suit = f"{TEXT[lang]['suits'][trump.letter]} {trump.symbol}"
    assert _say(lang, "trump", suit=suit) in text
    assert _say(lang, "par", par=expected.par[side]) in text, text
    taken = _say(lang, "taken", taken=expected.taken[side], played=len(plays) // 4)
    assert taken in text, text
    costly = expected.costly_plays(side)
    lines = [line[2:] for line in text.split("\n") if line.startswith("• ")]
    want = []
    for p in costly:
        cards = {"played": f"{LRI}{p.played}{PDI}", "best": f"{LRI}{p.best}{PDI}"}
        if p.seat == seat:
            want.append(_say(lang, "own", trick=p.trick, n=p.lost, **cards))
        else:
            want.append(_say(lang, "partner", trick=p.trick, n=p.lost, name=names[p.seat], **cards))
    assert lines == want, (lines, want)
    if costly:
        assert _say(lang, "total", n=expected.tricks_lost(side)) in text
    else:
        assert _say(lang, "none") in text
    # Not one card of the other team, played or not; the own team's only as played
    # or as the better card of the same hand.
    for other in (1 - side, 3 - side):
        for card in cards_in(deal[other]):
            assert str(card) not in text, (card, text)
    return expected


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_player_reviews_a_hand_in_private(emu, runner, lang, monkeypatch):
    table, people, bystander, group = await _table(emu, runner, lang)
    game = await table.game()
    match = Match.from_json(game.state)
    seat_of = {game.seats[match.order[s]]["user_id"]: s for s in range(4)}
    user_at = {s: next(p for p in people if p.id == uid) for uid, s in seat_of.items()}
    names = {s: isolate(user_at[s].first_name) for s in range(4)}
    recorder = Recorder()
    # Side 0 plays its lowest cards (so it has plays to review), side 1 plays well.
    strategies = {
        p.id: recorder.wrap(lowest_card if seat_of[p.id] % 2 == 0 else by_level("normal", p.id))
        for p in people
    }
    await _play_hand(table, strategies, recorder, 1)

    result = _result_message(emu, group, game.id, 1)
    [label] = [b["text"] for b in buttons(result) if b.get("callback_data", "").startswith("y:")]
    assert label == TEXT[lang]["button"]  # the group's language

    # Every player presses; each gets their own team's review, in private (a team's
    # costly plays are "you" in one partner's review and named in the other's).
    reviewed = {}
    for seat in range(4):
        user = user_at[seat]
        before = len(emu.chat_log(user.private_chat_id))
        h = await emu.press(user, group.id, result.message_id, f"y:{game.id}:1")
        await runner.settle()
        assert h.answer.text == TEXT[lang]["preparing"] and not h.answer.show_alert
        sent = [m for m in emu.chat_log(user.private_chat_id)[before:] if m.from_bot]
        assert len(sent) == 1, [m.text for m in sent]
        reviewed[seat] = _check_review(sent[0].source, lang, seat, names, recorder, 1)
    assert reviewed[0].costly_plays(0), "side 0 played its lowest cards: something to review"
    assert all(reviewed[seat] == reviewed[0] for seat in range(4))
    # The two reviews are of one hand: the sides' par adds up to 13.
    assert reviewed[0].par[0] + reviewed[1].par[1] == 13

    # Someone who did not play, and made-up buttons, are refused in their language.
    h = await emu.press(bystander, group.id, result.message_id, f"y:{game.id}:1")
    await runner.settle()
    assert h.answer.show_alert and h.answer.text == TEXT[lang]["not_playing"]
    for forged in (f"y:{game.id}:9", f"y:{game.id}", "y:zzzzzz:1"):
        h = await emu.press(user_at[0], group.id, result.message_id, forged)
        await runner.settle()
        assert h.answer.show_alert and h.answer.text == TEXT[lang]["invalid"], forged
    # /review asked in the group: the answer says to ask in private, and shows nothing.
    await emu.send_message(user_at[0], group.id, "/review")
    await runner.settle()
    assert emu.chat_log(group.id)[-1].text == TEXT[lang]["private"]

    # Keeping one hand per player: once hand 2 is over, hand 1's button is old.
    monkeypatch.setattr(hands, "KEEP", 1)
    await _play_hand(table, strategies, recorder, 2)
    h = await emu.press(user_at[0], group.id, result.message_id, f"y:{game.id}:1")
    await runner.settle()
    assert h.answer.show_alert and h.answer.text == TEXT[lang]["old"].format(n=_n(lang, 1))
    async with runner.service.sessions() as s:
        for uid in seat_of:
            count = select(func.count()).where(HandRecord.user_id == uid)
            assert await s.scalar(count) == 1

    # /review in private: the last finished hand, hand 2.
    user = user_at[2]
    before = len(emu.chat_log(user.private_chat_id))
    await emu.send_message(user, user.private_chat_id, "/review")
    await runner.settle()
    sent = [m for m in emu.chat_log(user.private_chat_id)[before:] if m.from_bot]
    assert len(sent) == 1
    _check_review(sent[0].source, lang, 2, names, recorder, 2)

    # No group message ever showed a review (nor, checked by every step, a hidden card).
    heading = TEXT[lang]["heading"].split("<b>")[1].split("{")[0]
    for message in emu.chat_log(group.id):
        for version in message.edit_history:
            assert heading not in (version.text or ""), version.text
            assert TEXT[lang]["par"][:20] not in (version.text or "")


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_review_before_any_hand_is_over(emu, runner, lang):
    user = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    await runner.settle()  # the welcome first
    await emu.send_message(user, user.private_chat_id, "/review")
    await runner.settle()
    assert emu.chat_log(user.private_chat_id)[-1].text == TEXT[lang]["nothing"]
