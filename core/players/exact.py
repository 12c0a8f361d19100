"""Exact values of a 2- or 3-player ending with every card known: two players by
alpha-beta, three by max^n.

:func:`exact_values` searches on engine copies (slow, plainly right: the baseline the
tests hold the bitboard solvers of :mod:`.endgame` to); :func:`exact_ending` is what
the hard player calls, on bitboards where the variant allows.
"""

from __future__ import annotations

from ..cards import CARDS, Card
from ..match import Match, Phase
from ..variant import Kind
from .endgame import ending_values, ending_values_3p
from .runs import distinct_runs
from .search import hand_value

__all__ = ["exact_ending", "exact_values"]


def _distinct(m: Match, seat: int) -> list[Card]:
    """The seat's playable cards without those equivalent to a lower one kept
    (touching once played cards are ignored): playing either gives the same result."""
    others = 0
    for s, h in enumerate(m.hands):
        if s != seat:
            others |= h
    for _, c in m.trick:
        others |= 1 << c
    return [CARDS[c] for c in distinct_runs(m._playable(seat), others)]


def _negamax(m: Match, me: int, before: list[int], alpha: float, beta: float) -> float:
    """Two players: exact value for the seat to move (zero-sum)."""
    seat = m.turn
    best = -1e9
    for c in _distinct(m, seat):
        child = m.copy()
        child.play(seat, c)  # type: ignore[arg-type]
        if child.phase is not Phase.PLAY:
            val = hand_value(child, seat, before)  # type: ignore[arg-type]
        elif child.turn == seat:
            val = _negamax(child, me, before, alpha, beta)
        else:
            val = -_negamax(child, me, before, -beta, -alpha)
        if val > best:
            best = val
            if val > alpha:
                alpha = val
                if alpha >= beta:
                    break
    return best


def _maxn(m: Match, before: list[int]) -> list[float]:
    """Three players: max^n value (each seat maximises its own utility)."""
    seat = m.turn
    best: list[float] | None = None
    for c in _distinct(m, seat):
        child = m.copy()
        child.play(seat, c)  # type: ignore[arg-type]
        if child.phase is not Phase.PLAY:
            u = [hand_value(child, s, before) for s in range(m.n)]
        else:
            u = _maxn(child, before)
        if best is None or u[seat] > best[seat]:  # type: ignore[index]
            best = u
    assert best is not None
    return best


def exact_values(m: Match, cards: list[Card]) -> dict[Card, float]:
    """Exact value of each of the seat to move's ``cards`` in a perfect-information
    ending (2 players: alpha-beta; 3 players: max^n)."""
    seat = m.turn
    before = list(m.scores)
    out: dict[Card, float] = {}
    for c in cards:
        child = m.copy()
        child.play(seat, c)  # type: ignore[arg-type]
        if child.phase is not Phase.PLAY:
            out[c] = hand_value(child, seat, before)  # type: ignore[arg-type]
        elif m.n == 2:
            v = _negamax(child, seat, before, -1e9, 1e9)  # type: ignore[arg-type]
            out[c] = v if child.turn == seat else -v
        else:
            out[c] = _maxn(child, before)[seat]  # type: ignore[index]
    return out


def exact_ending(m: Match, cards: list[Card], bitboards: bool = True) -> dict[Card, float]:
    """:func:`exact_values`, on bitboards (:mod:`.endgame`: the same values at a
    fraction of the cost) unless ``bitboards`` is off."""
    if not bitboards or m.n not in (2, 3) or m.variant.kind is not Kind.CLASSIC:
        return exact_values(m, cards)
    me: int = m.turn  # type: ignore[assignment]
    trick = m.trick
    if m.n == 3:
        return ending_values_3p(  # type: ignore[return-value]
            (m.hands[0], m.hands[1], m.hands[2]),
            me,
            list(trick),
            (m.tricks_won[0], m.tricks_won[1], m.tricks_won[2]),
            int(m.trump),  # type: ignore[arg-type]
            m.hakem,  # type: ignore[arg-type]
            list(cards),
            m.variant.tricks_per_hand,
        )
    return ending_values(  # type: ignore[return-value]
        (m.hands[0], m.hands[1]),
        me,
        trick[0][0] if trick else me,
        trick[0][1] if trick else None,
        (m.tricks_won[0], m.tricks_won[1]),
        int(m.trump),  # type: ignore[arg-type]
        m.hakem,  # type: ignore[arg-type]
        list(cards),
    )
