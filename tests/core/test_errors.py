"""Refused actions: every ErrorCode arises with the match left exactly as it was."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from core import (
    Bid,
    ChooseTrump,
    DeclareBlind,
    Discard,
    Draw,
    ErrorCode,
    Exchange,
    IllegalAction,
    Match,
    Phase,
    PlayCard,
    Suit,
    Variant,
)
from tests.core.helpers import (
    build_position,
    card,
    cards,
    play_random_until,
    refused,
    refused_play,
)


def _four_in_play(seed: int = 4) -> Match:
    m, _ = Match.new(Variant.four(), seed=seed)
    m.apply(m.turn, ChooseTrump(Suit.HEARTS))
    return m


def _two_in_discard() -> Match:
    m, _ = Match.new(Variant.two(), seed=2)
    m.apply(m.turn, ChooseTrump(Suit.CLUBS))
    return m


def _bidding_at(phase: Phase, blind: bool = False) -> Match:
    m, _ = Match.new(Variant.bidding(), seed=6)
    m.apply(m.turn, DeclareBlind(blind))
    m.apply(m.turn, DeclareBlind(False))
    play_random_until(m, random.Random(1), lambda x: x.phase is phase)
    return m


def not_your_turn() -> None:
    m, _ = Match.new(Variant.four(), seed=1)
    other = (m.turn + 1) % 4
    assert refused(m, other, ChooseTrump(Suit.SPADES)).code is ErrorCode.NOT_YOUR_TURN
    m.apply(m.turn, ChooseTrump(Suit.SPADES))
    other = (m.turn + 2) % 4
    assert refused(m, other, PlayCard(m.hand_of(other)[0])).code is ErrorCode.NOT_YOUR_TURN
    assert refused_play(m, other, m.hand_of(other)[0]).code is ErrorCode.NOT_YOUR_TURN
    m2 = _two_in_discard()
    other = 1 - m2.turn
    e = refused(m2, other, Discard(tuple(m2.hand_of(other)[:2])))
    assert e.code is ErrorCode.NOT_YOUR_TURN


def wrong_phase() -> None:
    m, _ = Match.new(Variant.four(), seed=1)
    h = m.turn
    assert refused(m, h, PlayCard(m.hand_of(h)[0])).code is ErrorCode.WRONG_PHASE
    assert refused_play(m, h, m.hand_of(h)[0]).code is ErrorCode.WRONG_PHASE
    for action in (Discard(tuple(m.hand_of(h)[:2])), Draw(True), Bid(3), DeclareBlind(True)):
        assert refused(m, h, action).code is ErrorCode.WRONG_PHASE
    m.apply(h, ChooseTrump(Suit.SPADES))
    assert refused(m, h, ChooseTrump(Suit.HEARTS)).code is ErrorCode.WRONG_PHASE
    assert refused(m, h, Exchange(())).code is ErrorCode.WRONG_PHASE
    before = m.to_json()
    with pytest.raises(IllegalAction) as info:
        m.start()
    assert info.value.code is ErrorCode.WRONG_PHASE and m.to_json() == before


def card_not_in_hand() -> None:
    m = _four_in_play()
    seat = m.turn
    other_card = m.hand_of((seat + 1) % 4)[0]
    assert refused(m, seat, PlayCard(other_card)).code is ErrorCode.CARD_NOT_IN_HAND
    assert refused_play(m, seat, other_card).code is ErrorCode.CARD_NOT_IN_HAND
    m3, _ = Match.new(Variant.three(), seed=1)
    m3.apply(m3.turn, ChooseTrump(Suit.SPADES))
    e = refused(m3, m3.turn, PlayCard(card("2C")))  # the removed 2 is in nobody's hand
    assert e.code is ErrorCode.CARD_NOT_IN_HAND
    m2 = _two_in_discard()
    theirs = m2.hand_of(1 - m2.turn)[0]
    e = refused(m2, m2.turn, Discard((m2.hand_of(m2.turn)[0], theirs)))
    assert e.code is ErrorCode.CARD_NOT_IN_HAND


def must_follow_suit() -> None:
    m = build_position(
        Variant.four(),
        tricks_won=[2, 2, 2, 2],
        trump=Suit.CLUBS,
        hands={0: cards("AH"), 1: cards("2H 2C 2D")},
        leader=0,
    )
    m.apply(0, PlayCard(card("AH")))
    for c in cards("2C 2D"):
        e = refused(m, 1, PlayCard(c))
        assert e.code is ErrorCode.MUST_FOLLOW_SUIT and e.info == {"led_suit": Suit.HEARTS}
        assert refused_play(m, 1, c).code is ErrorCode.MUST_FOLLOW_SUIT


def unknown_card() -> None:
    m = _four_in_play()
    seat = m.turn
    for bad in (52, -1, 1000, "AS", None, 3.0):
        assert refused(m, seat, PlayCard(bad)).code is ErrorCode.UNKNOWN_CARD
        assert refused_play(m, seat, bad).code is ErrorCode.UNKNOWN_CARD
    m2 = _two_in_discard()
    hand = m2.hand_of(m2.turn)
    for bad in ((hand[0], 60), ("AS", "KS"), (hand[0], None)):
        assert refused(m2, m2.turn, Discard(bad)).code is ErrorCode.UNKNOWN_CARD


def spades_not_broken() -> None:
    m = build_position(
        Variant.bidding(), tricks_won=[0, 0], first=0, hands={1: cards("AS 2H"), 0: cards("3H")}
    )
    assert refused(m, 1, PlayCard(card("AS"))).code is ErrorCode.SPADES_NOT_BROKEN
    assert refused_play(m, 1, card("AS")).code is ErrorCode.SPADES_NOT_BROKEN


def bad_bid() -> None:
    m = _bidding_at(Phase.BID)
    for bad in (14, -1, 100, "5", None):
        assert refused(m, m.turn, Bid(bad)).code is ErrorCode.BAD_BID


def bad_discard() -> None:
    m = _two_in_discard()
    hand = m.hand_of(m.turn)
    for bad in (hand[:3], hand[:1], (), (hand[0], hand[0]), (hand[0], hand[0], hand[1]), hand):
        assert refused(m, m.turn, Discard(tuple(bad))).code is ErrorCode.BAD_DISCARD


def bad_exchange() -> None:
    m = _bidding_at(Phase.EXCHANGE, blind=True)
    hand = m.hand_of(m.turn)
    for bad in (hand[:4], hand, (hand[0], hand[0]), (hand[0], hand[0], hand[1], hand[2])):
        assert refused(m, m.turn, Exchange(tuple(bad))).code is ErrorCode.BAD_EXCHANGE


def no_such_seat() -> None:
    m = _four_in_play()
    action = PlayCard(m.hand_of(m.turn)[0])
    for bad in (4, -1, 17, "0", None):
        assert refused(m, bad, action).code is ErrorCode.NO_SUCH_SEAT
    for bad in (4, -1):
        with pytest.raises(IllegalAction) as info:
            m.view(bad)
        assert info.value.code is ErrorCode.NO_SUCH_SEAT
    m3, _ = Match.new(Variant.three(), seed=1)
    assert refused(m3, 3, ChooseTrump(Suit.SPADES)).code is ErrorCode.NO_SUCH_SEAT
    m2 = _two_in_discard()
    assert refused(m2, 2, Discard(())).code is ErrorCode.NO_SUCH_SEAT


def match_over() -> None:
    m, _ = Match.new(Variant.four(target=1), seed=3)
    play_random_until(m, random.Random(3), lambda x: False)
    assert m.is_over
    for seat in range(4):
        for action in (ChooseTrump(Suit.SPADES), PlayCard(card("AS")), Bid(2), "nonsense"):
            assert refused(m, seat, action).code is ErrorCode.MATCH_OVER


def unknown_action() -> None:
    m, _ = Match.new(Variant.four(), seed=1)
    for bad in (object(), "play AS", None, 3, {"type": "play", "card": "AS"}):
        assert refused(m, m.turn, bad).code is ErrorCode.UNKNOWN_ACTION
    assert refused(m, m.turn, ChooseTrump(7)).code is ErrorCode.UNKNOWN_ACTION


SCENARIOS: dict[ErrorCode, Callable[[], None]] = {
    ErrorCode.NOT_YOUR_TURN: not_your_turn,
    ErrorCode.WRONG_PHASE: wrong_phase,
    ErrorCode.CARD_NOT_IN_HAND: card_not_in_hand,
    ErrorCode.MUST_FOLLOW_SUIT: must_follow_suit,
    ErrorCode.UNKNOWN_CARD: unknown_card,
    ErrorCode.SPADES_NOT_BROKEN: spades_not_broken,
    ErrorCode.BAD_BID: bad_bid,
    ErrorCode.BAD_DISCARD: bad_discard,
    ErrorCode.BAD_EXCHANGE: bad_exchange,
    ErrorCode.NO_SUCH_SEAT: no_such_seat,
    ErrorCode.MATCH_OVER: match_over,
    ErrorCode.UNKNOWN_ACTION: unknown_action,
}


def test_every_error_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(ErrorCode)


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_error(code: ErrorCode) -> None:
    SCENARIOS[code]()


def test_error_codes_are_stable_strings() -> None:
    """The bot translates these values; they must not change by accident."""
    assert {c.value for c in ErrorCode} == {
        "not_your_turn",
        "wrong_phase",
        "card_not_in_hand",
        "must_follow_suit",
        "unknown_card",
        "spades_not_broken",
        "bad_bid",
        "bad_discard",
        "bad_exchange",
        "no_such_seat",
        "match_over",
        "unknown_action",
    }
    e = IllegalAction(ErrorCode.BAD_BID, "bid 0 to 13")
    assert e.code is ErrorCode.BAD_BID and "bad_bid" in str(e) and e.info == {}


def test_refused_action_then_legal_action_works() -> None:
    """A refusal leaves no trace: the same legal continuation follows."""
    a = _four_in_play(9)
    b = Match.from_json(a.to_json())
    seat = a.turn
    refused(a, (seat + 1) % 4, PlayCard(a.hand_of((seat + 1) % 4)[0]))
    refused(a, seat, PlayCard(52))
    rng_a, rng_b = random.Random(5), random.Random(5)
    ea = play_random_until(a, rng_a, lambda x: x.hand_no > 2)
    eb = play_random_until(b, rng_b, lambda x: x.hand_no > 2)
    assert ea == eb and a.to_json() == b.to_json()
