"""Three players (RULES.md "Three players"): 51 cards and 17 each, 7-0-0, the early end
when the leader cannot be caught, ties, the next hakem (both options), card points."""

from __future__ import annotations

import itertools
import random

import pytest

from core import (
    CardsDealt,
    ChooseTrump,
    HakemDrawn,
    HakemRule,
    HandEnded,
    HandKind,
    HandStarted,
    Match,
    MatchEnded,
    Phase,
    Suit,
    TrickWon,
    TrumpChosen,
    Variant,
)
from core.scoring import HandResult, three_player_result
from tests.core.helpers import (
    build_position,
    card,
    check_first_draw,
    of_type,
    play_random_until,
    play_trick,
    ref_hand_outcome,
)

THREE = Variant.three()
ACE = card("AS")  # trump is spades in the built positions


# ------------------------------------------------------------- the deal


@pytest.mark.parametrize("seed", range(15))
def test_first_hakem_dealer_and_deal(seed: int) -> None:
    m, events = Match.new(THREE, seed=seed)
    drawn = events[0]
    assert isinstance(drawn, HakemDrawn)
    check_first_draw(THREE, drawn)
    h = drawn.hakem
    assert events[1:] == [
        HandStarted(1, h, (h - 1) % 3),
        CardsDealt(tuple(5 if s == h else 0 for s in range(3))),
    ]
    assert m.dealer == (h - 1) % 3
    assert m.phase is Phase.TRUMP and m.turn == h
    assert [len(m.view(s).hand) for s in range(3)] == [5 if s == h else 0 for s in range(3)]
    events = m.apply(h, ChooseTrump(Suit.DIAMONDS))
    assert events == [TrumpChosen(h, Suit.DIAMONDS), CardsDealt((17, 17, 17))]
    assert not m.stock and m.turn == m.leader == h
    dealt = set().union(*(m.hand_of(s) for s in range(3)))
    assert len(dealt) == 51 and card("2C") not in dealt


# ------------------------------------------------- the end of a hand (direct)


@pytest.mark.parametrize(
    ("tricks", "hakem", "expected"),
    [
        # RULES.md's examples.
        ((7, 4, 3), 0, None),
        ((7, 4, 4), 0, (0, HandKind.NORMAL, (1, 0, 0))),
        ((8, 3, 1), 0, None),
        ((8, 2, 2), 1, (0, HandKind.NORMAL, (1, 0, 0))),
        ((7, 7, 3), 0, (2, HandKind.NORMAL, (0, 0, 1))),
        ((6, 6, 5), 2, (2, HandKind.NORMAL, (0, 0, 1))),
        ((8, 8, 1), 0, (2, HandKind.NORMAL, (0, 0, 1))),
        ((7, 0, 0), 0, (0, HandKind.KOT, (2, 0, 0))),
        ((7, 0, 0), 1, (0, HandKind.HAKEM_KOT, (3, 0, 0))),
        ((0, 0, 7), 2, (2, HandKind.KOT, (0, 0, 2))),
        ((0, 7, 0), 2, (1, HandKind.HAKEM_KOT, (0, 3, 0))),
        # Other orders of the same counts.
        ((4, 7, 4), 0, (1, HandKind.NORMAL, (0, 1, 0))),
        ((3, 4, 7), 0, None),
        ((2, 8, 2), 0, (1, HandKind.NORMAL, (0, 1, 0))),
        ((3, 7, 7), 1, (0, HandKind.NORMAL, (1, 0, 0))),
        # Not 7-0-0: seven tricks, but not the first seven.
        ((7, 1, 0), 0, None),
        ((6, 0, 0), 0, None),
        # Leader cannot be equalled: 9 vs 4+4 and 3+4.
        ((9, 4, 0), 0, (0, HandKind.NORMAL, (1, 0, 0))),
        # Ties before the last trick go on.
        ((8, 8, 0), 0, None),
    ],
)
def test_three_player_result(tricks: tuple, hakem: int, expected: tuple | None) -> None:
    result = three_player_result(tricks, hakem)
    if expected is None:
        assert result is None
    else:
        assert result == HandResult(*expected)
    assert ref_hand_outcome(THREE, tricks, hakem) == expected


