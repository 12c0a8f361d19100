"""Two players (RULES.md "Two players"): five each, trump, two discards each hakem
first, the keep-or-discard draw to 13 cards with one stock card left, hidden discards,
first to 7 tricks, kot, the next hakem and the match target."""

from __future__ import annotations

import random

import pytest

from core import (
    CARDS,
    CardsDealt,
    ChooseTrump,
    Discard,
    Discarded,
    Draw,
    Drew,
    ErrorCode,
    HakemDrawn,
    HandEnded,
    HandKind,
    HandStarted,
    Match,
    MatchEnded,
    Phase,
    Suit,
    TrumpChosen,
    Variant,
)
from tests.core.helpers import (
    build_position,
    card,
    cards_in_obj,
    check_first_draw,
    of_type,
    play_trick,
    refused,
    view_cards,
)

TWO = Variant.two()
ACE = card("AS")


def _discards(m: Match, seat: int) -> set:
    return {c for c in CARDS if m.discards[seat] >> c & 1}


@pytest.mark.parametrize("seed", range(10))
def test_deal_trump_discard_and_draw(seed: int) -> None:
    rng = random.Random(seed)
    m, events = Match.new(TWO, seed=seed)
    drawn = events[0]
    assert isinstance(drawn, HakemDrawn)
    check_first_draw(TWO, drawn)
    h = drawn.hakem
    o = 1 - h
    # Cards were dealt alternately; the other player is the dealer.
    assert events[1:] == [HandStarted(1, h, o), CardsDealt((5, 5))]
    assert m.dealer == o
    assert len(m.stock) == 41 and m.view(None).stock_size == 41
    # Both hold five; only the hakem acts: trump.
    assert m.phase is Phase.TRUMP and m.turn == h
    assert refused(m, o, ChooseTrump(Suit.HEARTS)).code is ErrorCode.NOT_YOUR_TURN
    assert m.apply(h, ChooseTrump(Suit.HEARTS)) == [TrumpChosen(h, Suit.HEARTS)]
    # Discard two each, hakem first.
    assert m.phase is Phase.DISCARD and m.turn == h
    assert len(m.legal_actions(h)) == 10 and m.legal_actions(o) == []
    assert refused(m, o, Discard(tuple(m.hand_of(o)[:2]))).code is ErrorCode.NOT_YOUR_TURN
    hand = m.hand_of(h)
    assert refused(m, h, Discard(tuple(hand[:3]))).code is ErrorCode.BAD_DISCARD
    assert refused(m, h, Discard(tuple(hand[:1]))).code is ErrorCode.BAD_DISCARD
    assert refused(m, h, Discard((hand[0], hand[0]))).code is ErrorCode.BAD_DISCARD
    assert refused(m, h, Discard((hand[0], m.hand_of(o)[0]))).code is ErrorCode.CARD_NOT_IN_HAND
    put_away = {h: set(rng.sample(hand, 2))}
    assert m.apply(h, Discard(tuple(put_away[h]))) == [Discarded(h, 2)]
    assert set(m.hand_of(h)) == set(hand) - put_away[h]
    assert m.phase is Phase.DISCARD and m.turn == o
    put_away[o] = set(m.hand_of(o)[1:3])
    assert m.apply(o, Discard(tuple(put_away[o]))) == [Discarded(o, 2)]
    # The draw: hakem first, then alternating, until both hold 13.
    assert m.phase is Phase.DRAW and m.turn == h
    seat = h
    for i in range(20):
        assert m.turn == seat and m.legal_actions(seat) == [Draw(True), Draw(False)]
        top, nxt = m.stock[0], m.stock[1]
        # Only the deciding seat sees the top card.
        assert m.view(seat).top_card == top
        assert m.view(1 - seat).top_card is None and m.view(None).top_card is None
        keep = rng.random() < 0.5
        before = set(m.hand_of(seat))
        events = m.apply(seat, Draw(keep))
        kept, dropped = (top, nxt) if keep else (nxt, top)
        assert set(m.hand_of(seat)) == before | {kept}
        put_away[seat].add(dropped)
        assert _discards(m, seat) == put_away[seat]
        assert events[0] == Drew(seat, 41 - 2 * (i + 1))
        # Discards are never shown to the opponent, nor in any event.
        assert not view_cards(m.view(1 - seat)) & put_away[seat]
        assert not view_cards(m.view(None)) & (put_away[h] | put_away[o])
        assert not cards_in_obj(events)
        seat = 1 - seat
    assert events[1:] == [CardsDealt((13, 13))]
    assert len(m.hand_of(h)) == len(m.hand_of(o)) == 13
    assert len(m.stock) == 1  # one stock card is left over
    assert len(put_away[h]) == len(put_away[o]) == 12
    # Every card of the 51 is in exactly one place.
    everything = [*m.hand_of(0), *m.hand_of(1), *m.stock, *put_away[0], *put_away[1]]
    assert len(everything) == len(set(everything)) == 51
    # The hakem leads.
    assert m.phase is Phase.PLAY and m.turn == m.leader == h
    assert set(m.view(h).discards) == put_away[h] and set(m.view(o).discards) == put_away[o]


