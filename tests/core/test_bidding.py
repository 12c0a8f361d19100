"""The two-player bidding variant (RULES.md "Two-player bidding variant", seed 004)."""

from __future__ import annotations

import random

import pytest

from core import (
    CARDS,
    Bid,
    BidMade,
    BlindDeclared,
    CardsDealt,
    ChooseTrump,
    DeclareBlind,
    Draw,
    Drew,
    ErrorCode,
    Exchange,
    Exchanged,
    HakemDrawn,
    HandEnded,
    HandKind,
    HandStarted,
    Match,
    MatchEnded,
    Phase,
    PlayCard,
    Suit,
    Variant,
)
from core.scoring import bidding_points
from tests.core.helpers import (
    build_position,
    card,
    cards,
    cards_in_obj,
    of_type,
    play_trick,
    ref_bidding_points,
    refused,
    view_cards,
)

BIDDING = Variant.bidding()


def _declare(m: Match, second_blind: bool, first_blind: bool) -> None:
    first = m.first
    second = 1 - first
    assert m.phase is Phase.BLIND and m.turn == second
    assert m.apply(second, DeclareBlind(second_blind)) == [BlindDeclared(second, second_blind)]
    assert m.phase is Phase.BLIND and m.turn == first
    assert m.apply(first, DeclareBlind(first_blind)) == [BlindDeclared(first, first_blind)]
    assert m.phase is Phase.DRAW and m.turn == first


def _draw_all(m: Match, rng: random.Random) -> list:
    events: list = []
    seat = m.first
    for i in range(26):
        assert m.phase is Phase.DRAW and m.turn == seat
        assert m.view(seat).top_card == m.stock[0] and m.view(1 - seat).top_card is None
        ev = m.apply(seat, Draw(rng.random() < 0.5))
        assert ev[0] == Drew(seat, 52 - 2 * (i + 1))
        events += ev
        seat = 1 - seat
    return events


@pytest.mark.parametrize("seed", range(6))
def test_hand_without_blind_nil(seed: int) -> None:
    rng = random.Random(seed)
    m, events = Match.new(BIDDING, seed=seed)
    first = m.first
    second = 1 - first
    assert first in (0, 1)
    # No hakem, no first-ace draw; spades are trump.
    assert not of_type(events, HakemDrawn)
    assert events == [HandStarted(1, None, second, first)]
    assert m.trump is Suit.SPADES and m.hakem is None
    # Blind nil is declared before anyone sees a card: no hand yet.
    assert m.view(0).hand == () == m.view(1).hand and len(m.stock) == 52
    assert refused(m, first, DeclareBlind(False)).code is ErrorCode.NOT_YOUR_TURN
    assert refused(m, second, Draw(True)).code is ErrorCode.WRONG_PHASE
    assert refused(m, second, Bid(3)).code is ErrorCode.WRONG_PHASE
    assert refused(m, second, ChooseTrump(Suit.HEARTS)).code is ErrorCode.WRONG_PHASE
    _declare(m, False, False)
    assert refused(m, first, DeclareBlind(True)).code is ErrorCode.WRONG_PHASE
    events = _draw_all(m, rng)
    # 26 draws: 13 cards each, the other 26 set aside.
    assert events[-1] == CardsDealt((13, 13))
    assert [len(m.hand_of(s)) for s in range(2)] == [13, 13]
    assert not m.stock and len(m.pile) == 26
    everything = [*m.hand_of(0), *m.hand_of(1), *m.pile]
    assert sorted(everything) == list(CARDS)
    assert not cards_in_obj(events)  # no event names a drawn or discarded card
    assert not view_cards(m.view(first)) & set(m.hand_of(second))
    # Bidding: the second player bids first.
    assert m.phase is Phase.BID and m.turn == second
    for bad in (14, -1, "3", None, 2.5):
        assert refused(m, second, Bid(bad)).code is ErrorCode.BAD_BID
    assert refused(m, first, Bid(3)).code is ErrorCode.NOT_YOUR_TURN
    assert m.legal_actions(second) == [Bid(t) for t in range(14)]
    assert m.apply(second, Bid(4)) == [BidMade(second, 4, False)]
    assert m.phase is Phase.BID and m.turn == first
    assert m.apply(first, Bid(0)) == [BidMade(first, 0, False)]
    # The second player leads.
    assert m.phase is Phase.PLAY and m.turn == m.leader == second
    assert m.bids[second] == 4 and m.bids[first] == 0 and m.blind == [False, False]


