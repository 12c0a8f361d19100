"""Bidi in Persian texts: every command, signed number, name and card inside a Persian
message is isolated, so that a Latin run does not flip the line around it.

- A ``/command`` inside a Persian msgstr sits between two LRMs (U+200E): without them
  Telegram shows «/newgame» as «newgame/». A line that starts with a command also
  starts with an RLM (U+200F), or the whole line is laid out left to right.
- A signed number (+۱۰۰, −۱۰۰) sits in a left-to-right isolate (LRI … PDI), or its
  sign lands on the right of the digits.
- Names (FSI … PDI) and cards (LRI … PDI) are checked in messages rendered by
  ``telegram_bot.chat.render`` and ``guide`` for matches played through with Latin
  names, since those come from the code, not from the catalog.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from babel.messages.pofile import read_po

from core import HandEnded, HandKind, Kind, Match, MatchEnded, Phase, Variant
from telegram_bot.chat import guide, i18n, render
from telegram_bot.chat.i18n import FSI, LRI, LRM, PDI, RLI, RLM, get_translator

REPO = Path(__file__).resolve().parents[1]
FA_PO = REPO / "locales" / "fa" / "LC_MESSAGES" / "hokm.po"

COMMAND = re.compile(r"(?<![\w/.<])/[a-z]+\b")
SIGNED = re.compile(r"(?<![\w۰-۹])[+\-−][0-9۰-۹]")
CARD = re.compile(r"(?:10|[2-9AKQJ])[♠♥♦♣]")
NAMES = ("Maryam", "Ali", "Sara", "John")


def innermost_isolates(text: str) -> list[str | None]:
    """For each index of ``text``, the opener (LRI, RLI or FSI) of the innermost
    isolate it lies in, or None outside any isolate."""
    stack: list[str] = []
    out: list[str | None] = []
    for ch in text:
        if ch == PDI and stack:
            stack.pop()
        out.append(stack[-1] if stack else None)
        if ch in (LRI, RLI, FSI):
            stack.append(ch)
    return out


def command_problems(text: str) -> list[str]:
    """Commands of ``text`` not wrapped in LRMs, and lines that begin with a command
    but not with an RLM."""
    problems = []
    for match in COMMAND.finditer(text):
        start, end = match.span()
        if not (text[start - 1 : start] == LRM and text[end : end + 1] == LRM):
            problems.append(f"{match.group()} not between LRMs")
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].strip(LRM + RLM) == "" and text[line_start] != RLM:
            problems.append(f"the line of {match.group()} does not start with an RLM")
    return problems


def signed_problems(text: str) -> list[str]:
    isolates = innermost_isolates(text)
    return [
        f"{text[m.start() : m.start() + 5]!r} not in LRI…PDI"
        for m in SIGNED.finditer(text)
        if isolates[m.start()] != LRI
    ]


def fa_messages() -> list:
    with FA_PO.open("rb") as f:
        catalog = read_po(f, locale="fa")
    found = []
    for message in catalog:
        if not message.id:
            continue
        msgid = message.id if isinstance(message.id, str) else message.id[0]
        forms = message.string if isinstance(message.string, tuple | list) else [message.string]
        found += [pytest.param(msgid, form, id=msgid[:40]) for form in forms]
    return found


def test_the_checks_see_what_they_look_for() -> None:
    assert command_problems("برای بازی، \u200e/newgame\u200e را بفرستید.") == []
    assert command_problems("برای بازی، /newgame را بفرستید.")
    assert command_problems("\u200f\u200e/rules\u200e — قوانین") == []
    assert command_problems("\u200e/rules\u200e — قوانین")  # laid out left to right
    assert command_problems("ربات را در t.me/hokm_bot ببینید") == []  # not a command
    assert command_problems("<b>حکم</b>") == []  # not a command
    assert signed_problems(f"اگر هیچ دستی نگیرید {LRI}+۱۰۰{PDI}") == []
    assert signed_problems("اگر هیچ دستی نگیرید +۱۰۰")
    assert signed_problems(f"{FSI}+۱۰۰{PDI}")
    assert signed_problems("تساوی ۶–۶؛ ۷ به ۰") == []
    assert innermost_isolates(f"a{LRI}b{FSI}c{PDI}d{PDI}e") == [
        None, None, LRI, LRI, FSI, LRI, LRI, None, None,
    ]  # fmt: skip


@pytest.mark.parametrize("msgid, msgstr", fa_messages())
def test_persian_commands_and_signed_numbers_are_isolated(msgid: str, msgstr: str) -> None:
    assert command_problems(msgstr) == [], msgstr
    assert signed_problems(msgstr) == [], msgstr


# ------------------------------------------------------------- rendered messages


def _game(variant: Variant, people: int) -> SimpleNamespace:
    seats = [
        {"user_id": 100 + i, "name": NAMES[i]} if i < people else {"bot": True, "level": "normal"}
        for i in range(variant.players)
    ]
    settings = {
        "players": variant.players,
        "kind": "bidding" if variant.kind is Kind.BIDDING else "classic",
        "target": variant.target,
        "timer": 60,
        "card_points": variant.card_points,
    }
    return SimpleNamespace(
        id="g1",
        chat_id=-100,
        move=1,
        deadline=None,
        settings=settings,
        seats=seats,
        user_ids=lambda: [s["user_id"] for s in seats if "user_id" in s],
    )


def _rendered(variant: Variant, people: int, seed: int) -> list[str]:
    """Every message the group and the players see over a match (or its first three
    hands), in Persian."""
    tr = get_translator("fa")
    game = _game(variant, people)
    texts = [render.lobby_text(game, tr), guide.rules_text(game.settings, tr), guide.help_text(tr)]
    match, events = Match.new(variant, seed=seed)
    moves = hands = 0
    while True:
        texts.append(render.table_text(game, match, tr))
        texts += [render.private_text(game, match, seat, tr) for seat in range(variant.players)]
        for event in events:
            if isinstance(event, HandEnded):
                hands += 1
                texts.append(render.hand_result_text(event, game, match, tr))
                if event.winner is not None:
                    for kind in (HandKind.KOT, HandKind.HAKEM_KOT):
                        other = dataclasses.replace(event, kind=kind)
                        texts.append(render.hand_result_text(other, game, match, tr))
            if isinstance(event, MatchEnded):
                texts.append(render.match_result_text(game, match, tr))
        if match.phase is Phase.OVER or hands >= 3:
            return texts
        legal = match.view(match.turn).legal
        events = match.apply(match.turn, legal[moves % len(legal)])
        moves += 1


VARIANTS = [
    (Variant.four(target=2), 2),
    (Variant.four(target=1, teams_by_aces=True), 4),
    (Variant.three(target=2, card_points=True), 3),
    (Variant.two(target=2), 2),
    (Variant.bidding(target=100), 2),
]


@pytest.mark.parametrize("variant, people", VARIANTS, ids=lambda v: str(getattr(v, "players", v)))
def test_rendered_names_and_cards_are_isolated(variant: Variant, people: int) -> None:
    names_seen = cards_seen = 0
    problems: set[str] = set()
    for text in _rendered(variant, people, seed=7):
        isolates = innermost_isolates(text)
        for name in NAMES[:people]:
            for m in re.finditer(name, text):
                names_seen += 1
                if isolates[m.start()] != FSI:
                    problems.add(f"name {name} not in FSI…PDI: {text!r}")
        for m in CARD.finditer(text):
            cards_seen += 1
            if isolates[m.start()] != LRI:
                problems.add(f"card {m.group()} not in LRI…PDI: {text!r}")
        problems.update(f"{p}: {text!r}" for p in signed_problems(text) + command_problems(text))
    assert names_seen > 20 and cards_seen > 20  # the match was really drawn
    assert sorted(problems)[:5] == []


def test_computer_seats_and_the_lobby_are_isolated_too() -> None:
    tr = get_translator("fa")
    game = _game(Variant.four(), 1)
    game.seats[2] = None  # an empty lobby seat
    text = render.lobby_text(game, tr)
    assert f"{FSI}Maryam{PDI}" in text
    assert f"{FSI}🤖 کامپیوتر ۲{PDI}" in text
    assert i18n.isolate("<b>x</b>") == f"{FSI}<b>x</b>{PDI}"