def test_three_player_result_agrees_with_reference_everywhere() -> None:
    for tricks in itertools.product(range(18), repeat=3):
        if sum(tricks) > 17:
            continue
        for hakem in range(3):
            got = three_player_result(tricks, hakem)
            want = ref_hand_outcome(THREE, tricks, hakem)
            assert (None if got is None else (got.winner, got.kind, got.points)) == want, tricks


# -------------------------------------------- the end of a hand, in a match


@pytest.mark.parametrize(
    ("before", "leader", "hakem", "after", "expected"),
    [
        ([6, 4, 3], 0, 0, (7, 4, 3), None),  # 7-4-3 goes on
        ([7, 4, 3], 2, 0, (7, 4, 4), (0, HandKind.NORMAL, (1, 0, 0))),  # 7-4-4 ends
        ([6, 4, 4], 0, 1, (7, 4, 4), (0, HandKind.NORMAL, (1, 0, 0))),
        ([7, 3, 1], 0, 0, (8, 3, 1), None),  # 8-3-1 goes on
        ([8, 2, 1], 2, 2, (8, 2, 2), (0, HandKind.NORMAL, (1, 0, 0))),  # 8-2-2 ends
        ([7, 7, 2], 2, 0, (7, 7, 3), (2, HandKind.NORMAL, (0, 0, 1))),  # the third wins
        ([7, 6, 3], 1, 1, (7, 7, 3), (2, HandKind.NORMAL, (0, 0, 1))),
        ([6, 6, 4], 2, 0, (6, 6, 5), (2, HandKind.NORMAL, (0, 0, 1))),
        ([6, 0, 0], 0, 0, (7, 0, 0), (0, HandKind.KOT, (2, 0, 0))),  # hakem: 2 points
        ([6, 0, 0], 0, 1, (7, 0, 0), (0, HandKind.HAKEM_KOT, (3, 0, 0))),  # not: 3
        ([0, 0, 6], 2, 1, (0, 0, 7), (2, HandKind.HAKEM_KOT, (0, 0, 3))),
        ([0, 6, 0], 1, 1, (0, 7, 0), (1, HandKind.KOT, (0, 2, 0))),
        ([6, 1, 0], 0, 0, (7, 1, 0), None),
    ],
)
def test_hand_end_in_a_match(
    before: list, leader: int, hakem: int, after: tuple, expected: tuple | None
) -> None:
    m = build_position(THREE, tricks_won=before, hakem=hakem, hands={leader: [ACE]}, leader=leader)
    events = play_trick(m, ACE)
    assert of_type(events, TrickWon)[0].tricks == after
    ended = of_type(events, HandEnded)
    if expected is None:
        assert not ended
        assert m.phase is Phase.PLAY and m.hand_no == 1 and m.turn == leader
        return
    winner, kind, points = expected
    assert ended == [HandEnded(1, winner, kind, points, after, points, hakem)]
    assert m.scores == list(points) and m.hand_no == 2


def _find_hand(seeds: range, variant: Variant, wanted) -> tuple[HandEnded, int]:
    for seed in seeds:
        m, _ = Match.new(variant, seed=seed)
        events = play_random_until(m, random.Random(seed), lambda x: x.hand_no > 6)
        for e in of_type(events, HandEnded):
            if wanted(e):
                return e, seed
    raise AssertionError("no such hand in these seeds")


def test_seeded_games_reach_a_tie_after_seventeen_tricks() -> None:
    e, _ = _find_hand(
        range(200),
        THREE,
        lambda e: sum(e.tricks) == 17 and sorted(e.tricks)[1] == sorted(e.tricks)[2],
    )
    top = max(e.tricks)
    (third,) = (s for s in range(3) if e.tricks[s] != top)
    assert e.winner == third and e.points[third] == 1


