"""The bid of the seed-004 bidding variant (2 players), searched: deal the unseen
cards at random, play the hand out by the rules bidding for tricks and bidding nil,
and bid what scores best on average."""

from __future__ import annotations

import time

from ..cards import Suit, mask_of
from ..match import Phase, SeatView
from ..scoring import bidding_points
from .clock import Clock
from .knowledge import Knowledge
from .rules import bid_estimate
from .search import SearchMatch, playout, sample_hands

__all__ = ["search_bid"]


def search_bid(view: SeatView, clock: Clock, rng) -> int | None:
    """The bid (0 for nil) with the best expected score over playouts; None if no
    deal fits in the clock."""
    me = view.seat
    assert me is not None
    know = Knowledge(view)
    sizes = list(view.hand_sizes)
    dist = [0] * 14  # tricks taken when playing for tricks
    nil_ok = 0
    samples = 0
    opp_bid = view.bids[1 - me]
    slowest = 0.0
    while samples < 300 and clock.fits(slowest):
        t0 = time.perf_counter()
        hands = sample_hands(rng, me, know.hand, know.unseen, sizes, know.voids)
        for nil in (False, True):
            m = SearchMatch(view.variant, None)
            m.phase = Phase.PLAY
            m.trump = Suit.SPADES
            m.turn = m.leader = view.dealer  # the second player leads
            m.first = 1 - view.dealer
            m.hands = list(hands)
            bids: list[int | None] = [None, None]
            bids[me] = 0 if nil else max(1, round(bid_estimate(mask_of(view.hand))))
            bids[1 - me] = opp_bid if opp_bid is not None else 3
            m.bids = bids
            m.blind = list(view.blind)
            m.scores = list(view.scores)
            playout(m, [0, 0])
            took = m.tricks_won[me]
            if nil:
                nil_ok += took == 0
            else:
                dist[took] += 1
        samples += 1
        slowest = max(slowest, time.perf_counter() - t0)
    if not samples:
        return None
    best_bid, best_val = 1, -1e9
    for b in range(1, 14):
        val = 0.0
        for t, k in enumerate(dist):
            if k:
                p, _ = bidding_points([b], [False], [t], [0])
                bags = max(0, t - b)
                val += k * (p[0] - 4 * bags)
        val /= samples
        if val > best_val:
            best_bid, best_val = b, val
    p_nil = nil_ok / samples
    nil_val = 100 * p_nil - 100 * (1 - p_nil)
    return 0 if nil_val > best_val else best_bid
