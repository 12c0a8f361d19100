"""The DDS mapping of Hokm seats and the current trick, checked against an exact
minimax of our own on small 4-player endings (played with the engine's rules)."""

from __future__ import annotations

import random

import pytest

from core.cards import Suit, cards_in
from core.match import Match, Phase
from core.players.double_dummy import dds_card_tricks, dds_cards_reaching
from core.variant import Variant


def _ending(rng: random.Random, per_hand: int, played: int) -> Match:
    """A play-phase match with ``per_hand`` cards each before ``played`` cards of
    the current trick are played at random (legally)."""
    m = Match(Variant.four())
    cards = rng.sample(range(52), 4 * per_hand)
    m.hands = [0] * 4
    for i, c in enumerate(cards):
        m.hands[i % 4] |= 1 << c
    m.phase = Phase.PLAY
    m.trump = Suit(rng.randrange(4))
    m.hakem = 0
    leader = rng.randrange(4)
    m.turn = m.leader = leader
    for _ in range(played):
        m.play(m.turn, rng.choice(m.legal_cards(m.turn)))
    return m


def _best_side_tricks(m: Match, side: int) -> int:
    """Most tricks ``side`` can still take (every trick played out)."""
    if not any(m.hands) and not m.trick:
        return 0
    seat = m.turn
    results = []
    for c in m.legal_cards(seat):
        child = m.copy()
        before = child.tricks_won[side] + child.tricks_won[side + 2]
        child.play(seat, c)
        gained = child.tricks_won[side] + child.tricks_won[side + 2] - before
        results.append(gained + _best_side_tricks(child, side))
    return max(results) if seat % 2 == side else min(results)


def _exact_per_card(m: Match) -> dict[int, int]:
    seat = m.turn
    side = seat % 2
    out = {}
    for c in m.legal_cards(seat):
        child = m.copy()
        child.play(seat, c)
        gained = child.tricks_won[side] + child.tricks_won[side + 2]
        out[int(c)] = gained + _best_side_tricks(child, side)
    return out


@pytest.mark.parametrize("played", [0, 1, 2, 3])
def test_dds_matches_exact_solver(played: int) -> None:
    rng = random.Random(played)
    for _ in range(15):
        m = _ending(rng, 3, played)
        exact = _exact_per_card(m)
        leader = m.trick[0][0] if m.trick else m.turn
        dds = dds_card_tricks(m.hands, m.trick, leader, int(m.trump))
        assert set(dds) == set(exact), (cards_in(m.hands[m.turn]), m.trick)
        assert dds == exact


@pytest.mark.parametrize("played", [0, 1, 2, 3])
def test_yes_no_question_matches_exact_solver(played: int) -> None:
    """``dds_cards_reaching(target)`` is exactly the cards whose exact trick count
    reaches the target, for every target (0 cards when none does)."""
    rng = random.Random(100 + played)
    for _ in range(10):
        m = _ending(rng, 4, played)
        exact = _exact_per_card(m)
        leader = m.trick[0][0] if m.trick else m.turn
        for target in range(1, 5):
            got = dds_cards_reaching(m.hands, m.trick, leader, int(m.trump), target)
            assert got == sum(1 << c for c, t in exact.items() if t >= target), target