def test_seeded_games_end_early_when_the_leader_cannot_be_caught() -> None:
    e, _ = _find_hand(range(200), THREE, lambda e: sum(e.tricks) < 17 and e.kind == HandKind.NORMAL)
    left = 17 - sum(e.tricks)
    lead = e.tricks[e.winner]
    assert all(t + left < lead for s, t in enumerate(e.tricks) if s != e.winner)
    # ... and it did not end one trick earlier (the last trick decided it).
    assert e.points[e.winner] == 1


# ------------------------------------------------------------ next hakem


@pytest.mark.parametrize(
    ("rule", "hakem", "winner", "next_hakem"),
    [
        (HakemRule.NEXT_SEAT, 0, 0, 0),
        (HakemRule.NEXT_SEAT, 1, 1, 1),
        (HakemRule.NEXT_SEAT, 0, 2, 1),  # the old hakem deals, the next seat is hakem
        (HakemRule.NEXT_SEAT, 0, 1, 1),
        (HakemRule.NEXT_SEAT, 2, 1, 0),
        (HakemRule.WINNER, 0, 0, 0),
        (HakemRule.WINNER, 0, 2, 2),  # the winner of the hand becomes hakem
        (HakemRule.WINNER, 0, 1, 1),
        (HakemRule.WINNER, 2, 1, 1),
    ],
)
def test_next_hakem(rule: HakemRule, hakem: int, winner: int, next_hakem: int) -> None:
    v = Variant.three(hakem_rule=rule)
    before = [2, 2, 2]
    before[winner] = 8
    m = build_position(v, tricks_won=before, hakem=hakem, hands={winner: [ACE]}, leader=winner)
    events = play_trick(m, ACE)
    assert of_type(events, HandEnded)[0].winner == winner
    (started,) = of_type(events, HandStarted)
    assert started.hakem == next_hakem == m.hakem and m.turn == next_hakem
    assert started.dealer == (next_hakem - 1) % 3 == m.dealer
    if rule is HakemRule.NEXT_SEAT and next_hakem != hakem:
        assert m.dealer == hakem


def test_match_ends_at_target() -> None:
    m = build_position(
        THREE, tricks_won=[8, 2, 1], hakem=1, scores=[1, 6, 3], hands={1: [ACE]}, leader=1
    )
    events = play_trick(m, ACE)  # 8-3-1 goes on
    assert not of_type(events, HandEnded)
    m = build_position(
        THREE, tricks_won=[2, 8, 1], hakem=1, scores=[1, 6, 3], hands={2: [ACE]}, leader=2
    )
    events = play_trick(m, ACE)  # 2-8-2: seat 1 wins the hand and the match
    assert events[-1] == MatchEnded(1, (1, 7, 3)) and m.is_over and m.winner == 1


# ------------------------------------------------------------ card points


def test_card_points_tally() -> None:
    v = Variant.three(card_points=True)
    m = build_position(
        v,
        tricks_won=[0, 0, 0],
        hakem=0,
        trump=Suit.HEARTS,
        hands={0: [card("AS")], 1: [card("KS")], 2: [card("10S")]},
        leader=0,
    )
    m.card_points = [0, 0, 0]
    events = play_trick(m, card("AS"))
    assert of_type(events, TrickWon)[0].seat == 0
    assert m.card_points == [14 + 13 + 10, 0, 0] == list(m.view(None).card_points)


def test_card_points_over_a_match() -> None:
    """A=14, K=13, Q=12, J=11, others their number, over every won trick of the match;
    with the option off the tally stays at zero. The shown total adds 100 per point."""
    for on in (True, False):
        v = Variant.three(card_points=on, target=3)
        m, events = Match.new(v, seed=5)
        events += play_random_until(m, random.Random(5), lambda x: False)
        tally = [0, 0, 0]
        for e in of_type(events, TrickWon):
            tally[e.seat] += sum(14 if c.rank == 14 else int(c.rank) for _, c in e.plays)
        assert m.card_points == (tally if on else [0, 0, 0])
        assert sum(tally) > 0
        shown = [p + 100 * s for p, s in zip(m.card_points, m.scores, strict=True)]
        assert shown[m.winner] >= 100 * v.target