@pytest.mark.parametrize(
    ("second_blind", "first_blind"), [(True, False), (False, True), (True, True)]
)
def test_blind_nil_and_exchange(second_blind: bool, first_blind: bool) -> None:
    rng = random.Random(7)
    m, _ = Match.new(BIDDING, seed=7)
    first, second = m.first, 1 - m.first
    _declare(m, second_blind, first_blind)
    assert m.blind[second] is second_blind and m.blind[first] is first_blind
    _draw_all(m, rng)
    blinds = [s for s in (second, first) if m.blind[s]]
    for seat in blinds:
        assert m.phase is Phase.EXCHANGE and m.turn == seat and m.bids[seat] == 0
        hand = m.hand_of(seat)
        other = m.hand_of(1 - seat)
        assert refused(m, seat, Exchange(tuple(hand[:4]))).code is ErrorCode.BAD_EXCHANGE
        assert refused(m, seat, Exchange((hand[0], hand[0]))).code is ErrorCode.BAD_EXCHANGE
        e = refused(m, seat, Exchange((hand[0], other[0])))
        assert e.code is ErrorCode.CARD_NOT_IN_HAND
        assert refused(m, seat, Exchange((99,))).code is ErrorCode.UNKNOWN_CARD
        assert refused(m, 1 - seat, Exchange(())).code is ErrorCode.NOT_YOUR_TURN
        assert refused(m, seat, Bid(0)).code is ErrorCode.WRONG_PHASE
        given = tuple(hand[:3]) if seat == second else (hand[5],)
        pile_before = set(m.pile)
        assert m.apply(seat, Exchange(given)) == [Exchanged(seat, len(given))]
        now = set(m.hand_of(seat))
        assert len(now) == 13 and not now & set(given)
        taken = now - set(hand)
        assert len(taken) == len(given) and taken <= pile_before  # random discards
        assert set(given) <= set(m.pile) and len(m.pile) == 26
        assert set(m.hand_of(1 - seat)) == set(other)
    # Blind players have bid nil already; the others bid; the second player leads.
    if not (second_blind and first_blind):
        (bidder,) = (s for s in (second, first) if not m.blind[s])
        assert m.phase is Phase.BID and m.turn == bidder
        m.apply(bidder, Bid(5))
    assert m.phase is Phase.PLAY and m.turn == second
    assert [m.bids[s] for s in blinds] == [0] * len(blinds)


def test_exchange_of_nothing_is_allowed() -> None:
    m, _ = Match.new(BIDDING, seed=3)
    _declare(m, True, False)
    _draw_all(m, random.Random(3))
    hand = m.hand_of(m.turn)
    assert m.apply(m.turn, Exchange(())) == [Exchanged(1 - m.first, 0)]
    assert m.hand_of(1 - m.first) == hand


# ----------------------------------------------------------- spades broken


def test_spades_cannot_be_led_until_broken() -> None:
    # First player 0, so seat 1 (the second player) leads.
    m = build_position(
        BIDDING,
        tricks_won=[0, 0],
        first=0,
        hands={
            1: cards("AS 2H 3H 4H 5H 6H 7H 2C 3C 4C 5C 6C 7C"),
            0: cards("KS QS 8D 9D 10D JD QD KD AD 8C 9C 10C JC"),
        },
    )
    assert m.turn == 1 and not m.spades_broken
    e = refused(m, 1, PlayCard(card("AS")))
    assert e.code is ErrorCode.SPADES_NOT_BROKEN
    assert card("AS") not in m.legal_cards(1)
    assert {a.card for a in m.legal_actions(1)} == set(m.hand_of(1)) - {card("AS")}
    m.apply(1, PlayCard(card("2H")))
    # Seat 0 has no heart: any card, a spade included; the spade wins and breaks spades.
    assert set(m.legal_cards(0)) == set(m.hand_of(0))
    events = m.apply(0, PlayCard(card("QS")))
    assert events[1].seat == 0 and m.spades_broken and m.view(None).spades_broken
    assert m.turn == 0 and card("KS") in m.legal_cards(0)
    m.apply(0, PlayCard(card("KS")))  # now spades may be led
    assert refused(m, 1, PlayCard(card("2C"))).code is ErrorCode.MUST_FOLLOW_SUIT


def test_only_spades_may_be_led_and_do_not_break() -> None:
    m = build_position(
        BIDDING,
        tricks_won=[5, 6],
        first=0,
        hands={1: cards("AS KS"), 0: cards("2H 3H")},
    )
    assert m.turn == 1 and set(m.legal_cards(1)) == set(cards("AS KS"))
    m.apply(1, PlayCard(card("AS")))
    m.apply(0, PlayCard(card("2H")))
    assert m.turn == 1 and not m.spades_broken  # led, not played on another suit


def test_follow_suit_and_spade_wins() -> None:
    m = build_position(
        BIDDING,
        tricks_won=[5, 6],
        first=0,
        spades_broken=True,
        hands={1: cards("AH 2S"), 0: cards("3S 2H")},
    )
    m.apply(1, PlayCard(card("AH")))
    assert refused(m, 0, PlayCard(card("3S"))).code is ErrorCode.MUST_FOLLOW_SUIT
    m.apply(0, PlayCard(card("2H")))
    assert m.turn == 1
    m.apply(1, PlayCard(card("2S")))
    events = m.apply(0, PlayCard(card("3S")))
    assert events[1].seat == 0  # the highest spade


