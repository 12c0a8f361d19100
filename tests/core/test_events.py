"""Events: every change is reported, and no event carries a hidden card."""

from __future__ import annotations

import dataclasses
import json
import random
import typing

import pytest

import core.events as events_module
from core import (
    BidMade,
    BlindDeclared,
    CardPlayed,
    CardsDealt,
    ChooseTrump,
    Discard,
    Discarded,
    Draw,
    Drew,
    Exchanged,
    HakemDrawn,
    HakemRule,
    HandEnded,
    HandKind,
    HandStarted,
    Match,
    MatchEnded,
    Phase,
    PlayCard,
    SeatsArranged,
    Suit,
    TrickWon,
    TrumpChosen,
    Variant,
    event_to_dict,
)
from tests.core.helpers import cards_in_obj, check_first_draw

VARIANTS = [
    Variant.four(target=3),
    Variant.four(teams_by_aces=True, target=2),
    Variant.three(target=2, hakem_rule=HakemRule.WINNER, card_points=True),
    Variant.two(target=2),
    Variant.bidding(target=60),
]
IDS = ["four", "four-aces", "three", "two", "bidding"]

#: Events that report a private change: they say how many, never which cards.
HIDDEN = (CardsDealt, Discarded, Drew, Exchanged)
#: The only events that name cards; every card in them is face up on the table.
PUBLIC = (HakemDrawn, CardPlayed, TrickWon)


def _play(variant: Variant, seed: int, max_hands: int = 8) -> tuple[Match, list[tuple]]:
    """A seeded match: (seat, action, events) per action, with start() as the first."""
    rng = random.Random(seed)
    m, start = Match.new(variant, seed=seed)
    log: list[tuple] = [(None, None, start)]
    while not m.is_over and m.hand_no <= max_hands:
        seat = m.turn
        action = rng.choice(m.legal_actions(seat))
        log.append((seat, action, m.apply(seat, action)))
    return m, log


def test_event_classes_have_no_card_fields_unless_public() -> None:
    names = [n for n in events_module.__all__ if n[0].isupper() and n not in ("Event", "HandKind")]
    for name in names:
        cls = getattr(events_module, name)
        hints = typing.get_type_hints(cls)
        named_cards = any("Card" in str(hints[f.name]) for f in dataclasses.fields(cls))
        assert named_cards == issubclass(cls, PUBLIC), name


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
@pytest.mark.parametrize("seed", range(4))
def test_every_action_reports_and_hides_cards(variant: Variant, seed: int) -> None:
    _, log = _play(variant, seed)
    played: set = set()
    for seat, action, events in log:
        assert events, f"{action!r} changed the match without an event"
        for e in events:
            found = cards_in_obj(e)
            if isinstance(e, HIDDEN) or not isinstance(e, PUBLIC):
                assert not found, e
            if isinstance(e, CardPlayed):
                assert e.card == action.card and e.seat == seat
                played.add(e.card)
            if isinstance(e, TrickWon):
                assert {c for _, c in e.plays} <= played
            d = event_to_dict(e)
            assert d["event"] == type(e).__name__
            json.dumps(d)  # JSON-friendly


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
@pytest.mark.parametrize("seed", range(3))
def test_event_per_change(variant: Variant, seed: int) -> None:
    """HakemDrawn with the draw, TrumpChosen, CardPlayed, TrickWon, HandEnded with points
    and kind, MatchEnded: each exactly when its change happens."""
    m, log = _play(variant, seed, max_hands=30)
    n = variant.players
    start = log[0][2]
    if variant.kind == "classic":
        drawn = start[0]
        assert isinstance(drawn, HakemDrawn) and drawn.draw
        check_first_draw(variant, drawn)
        if variant.teams_by_aces:
            assert isinstance(start[1], SeatsArranged)
        assert start[-2] == HandStarted(1, drawn.hakem, (drawn.hakem - 1) % n)
        assert isinstance(start[-1], CardsDealt)
    else:
        (hs,) = start
        assert hs.hand_no == 1 and hs.hakem is None and hs.dealer == 1 - hs.first
    in_trick = hands = 0
    last_won = None
    for seat, action, events in log[1:]:
        kinds = [type(e) for e in events]
        if isinstance(action, ChooseTrump):
            assert events[0] == TrumpChosen(seat, action.suit)
        if not isinstance(action, PlayCard):
            assert CardPlayed not in kinds and TrickWon not in kinds and HandEnded not in kinds
            continue
        assert events[0] == CardPlayed(seat, action.card)
        in_trick += 1
        if in_trick < n:
            assert kinds == [CardPlayed]
            continue
        in_trick = 0
        won = events[1]
        assert isinstance(won, TrickWon) and won.plays[-1] == (seat, action.card)
        assert sum(won.tricks) == won.trick_no and won.tricks[won.seat] >= 1
        if last_won is not None and last_won.trick_no + 1 == won.trick_no:
            assert won.plays[0][0] == last_won.seat  # the winner led this trick
        last_won = won
        if HandEnded not in kinds:
            assert kinds == [CardPlayed, TrickWon]
            continue
        hands += 1
        ended = events[2]
        assert isinstance(ended, HandEnded) and ended.hand_no == hands
        assert ended.tricks == won.tricks
        assert isinstance(ended.kind, HandKind) and len(ended.points) == variant.sides
        if MatchEnded in kinds:
            assert kinds[3:] == [MatchEnded]
            assert events[3].scores == ended.scores and m.is_over
        else:
            assert kinds[3] is HandStarted and events[3].hand_no == hands + 1
            last_won = None
    assert hands >= 1
    if m.is_over:
        assert isinstance(log[-1][2][-1], MatchEnded)


def test_hand_ended_reports_points_and_kind() -> None:
    m, log = _play(Variant.four(), 21, max_hands=40)
    ends = [e for _, _, evs in log for e in evs if isinstance(e, HandEnded)]
    scores = [0, 0]
    for e in ends:
        w = e.winner
        side_tricks = [e.tricks[0] + e.tricks[2], e.tricks[1] + e.tricks[3]]
        assert side_tricks[w] == 7
        expected = {HandKind.NORMAL: 1, HandKind.KOT: 2, HandKind.HAKEM_KOT: 3}[e.kind]
        assert e.points[w] == expected and e.points[1 - w] == 0
        assert (e.kind is HandKind.NORMAL) == (side_tricks[1 - w] > 0)
        if e.kind is not HandKind.NORMAL:
            assert (e.kind is HandKind.KOT) == (e.hakem % 2 == w)
        scores[w] += expected
        assert list(e.scores) == scores
    assert m.is_over and scores == m.scores


def test_hidden_events_in_the_two_player_draw() -> None:
    m, _ = Match.new(Variant.two(), seed=4)
    m.apply(m.turn, ChooseTrump(Suit.SPADES))
    h = m.turn
    events = m.apply(h, Discard(tuple(m.hand_of(h)[:2])))
    assert events == [Discarded(h, 2)]
    events = m.apply(1 - h, Discard(tuple(m.hand_of(1 - h)[:2])))
    assert events == [Discarded(1 - h, 2)]
    events = m.apply(h, Draw(True))
    assert events == [Drew(h, 39)]
    for e in (Discarded(0, 2), Drew(1, 3), Exchanged(0, 3), CardsDealt((13, 13))):
        assert set(event_to_dict(e)) <= {"event", "seat", "count", "stock_left", "counts"}
    assert not cards_in_obj([BlindDeclared(0, True), BidMade(1, 4)])
    assert m.phase is Phase.DRAW
