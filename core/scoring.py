"""When a hand ends, what it scores, who is hakem next, and who wins the match.

Each rule of RULES.md's scoring sections is one small function here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .events import HandKind
from .variant import HakemRule, Kind, Variant

__all__ = [
    "TRICKS_TO_WIN",
    "HandResult",
    "bidding_points",
    "four_player_result",
    "hand_result",
    "match_winner",
    "next_hakem",
    "three_player_result",
]

#: A hand of 2- or 4-player Hokm is won by the first side to take 7 tricks.
TRICKS_TO_WIN = 7
KOT_POINTS = 2
HAKEM_KOT_POINTS = 3
BAGS_PER_PENALTY = 10
BAG_PENALTY = 100
_BIDDING = Kind.BIDDING  # a global: an Enum class's attributes are slow to look up


@dataclass(frozen=True, slots=True)
class HandResult:
    winner: int | None  # the winning side (None in the bidding variant)
    kind: HandKind
    points: tuple[int, ...]  # per side
    bags: tuple[int, ...] | None = None  # bidding variant: bags carried per seat


class HandInPlay(Protocol):
    """What scoring reads of a hand in progress (a :class:`core.Match` is one)."""

    variant: Variant
    hakem: int | None
    tricks: list
    tricks_won: list[int]
    bids: list
    blind: list
    bags: list[int]


def hand_result(match: HandInPlay) -> HandResult | None:
    """The result of the hand in progress, or None while it goes on."""
    v = match.variant
    if v.kind is _BIDDING:
        if len(match.tricks) < 13:
            return None
        points, bags = bidding_points(match.bids, match.blind, match.tricks_won, match.bags)
        best = max(range(2), key=lambda s: points[s]) if points[0] != points[1] else None
        return HandResult(best, HandKind.NORMAL, points, bags)
    if v.players == 3:
        return three_player_result(match.tricks_won, match.hakem, v.tricks_per_hand)
    won = match.tricks_won
    if v.players == 4:
        return four_player_result(won[0] + won[2], won[1] + won[3], match.hakem)  # type: ignore[arg-type]
    side_tricks = [0] * v.sides
    for seat, t in enumerate(won):
        side_tricks[v.side_of(seat)] += t
    for side, t in enumerate(side_tricks):
        if t >= TRICKS_TO_WIN:
            hakem_side = v.side_of(match.hakem)  # type: ignore[arg-type]
            return _sided_result(v.sides, side, hakem_side, lost_all=sum(side_tricks) == t)
    return None


def four_player_result(side0: int, side1: int, hakem: int) -> HandResult | None:
    """Four players, from the tricks of each side (seats 0 and 2, seats 1 and 3)."""
    if side0 >= TRICKS_TO_WIN:
        return _sided_result(2, 0, hakem & 1, lost_all=side1 == 0)
    if side1 >= TRICKS_TO_WIN:
        return _sided_result(2, 1, hakem & 1, lost_all=side0 == 0)
    return None


def _sided_result(sides: int, winner: int, hakem_side: int, lost_all: bool) -> HandResult:
    """Kot when the hakem's side wins 7-0; hakem-kot when it loses 0-7."""
    key = (sides, winner, hakem_side, lost_all)
    result = _SIDED.get(key)
    if result is None:  # a handful of possible results, each built once
        result = _SIDED[key] = _new_sided_result(*key)
    return result


_SIDED: dict[tuple[int, int, int, bool], HandResult] = {}


def _new_sided_result(sides: int, winner: int, hakem_side: int, lost_all: bool) -> HandResult:
    if lost_all and winner == hakem_side:
        kind, p = HandKind.KOT, KOT_POINTS
    elif lost_all:
        kind, p = HandKind.HAKEM_KOT, HAKEM_KOT_POINTS
    else:
        kind, p = HandKind.NORMAL, 1
    points = tuple(p if s == winner else 0 for s in range(sides))
    return HandResult(winner, kind, points)


def three_player_result(
    tricks: Sequence[int], hakem: int | None, total: int = 17
) -> HandResult | None:
    """Three players: 7-0-0 ends at once; otherwise the hand ends when the leader
    cannot be equalled or exceeded; after all tricks a tie for most goes to the third.
    """
    played = sum(tricks)
    left = total - played
    for seat, t in enumerate(tricks):
        if t == TRICKS_TO_WIN and played == TRICKS_TO_WIN:
            return _sided_result(3, seat, hakem, lost_all=True)  # type: ignore[arg-type]
    top = max(tricks)
    leaders = [s for s, t in enumerate(tricks) if t == top]
    if len(leaders) == 1:
        leader = leaders[0]
        if all(t + left < top for s, t in enumerate(tricks) if s != leader):
            return _sided_result(3, leader, hakem, lost_all=False)  # type: ignore[arg-type]
        return None
    if left == 0:
        (third,) = (s for s in range(3) if s not in leaders)
        return _sided_result(3, third, hakem, lost_all=False)  # type: ignore[arg-type]
    return None


def bidding_points(
    bids: Sequence[int | None],
    blind: Sequence[bool],
    tricks: Sequence[int],
    bags: Sequence[int],
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Seed 004's scoring: per seat points for the hand and the bags carried on."""
    points = []
    new_bags = []
    for bid, is_blind, took, carried in zip(bids, blind, tricks, bags, strict=True):
        bid = bid or 0
        if bid == 0:
            value = 200 if is_blind else 100
            p = value if took == 0 else -value
        elif took >= bid:
            extra = took - bid
            p = 10 * bid + extra
            carried += extra
        else:
            p = -10 * bid
        while carried >= BAGS_PER_PENALTY:
            carried -= BAGS_PER_PENALTY
            p -= BAG_PENALTY
        points.append(p)
        new_bags.append(carried)
    return tuple(points), tuple(new_bags)


def next_hakem(v: Variant, hakem: int, winner: int) -> int:
    """The hakem keeps the role after winning; otherwise the old hakem deals and the
    next seat (or, with the 3-player "winner" option, the hand's winner) is hakem."""
    if v.side_of(hakem) == winner:
        return hakem
    if v.players == 3 and v.hakem_rule is HakemRule.WINNER:
        return winner
    return (hakem + 1) % v.players


def match_winner(v: Variant, scores: Sequence[int]) -> int | None:
    """The side that has won the match, if any.

    Bidding variant: when both sides pass the target in one hand the higher score
    wins, and an exact tie plays on.
    """
    target = v.target
    if max(scores) < target:  # the usual case, without building a list
        return None
    over = [s for s, p in enumerate(scores) if p >= target]
    best = max(scores[s] for s in over)
    top = [s for s in over if scores[s] == best]
    return top[0] if len(top) == 1 else None
