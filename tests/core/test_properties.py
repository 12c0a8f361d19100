"""Properties over thousands of random matches, checked after every action.

Each hypothesis example plays one match of a random variant (every option: teams by
aces, the 3-player "winner" hakem rule, card points, which 2 is removed, targets) with
random legal actions, through :class:`tests.core.helpers.Sim`, which checks after
every action:

- every card of the variant's deck is in exactly one place (hands, stock, discards or
  the bidding pile, the trick on the table, the played tricks), so no card is dealt
  twice or played twice;
- the legal cards are exactly the follow-suit (and spades-broken) reference, and
  (sometimes) that an off-suit card, a spade lead, another seat's move, a card not
  held and an action of the wrong phase are refused with the match unchanged;
- each trick goes to the card the reference picks; a hand ends exactly when the
  reference rules say, with its points and kind; scores, bags, card points, the next
  hakem (or first drawer) and the match winner follow the reference;
- events carry no hidden card, and the views of the seat to move and a random seat
  or spectator show nothing they may not know;
- the match restored from ``to_json`` at a random step continues with the same
  events and ends in the same state.

A plain loop then plays 2,000 seeded 4-player matches through the hot path
(``Match.play``, which computer players search with) against the same references, to
keep the main game's coverage high at low cost.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import (
    CardPlayed,
    ChooseTrump,
    HakemDrawn,
    HakemRule,
    HandEnded,
    HandStarted,
    Match,
    MatchEnded,
    Suit,
    TrickWon,
    Variant,
    parse_card,
)
from tests.core.helpers import (
    Sim,
    ref_hand_outcome,
    ref_legal,
    ref_match_winner,
    ref_next_hakem,
    ref_trick_winner,
)

TWOS = [parse_card(t) for t in ("2S", "2H", "2D", "2C")]
SEEDS = st.integers(0, 2**32 - 1)
FORK = st.integers(0, 600)

FOUR = st.builds(Variant.four, target=st.integers(1, 7), teams_by_aces=st.booleans())
THREE = st.builds(
    Variant.three,
    target=st.integers(1, 7),
    hakem_rule=st.sampled_from(list(HakemRule)),
    card_points=st.booleans(),
    removed_two=st.sampled_from(TWOS),
)
TWO = st.builds(
    Variant.two,
    target=st.integers(1, 7),
    removed_two=st.sampled_from(TWOS),
    card_points=st.booleans(),
)
BIDDING = st.builds(Variant.bidding, target=st.sampled_from([1, 50, 120, 250, 500]))


def _settings(n: int):
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _run(variant: Variant, seed: int, moves: int, fork: int, max_hands: int | None = None):
    sim = Sim(variant, seed, random.Random(moves), fork_at=fork, max_hands=max_hands)
    m = sim.run()
    if max_hands is None:
        assert m.is_over
    return sim


@pytest.mark.slow
@_settings(350)
@given(variant=FOUR, seed=SEEDS, moves=SEEDS, fork=FORK)
def test_four_player_matches(variant: Variant, seed: int, moves: int, fork: int) -> None:
    _run(variant, seed, moves, fork)


@pytest.mark.slow
@_settings(200)
@given(variant=THREE, seed=SEEDS, moves=SEEDS, fork=FORK)
def test_three_player_matches(variant: Variant, seed: int, moves: int, fork: int) -> None:
    _run(variant, seed, moves, fork)


@_settings(220)
@given(variant=TWO, seed=SEEDS, moves=SEEDS, fork=FORK)
def test_two_player_matches(variant: Variant, seed: int, moves: int, fork: int) -> None:
    _run(variant, seed, moves, fork)


@pytest.mark.slow
@_settings(220)
@given(variant=BIDDING, seed=SEEDS, moves=SEEDS, fork=st.integers(0, 250))
def test_bidding_matches(variant: Variant, seed: int, moves: int, fork: int) -> None:
    # Random bidders may never reach 500: cap the match at a few hands.
    sim = _run(variant, seed, moves, fork, max_hands=4)
    assert sim.m.is_over or sim.hands_played == 4


def test_secure_matches_keep_the_invariants() -> None:
    """Live tables (no seed) shuffle securely; the checks hold all the same."""
    for i, variant in enumerate([Variant.four(target=2), Variant.three(target=2)]):
        sim = Sim(variant, None, random.Random(i), fork_at=10**9)
        sim.run()


# --------------------------------------------------------------- plain loop


def _plain_four_player_match(seed: int) -> int:
    """One seeded 4-player match through ``Match.play``, checked against the reference;
    returns the number of hands played."""
    v = Variant.four()
    rng = random.Random(seed)
    m, events = Match.new(v, seed=seed)
    drawn = events[0]
    assert isinstance(drawn, HakemDrawn)
    hakem = drawn.hakem
    scores = [0, 0]
    hand_no = 0
    while True:
        hand_no += 1
        assert m.hand_no == hand_no and m.hakem == hakem and m.dealer == (hakem - 1) % 4
        assert m.turn == hakem and [len(m.hand_of(s)) for s in range(4)] == [
            5 if s == hakem else 0 for s in range(4)
        ]
        trump = Suit(rng.randrange(4))
        m.apply(hakem, ChooseTrump(trump))
        hands = [set(m.hand_of(s)) for s in range(4)]
        dealt = set().union(*hands)
        assert len(dealt) == 52 and all(len(h) == 13 for h in hands)
        won = [0, 0, 0, 0]
        leader = hakem
        while True:
            plays = []
            for i in range(4):
                seat = (leader + i) % 4
                assert m.turn == seat
                legal = m.legal_cards(seat)
                assert set(legal) == ref_legal(hands[seat], plays, False, False)
                card = rng.choice(legal)
                events: list = []
                m.play(seat, card, events)  # the hot path computer players search with
                assert events[0] == CardPlayed(seat, card)
                hands[seat].remove(card)  # a card is played once, from its holder's hand
                plays.append((seat, card))
            winner = ref_trick_winner(plays, trump)
            won[winner] += 1
            assert events[1] == TrickWon(winner, tuple(plays), sum(won), tuple(won))
            outcome = ref_hand_outcome(v, won, hakem)
            if outcome is None:
                assert len(events) == 2 and m.turn == winner
                assert [set(m.hand_of(s)) for s in range(4)] == hands
                leader = winner
                continue
            side, kind, points = outcome
            scores[0] += points[0]
            scores[1] += points[1]
            assert events[2] == HandEnded(
                hand_no, side, kind, points, tuple(won), tuple(scores), hakem
            )
            champion = ref_match_winner(v, scores)
            if champion is not None:
                assert events[3:] == [MatchEnded(champion, tuple(scores))]
                assert m.is_over and m.winner == champion
                return hand_no
            hakem = ref_next_hakem(v, hakem, side)
            assert isinstance(events[3], HandStarted) and events[3].hakem == hakem
            break


@pytest.mark.slow
def test_plain_loop_of_seeded_four_player_matches() -> None:
    hands = sum(_plain_four_player_match(seed) for seed in range(2000))
    assert hands >= 2000 * 3  # 7 points at no more than 3 per hand
