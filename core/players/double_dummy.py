"""Hokm positions put to the double-dummy solver: the trick count of every card, or
which cards still reach a number of tricks, for the side of the seat to play.

Used by the hard player's 4-player search, the oracle, the hand review and the
benchmarks that judge plays by double dummy (:mod:`benchmarks.dd_errors`); the solve
itself, with its clock, is :func:`.solver.solve`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..cards import CardSet
from .clock import Clock
from .solver import cost_key, dds, solve

if TYPE_CHECKING:
    from endplay import _dds

__all__ = ["dds_card_tricks", "dds_cards_reaching"]


def _dds_deal(
    hands: list[CardSet],
    trick: list[tuple[int, int]] | tuple[tuple[int, int], ...],
    leader: int,
    trump: int,
) -> _dds.deal:
    """A DDS deal: seats 0..3 in playing order map onto North, East, South, West
    (DDS plays clockwise in that order, and partners sit opposite in both); the
    current trick is DDS's ``first`` (its leader) plus the cards played so far."""
    d = dds().deal()
    d.trump = trump
    d.first = leader
    for p in range(4):
        h = hands[p]
        for s in range(4):
            d.remainCards[p][s] = (h >> (13 * s) & 0x1FFF) << 2
    for i in range(3):
        if i < len(trick):
            c = trick[i][1]
            d.currentTrickSuit[i] = c // 13
            d.currentTrickRank[i] = c % 13 + 2
        else:
            d.currentTrickSuit[i] = 0
            d.currentTrickRank[i] = 0
    return d


def dds_card_tricks(
    hands: list[CardSet],
    trick: list[tuple[int, int]] | tuple[tuple[int, int], ...],
    leader: int,
    trump: int,
    mode_optimal_one: bool = False,
    clock: Clock | None = None,
) -> dict[int, int]:
    """Double-dummy tricks (of those left, the current one included) for the side
    of the seat to play, for each card it may play: ``{card: tricks}``.

    With a ``clock``, the solve is started only if its cost (estimated from the
    solves of the same size so far, :data:`DDS_COSTS`) fits; else
    :class:`~.clock.OutOfTime` is raised."""
    d = _dds_deal(hands, trick, leader, trump)
    fut = dds().futureTricks()
    solutions = 1 if mode_optimal_one else 3
    target = -1 if mode_optimal_one else 0
    solve(d, target, solutions, fut, cost_key(hands, -1), clock)
    out: dict[int, int] = {}
    for i in range(fut.cards):
        score = fut.score[i]
        suit = fut.suit[i]
        ranks = (1 << fut.rank[i]) | fut.equals[i]
        for r in range(2, 15):
            if ranks >> r & 1:
                out[suit * 13 + r - 2] = score
    return out


def dds_cards_reaching(
    hands: list[CardSet],
    trick: list[tuple[int, int]] | tuple[tuple[int, int], ...],
    leader: int,
    trump: int,
    target: int,
    clock: Clock | None = None,
) -> CardSet:
    """The cards with which the side of the seat to play can still take ``target``
    of the remaining tricks, double dummy (a set; 0 if none can).

    Asking DDS a yes/no question is 3-5 times faster than scoring every card, which
    is what makes enough samples affordable in the first tricks.

    With a ``clock``, a solve that would not fit in its time is not started
    (:class:`~.clock.OutOfTime`), as in :func:`dds_card_tricks`.
    """
    d = _dds_deal(hands, trick, leader, trump)
    fut = dds().futureTricks()
    solve(d, target, 2, fut, cost_key(hands, target), clock)
    out = 0
    for i in range(fut.cards):
        if fut.score[i] < target:
            continue
        suit = fut.suit[i]
        ranks = (1 << fut.rank[i]) | fut.equals[i]
        out |= (ranks >> 2) << (13 * suit)
    return out
