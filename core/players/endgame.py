"""Exact endings on bitboards, two and three players.

A two-player ending with every card known is a small game: a trick is a lead and a
reply, and the hand ends when a seat has 7 tricks. :func:`ending_values` solves it
by minimax over whole tricks on two card masks, remembering each position (the two
hands, who leads, the tricks won), with cards of one suit that no card of the other
hand separates counted once. It returns the same values as searching the ending on
engine copies (:func:`.exact.exact_values`, which the tests hold it to) at a small
part of the cost, so the exact search can start with more cards in the hands.
:func:`ending_values_3p` does the same for three players (max^n: each seat plays for
its own points).
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, CardSet
from ..scoring import HAKEM_KOT_POINTS, KOT_POINTS, TRICKS_TO_WIN, three_player_result
from .runs import distinct_runs

__all__ = ["ending_values", "ending_values_3p"]

#: Each seat's utility (three players).
_Vector = tuple[float, float, float]


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


def ending_values_3p(
    hands: tuple[CardSet, CardSet, CardSet],
    me: int,
    trick: list[tuple[int, int]],
    won: tuple[int, int, int],
    trump: int,
    hakem: int,
    cards: list[int],
    total: int = 17,
) -> dict[int, float]:
    """Three players: the max^n value for seat ``me`` (its points minus half the
    others', as :func:`.search.hand_value`) of playing each of ``cards`` now, every
    seat playing for its own utility. ``trick`` is the trick in progress (its
    ``(seat, card)`` plays, ``me`` next), ``won`` the tricks each seat has taken,
    ``total`` the tricks of a hand. The same values, ties broken the same way (the
    first of the lowest distinct cards), as :func:`.exact.exact_values` on engine
    copies; positions at the start of a trick are remembered."""
    memo: dict[tuple[CardSet, CardSet, CardSet, int, tuple[int, int, int]], _Vector] = {}
    ends: dict[tuple[int, int, int], _Vector | None] = {}

    def utilities(w: tuple[int, int, int]) -> _Vector | None:
        if w in ends:
            return ends[w]
        result = three_player_result(w, hakem, total)
        u = None
        if result is not None:
            p = result.points
            s = sum(p)
            u = (p[0] - 0.5 * (s - p[0]), p[1] - 0.5 * (s - p[1]), p[2] - 0.5 * (s - p[2]))
        ends[w] = u
        return u

    def child(
        h: tuple[CardSet, CardSet, CardSet],
        leader: int,
        plays: tuple[int, ...],
        w: tuple[int, int, int],
        seat: int,
        c: int,
    ) -> _Vector:
        """The value once ``seat`` plays ``c``."""
        nh = (
            h[0] & ~(1 << c) if seat == 0 else h[0],
            h[1] & ~(1 << c) if seat == 1 else h[1],
            h[2] & ~(1 << c) if seat == 2 else h[2],
        )
        now = (*plays, c)
        if len(now) < 3:
            return node(nh, leader, now, w)
        # The trick's taker, as core.trick.winning_play (inline: the hot path).
        first = best = now[0]
        suit, at = first // 13, 0
        for i in (1, 2):
            x = now[i]
            if x // 13 == suit:
                if x > best:
                    best, at = x, i
            elif x // 13 == trump:
                best, at, suit = x, i, trump
        taker = (leader + at) % 3
        nw = (w[0] + (taker == 0), w[1] + (taker == 1), w[2] + (taker == 2))
        u = utilities(nw)
        if u is not None:
            return u
        if not nh[0] | nh[1] | nh[2]:  # every trick played without a result: cannot be
            return (0.0, 0.0, 0.0)
        return node(nh, taker, (), nw)

    def node(
        h: tuple[CardSet, CardSet, CardSet],
        leader: int,
        plays: tuple[int, ...],
        w: tuple[int, int, int],
    ) -> _Vector:
        if not plays:
            key = (h[0], h[1], h[2], leader, w)
            v = memo.get(key)
            if v is not None:
                return v
        seat = (leader + len(plays)) % 3
        hand = h[seat]
        others = h[0] | h[1] | h[2]
        others &= ~hand
        for x in plays:
            others |= 1 << x
        playable = (hand & SUIT_MASKS[plays[0] // 13]) or hand if plays else hand
        best: _Vector | None = None
        for c in distinct_runs(playable, others):
            u = child(h, leader, plays, w, seat, c)
            if best is None or u[seat] > best[seat]:
                best = u
        assert best is not None
        if not plays:
            memo[key] = best
        return best

    leader = trick[0][0] if trick else me
    plays = tuple(c for _, c in trick)
    return {c: child(hands, leader, plays, won, me, c)[me] for c in cards}
