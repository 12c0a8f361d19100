"""Weighted deals kept from one decision to the next within a hand (a particle filter).

Without it, every decision of the hard player draws fresh candidate deals and weighs
each by replaying the whole hand under a model of the others' play
(:func:`.inference.play_likelihood`): late in a hand that replay costs a model call
for every past play of every candidate. A :class:`DealPool` keeps its weighted deals
(whole 13-card hands as dealt) for the seat's next decision instead. Then each kept
deal is

* *repaired*: a card another seat has since played, but that the deal gave to a
  third seat, is swapped with a card of the player's own (hidden) hand, of the same
  suit if it can be; a card of a suit its holder has since shown void in is swapped
  with a card of a seat that may hold it. A deal that cannot be repaired is dropped;
* *reweighed* by the new plays only (``start`` of :func:`.inference.play_likelihood`):
  its weight keeps the factors of the plays judged before. A repaired deal keeps the
  old factors (an approximation: the swap may have changed them);
* dropped once its weight falls below ``floor`` times the best one.

The pool is then topped up with fresh deals (:func:`.search.view_sample`), each
weighed over the whole hand. So the inference is paid for once per deal rather than
once per decision, and deals that explain the plays well survive from one decision to
the next (a fresh draw late in a hand rarely does).

Only the seat's own view is used: the deals are its guesses, never the real cards.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from ..cards import SUIT_MASKS, Card, CardSet, cards_in
from ..match import SeatView
from .clock import Clock
from .inference import Plays
from .knowledge import Knowledge
from .rules import PlayState
from .search import view_sample

__all__ = ["DealPool", "hand_key", "repair"]


def _void_mask(voids: int) -> CardSet:
    m = 0
    for u in range(4):
        if voids >> u & 1:
            m |= SUIT_MASKS[u]
    return m


def _pick(rng, cards: CardSet) -> Card:
    cs = cards_in(cards)
    return cs[rng.randrange(len(cs))]


def repair(
    deal: list[CardSet], played_by: list[CardSet], voids: list[int], me: int, rng
) -> list[CardSet] | None:
    """``deal`` (each seat's hand as dealt) made to agree with what has been seen
    since: every card a seat played in its hand, no hidden card of a suit its holder
    is void in. A new list (``deal`` is not changed); None if it cannot be done."""
    d = list(deal)
    n = len(d)
    for s in range(n):
        if s == me:
            continue
        missing = played_by[s] & ~d[s]
        for c in cards_in(missing):
            t = next((t for t in range(n) if d[t] >> c & 1), None)
            if t is None or t == me:
                return None
            # s gives t one of its hidden cards that t may hold, of c's suit if it can.
            free = d[s] & ~played_by[s] & ~_void_mask(voids[t])
            if not free:
                return None
            same = free & SUIT_MASKS[c // 13]
            x = _pick(rng, same or free)
            d[s] = (d[s] | 1 << c) & ~(1 << x)
            d[t] = (d[t] & ~(1 << c)) | 1 << x
    for s in range(n):
        if s == me:
            continue
        for y in cards_in(d[s] & ~played_by[s] & _void_mask(voids[s])):
            # Swap y with a hidden card of another seat that may hold y's suit, of a
            # suit s may hold.
            options = [
                t
                for t in range(n)
                if t not in (s, me)
                and not voids[t] >> (y // 13) & 1
                and d[t] & ~played_by[t] & ~_void_mask(voids[s])
            ]
            if not options:
                return None
            t = options[rng.randrange(len(options))]
            z = _pick(rng, d[t] & ~played_by[t] & ~_void_mask(voids[s]))
            d[s] = (d[s] & ~(1 << y)) | 1 << z
            d[t] = (d[t] & ~(1 << z)) | 1 << y
    return d


def hand_key(view: SeatView, know: Knowledge) -> tuple:
    """What tells one seat's hand from every other: the seat, the trump, the hakem,
    the seat's cards as dealt and the match score. A pool serves one such key."""
    mine = know.hand
    for t in view.tricks:
        for s, c in t.plays:
            if s == know.seat:
                mine |= 1 << c
    for s, c in view.trick:
        if s == know.seat:
            mine |= 1 << c
    return (know.seat, view.trump, view.hakem, mine, tuple(view.scores))


class DealPool:
    """Up to ``size`` weighted deals of one seat's hand, kept between its decisions
    (4-player classic play). :meth:`update` brings them up to date with a view,
    :meth:`draw` picks one in proportion to its weight."""

    def __init__(self, size: int, floor: float = 0.01, fresh: int | None = None) -> None:
        self.size = size
        self.floor = floor
        #: Fresh deals drawn per update at most, once the pool has been filled.
        self.fresh = size // 2 if fresh is None else fresh
        self.key: tuple | None = None
        self.history: tuple[tuple[int, int], ...] = ()
        #: Each seat's hand as dealt (the cards played from it included).
        self.deals: list[list[CardSet]] = []
        self.weights: list[float] = []
        self._cum: list[float] = []
        self._played: list[CardSet] = []
        #: Counters for tests and measurements: deals kept, repaired, dropped, drawn.
        self.kept = self.repaired = self.dropped = self.drawn = 0

    def __len__(self) -> int:
        return len(self.deals)

    def update(
        self,
        view: SeatView,
        know: Knowledge,
        rng,
        surprise: tuple[float, ...],
        policy: Callable[[PlayState], Card],
        clock: Clock | None = None,
        refill_share: float = 0.4,
        key: tuple | None = None,
        trump_prior: float = 0.0,
    ) -> None:
        """Bring the deals up to ``view``: repair and reweigh the kept ones, drop the
        unlikely, top up with fresh ones (while the clock has spent less than
        ``refill_share`` of its budget, and at least one deal is kept). ``key`` is
        the view's :func:`hand_key`, when the caller chose the pool by it;
        ``trump_prior`` is passed to :class:`.inference.Plays`, which then weighs a
        fresh deal by the hakem's trump choice."""
        plays: list[tuple[int, int]] = [p for t in view.tricks for p in t.plays]
        plays.extend(view.trick)
        me = know.seat
        played_by = [0] * len(view.hand_sizes)
        for s, c in plays:
            played_by[s] |= 1 << c
        if key is None:
            key = hand_key(view, know)
        history = tuple(plays)
        if key != self.key or history[: len(self.history)] != self.history:
            self.key = key
            self.deals, self.weights = [], []
            self.history = ()
        start = len(self.history)
        judge = Plays(view, surprise, policy, trump_prior=trump_prior)
        fresh_cap = self.size if not self.deals else self.fresh
        if start < len(history):
            deals, weights = [], []
            for deal, w in zip(self.deals, self.weights, strict=True):
                d = repair(deal, played_by, know.voids, me, rng)
                if d is None:
                    self.dropped += 1
                    continue
                if d != deal:
                    self.repaired += 1
                now = [d[s] & ~played_by[s] for s in range(len(d))]
                w *= judge.likelihood(now, start)
                deals.append(d)
                weights.append(w)
            self.deals, self.weights = deals, weights
        if self.weights:
            cut = max(self.weights) * self.floor
            kept = [(d, w) for d, w in zip(self.deals, self.weights, strict=True) if w >= cut]
            self.dropped += len(self.deals) - len(kept)
            self.deals = [d for d, _ in kept]
            self.weights = [w for _, w in kept]
        self.kept += len(self.deals)
        added = 0
        while len(self.deals) < self.size and added < fresh_cap:
            if self.deals and clock is not None and clock.elapsed() > refill_share * clock.budget:
                break
            hands = view_sample(view, know, rng, not judge.weighs_trump)
            w = judge.likelihood(hands)
            self.deals.append([hands[s] | played_by[s] for s in range(len(hands))])
            self.weights.append(w)
            added += 1
        self.history = history
        self._cum = list(accumulate(self.weights))
        self._played = played_by

    def draw(self, rng) -> int:
        """The index of a deal drawn in proportion to its weight."""
        self.drawn += 1
        total = self._cum[-1]
        i = bisect_right(self._cum, rng.random() * total)
        return min(i, len(self._cum) - 1)

    def hands(self, i: int) -> list[CardSet]:
        """Deal ``i`` as the cards each seat holds now."""
        return [h & ~p for h, p in zip(self.deals[i], self._played, strict=True)]