def test_draw_actions_only_in_the_draw_phase() -> None:
    m, _ = Match.new(TWO, seed=1)
    assert refused(m, m.turn, Draw(True)).code is ErrorCode.WRONG_PHASE
    assert refused(m, m.turn, Discard(tuple(m.hand_of(m.turn)[:2]))).code is ErrorCode.WRONG_PHASE


@pytest.mark.parametrize(
    ("before", "leader", "hakem", "expected"),
    [
        ([6, 3], 0, 0, (0, HandKind.NORMAL, (1, 0))),
        ([3, 6], 1, 0, (1, HandKind.NORMAL, (0, 1))),
        ([6, 0], 0, 0, (0, HandKind.KOT, (2, 0))),  # kot: 2 for the hakem
        ([6, 0], 0, 1, (0, HandKind.HAKEM_KOT, (3, 0))),  # 3 for the non-hakem
        ([0, 6], 1, 1, (1, HandKind.KOT, (0, 2))),
        ([5, 5], 0, 0, None),  # 6-5 goes on
    ],
)
def test_first_to_seven_tricks(before: list, leader: int, hakem: int, expected) -> None:
    m = build_position(TWO, tricks_won=before, hakem=hakem, hands={leader: [ACE]}, leader=leader)
    assert len(m.stock) == 1
    events = play_trick(m, ACE)
    ended = of_type(events, HandEnded)
    if expected is None:
        assert not ended and m.phase is Phase.PLAY
        return
    winner, kind, points = expected
    after = tuple(t + (s == leader) for s, t in enumerate(before))
    assert ended == [HandEnded(1, winner, kind, points, after, points, hakem)]
    # The hakem stays if they won, otherwise the other player becomes hakem.
    new_hakem = hakem if winner == hakem else 1 - hakem
    (started,) = of_type(events, HandStarted)
    assert started == HandStarted(2, new_hakem, 1 - new_hakem)
    assert m.hakem == new_hakem and m.turn == new_hakem and m.phase is Phase.TRUMP
    assert [len(m.hand_of(s)) for s in range(2)] == [5, 5] and len(m.stock) == 41


def test_match_ends_at_target() -> None:
    m = build_position(TWO, tricks_won=[6, 2], hakem=0, scores=[6, 5], hands={0: [ACE]}, leader=0)
    events = play_trick(m, ACE)
    assert events[-1] == MatchEnded(0, (7, 5)) and m.is_over
    v = Variant.two(target=2)
    m = build_position(v, tricks_won=[6, 0], hakem=1, hands={0: [ACE]}, leader=0)
    assert play_trick(m, ACE)[-1] == MatchEnded(0, (3, 0))