# ---------------------------------------------------------------- scoring


@pytest.mark.parametrize(
    ("bids", "blind", "tricks", "bags", "points", "new_bags"),
    [
        ((3, 4), (False, False), (5, 8), (0, 0), (32, 44), (2, 4)),  # 10/trick + 1/bag
        ((5, 5), (False, False), (4, 9), (0, 0), (-50, 54), (0, 4)),  # missed: -10/trick
        ((13, 0), (False, False), (13, 0), (0, 0), (130, 100), (0, 0)),  # nil made +100
        ((0, 4), (False, False), (2, 11), (0, 0), (-100, 47), (0, 7)),  # nil missed -100
        ((0, 4), (True, False), (0, 13), (0, 0), (200, 49), (0, 9)),  # blind nil +200
        ((0, 4), (True, False), (1, 12), (0, 0), (-200, 48), (0, 8)),  # blind nil -200
        ((2, 3), (False, False), (3, 10), (9, 0), (21 - 100, 37), (0, 7)),  # 10 bags: -100
        ((2, 3), (False, False), (6, 7), (8, 5), (24 - 100, 34), (2, 9)),
        ((1, 1), (False, False), (1, 12), (9, 0), (10, 21 - 100), (9, 1)),
        ((4, 6), (False, False), (4, 9), (3, 9), (40, 63 - 100), (3, 2)),
    ],
)
def test_bidding_points(bids, blind, tricks, bags, points, new_bags) -> None:
    assert bidding_points(bids, blind, tricks, bags) == (points, new_bags)
    assert ref_bidding_points(bids, blind, tricks, bags) == (points, new_bags)


def _last_trick(before: list, leader: int, **kw) -> tuple[Match, list]:
    m = build_position(BIDDING, tricks_won=before, first=0, hands={leader: [card("AS")]}, **kw)
    m.leader = m.turn = leader
    return m, play_trick(m, card("AS"))


def test_hand_score_in_a_match() -> None:
    m, events = _last_trick([5, 7], 0, bids=[5, 6], bags=[9, 0], scores=[100, 40])
    (ended,) = of_type(events, HandEnded)
    # Seat 0: bid 5, took 6: 51, and the tenth bag costs 100. Seat 1: 60 + 1.
    assert ended.points == (51 - 100, 61) and ended.tricks == (6, 7)
    assert ended.scores == (51, 101) and ended.kind is HandKind.NORMAL
    assert ended.hakem is None and m.bags == [0, 1]
    # After each hand the other player draws first.
    (started,) = of_type(events, HandStarted)
    assert started == HandStarted(2, None, 0, 1) and m.first == 1
    assert m.phase is Phase.BLIND and m.turn == 0


@pytest.mark.parametrize(
    ("scores", "bids", "before", "leader", "final", "winner"),
    [
        ([480, 100], [2, 5], [2, 10], 1, (500, 156), 0),  # first to 500
        ([490, 480], [3, 5], [3, 9], 1, (520, 535), 1),  # both over: the higher wins
        ([300, 495], [3, 5], [3, 9], 0, (331, 549), 1),  # one over
        ([490, 380], [1, 12], [1, 11], 1, (500, 500), None),  # exact tie: play on
        ([100, 100], [3, 5], [3, 9], 1, (130, 155), None),
    ],
)
def test_match_target(scores, bids, before, leader, final, winner) -> None:
    m, events = _last_trick(before, leader, bids=bids, scores=scores)
    assert of_type(events, HandEnded)[0].scores == final
    if winner is None:
        assert not of_type(events, MatchEnded) and not m.is_over
        assert of_type(events, HandStarted)[0].hand_no == 2
    else:
        assert events[-1] == MatchEnded(winner, final)
        assert m.is_over and m.winner == winner


def test_no_card_is_both_held_and_discarded_after_a_blind_nil_exchange():
    """The blind nil exchange takes cards back from the discard pile: they leave the
    discards (a card once listed in both showed up in the group as 'hidden')."""
    from core import cards_in

    exchanges = 0
    for seed in range(60):
        rng = random.Random(seed)
        match, _ = Match.new(Variant.bidding(target=100), seed=seed)
        while not match.is_over and match.hand_no <= 3:
            seat = match.turn
            legal = match.legal_actions(seat)
            blind = [a for a in legal if isinstance(a, DeclareBlind) and a.blind]
            action = blind[0] if blind else rng.choice(legal)
            if isinstance(action, Exchange):
                exchanges += 1
            match.apply(seat, action)
            for s in range(match.n):
                held = set(match.hand_of(s))
                for d in match.discards:
                    assert not held & set(cards_in(d))
    assert exchanges > 0
