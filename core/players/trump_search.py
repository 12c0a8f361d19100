"""The hakem's trump, searched: deal the unseen cards at random and score each suit.

4 players: can the hakem's side take 7 tricks with this trump (a yes/no double-dummy
question on a full 52-card deal)? 3 players: a rule-based playout of the hand. The
rule (:func:`.rules.choose_trump_rule`) decides unless enough deals fit in the
budget: 8 of the hakem's 13 cards are still unknown when trump is chosen, and a
handful of sampled deals is noise next to it.
"""

from __future__ import annotations

import math
import time

from ..cards import CardSet, Suit, mask_of
from ..match import SeatView
from ..scoring import TRICKS_TO_WIN
from .clock import Clock, OutOfTime
from .double_dummy import dds_cards_reaching
from .hard_settings import HardSettings
from .knowledge import Knowledge
from .rules import choose_trump_rule
from .search import hand_from, hand_value, playout, sample_hands

__all__ = ["search_trump"]


def search_trump(st: HardSettings, view: SeatView, clock: Clock, rng) -> Suit:
    """The suit with the best mean over the sampled deals, the rule's unless at least
    ``min_trump_samples`` deals fit in the clock (3 or 4 players)."""
    n = view.variant.players
    me = view.seat
    assert me is not None
    hand = mask_of(view.hand)
    deck = Knowledge(view).deck
    unseen = deck & ~hand
    size = view.variant.hand_size
    sizes = [size] * n
    sizes[me] = size - len(view.hand)
    voids = [0] * n
    totals = [0.0] * 4
    samples = 0
    avg = 0.0
    slowest = 0.0  # 3 players: the slowest playout so far
    while samples < 200 and clock.fits(avg):
        t0 = time.perf_counter()
        # Deal the rest: our own missing cards too (seat "me" gets a share).
        others = sample_hands(rng, -1, 0, unseen, sizes, voids)
        others[me] |= hand
        values = []
        try:  # a step that would not fit drops this sample (the first too: the rule decides)
            for s in range(4):
                if n != 4:
                    clock.check(slowest)
                t1 = time.perf_counter()
                values.append(_trump_value(view, others, s, clock))
                slowest = max(slowest, time.perf_counter() - t1)
        except OutOfTime:
            break
        for s in range(4):
            totals[s] += values[s]
        samples += 1
        now = time.perf_counter()
        avg += (now - t0 - avg) / samples
        if samples >= 2 and now + avg * (st.min_trump_samples - samples) > clock.deadline:
            # Too few deals would fit: the rule decides, so stop spending time.
            # (Full 52-card solves at the trump choice are the slowest of the
            # hand, 10 ms to over a second each.)
            break
    rule = choose_trump_rule(hand)
    if samples < st.min_trump_samples:
        return rule
    means = [t / samples for t in totals]
    means[rule] += st.prior / math.sqrt(samples)
    best = max(means)
    if means[rule] >= best - 1e-9:
        return rule
    return Suit(means.index(best))


def _trump_value(view: SeatView, hands: list[CardSet], trump: int, clock: Clock | None) -> float:
    me = view.seat
    assert me is not None
    if view.variant.players == 4:
        # Can the hakem's side take 7 with this trump? (yes/no is several times
        # faster than counting tricks, so more deals fit in the budget)
        win = dds_cards_reaching(hands, (), me, trump, TRICKS_TO_WIN, clock)
        return 1.0 if win else -1.0
    m = hand_from(view, hands, trump, me)
    before = list(m.scores)
    playout(m, [0] * m.n)
    return hand_value(m, me, before)
