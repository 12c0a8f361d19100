"""Exact two-player endings on bitboards.

A two-player ending with every card known is a small game: a trick is a lead and a
reply, and the hand ends when a seat has 7 tricks. :func:`ending_values` solves it
by minimax over whole tricks on two card masks, remembering each position (the two
hands, who leads, the tricks won), with cards of one suit that no card of the other
hand separates counted once. It returns the same values as searching the ending on
engine copies (:func:`.hard.exact_values`, which the tests hold it to) at a small
part of the cost, so the exact search can start with more cards in the hands.
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, CardSet
from ..scoring import HAKEM_KOT_POINTS, KOT_POINTS, TRICKS_TO_WIN
from .search import distinct_runs

__all__ = ["ending_values"]


def _replies(hand: CardSet, led: int, other: CardSet) -> list[int]:
    """The distinct cards ``hand`` may play to ``led``."""
    follow = hand & SUIT_MASKS[led // 13]
    return distinct_runs(follow or hand, other)


def ending_values(
    hands: tuple[CardSet, CardSet],
    me: int,
    leader: int,
    led: int | None,
    won: tuple[int, int],
    trump: int,
    hakem: int,
    cards: list[int],
) -> dict[int, float]:
    """The exact value for seat ``me`` (points it gains minus the other's) of playing
    each of ``cards`` now. ``hands`` are what each seat holds; ``leader`` led the
    trick in progress, ``led`` its card (``None``: ``me`` is to lead); ``won`` the
    tricks each seat has taken this hand."""
    memo: dict[tuple[CardSet, CardSet, int, int], float] = {}

    def result(w0: int, w1: int) -> float | None:
        # Seat 0 is ``me``; the value of a hand that is over, from its side.
        if w0 >= TRICKS_TO_WIN:
            if w1:
                return 1.0
            return float(KOT_POINTS if me == hakem else HAKEM_KOT_POINTS)
        if w1 >= TRICKS_TO_WIN:
            if w0:
                return -1.0
            return -float(HAKEM_KOT_POINTS if me == hakem else KOT_POINTS)
        return None

    def after(a: CardSet, b: CardSet, lead_me: bool, lc: int, fc: int, w0: int, w1: int) -> float:
        """Value once ``lc`` (by the leader) and ``fc`` (the reply) are played."""
        leader_wins = lc > fc if fc // 13 == lc // 13 else fc // 13 != trump
        me_wins = leader_wins == lead_me
        if me_wins:
            w0 += 1
        else:
            w1 += 1
        done = result(w0, w1)
        if done is not None:
            return done
        if not a:  # every card played without 7 tricks: cannot happen in 13 tricks
            return 0.0
        return trick(a, b, me_wins, w0)

    def trick(a: CardSet, b: CardSet, lead_me: bool, w0: int) -> float:
        """Value at the start of a trick: ``a`` is our hand, ``b`` the other's."""
        key = (a, b, lead_me, w0)
        v = memo.get(key)
        if v is not None:
            return v
        w1 = _played_tricks(a) - w0
        if lead_me:
            best = -9.0
            for lc in distinct_runs(a, b):
                worst = 9.0
                na = a & ~(1 << lc)
                for fc in _replies(b, lc, na | 1 << lc):
                    x = after(na, b & ~(1 << fc), True, lc, fc, w0, w1)
                    if x < worst:
                        worst = x
                        if worst <= best:
                            break  # no better than a lead already found
                if worst > best:
                    best = worst
        else:
            best = 9.0
            for lc in distinct_runs(b, a):
                top = -9.0
                nb = b & ~(1 << lc)
                for fc in _replies(a, lc, nb | 1 << lc):
                    x = after(a & ~(1 << fc), nb, False, lc, fc, w0, w1)
                    if x > top:
                        top = x
                        if top >= best:
                            break
                if top < best:
                    best = top
        memo[key] = best
        return best

    a, b = hands[me], hands[1 - me]
    # Tricks played by the start of a trick in which our hand holds ``x`` cards.
    total = sum(won) + a.bit_count()

    def _played_tricks(x: CardSet) -> int:
        return total - x.bit_count()

    w0, w1 = won[me], won[1 - me]
    out: dict[int, float] = {}
    for c in cards:
        na = a & ~(1 << c)
        if led is None:
            worst = 9.0
            for fc in _replies(b, c, na | 1 << c):
                worst = min(worst, after(na, b & ~(1 << fc), True, c, fc, w0, w1))
            out[c] = worst
        else:
            out[c] = after(na, b, False, led, c, w0, w1)
    return out
