"""2- and 3-player card play: sampled deals played out by the rules, and searched
exactly once few cards are left.

Each sampled deal is played out on an engine copy (``Match.from_view`` then
``Match.play``) after each candidate card, the seats following the rules; once every
hand holds at most ``exact_cards_2p`` / ``exact_cards_3p`` cards the whole ending is
searched instead (:mod:`.exact`; on bitboards, :mod:`.endgame`: two players minimax,
three players max^n). With 2 players the deals are weighted by the same inference as
with 4 (:mod:`.inference`).
"""

from __future__ import annotations

import time

from ..cards import Card
from ..match import SeatView
from ..variant import Kind
from .clock import Clock
from .exact import exact_ending
from .hard_settings import HardSettings
from .inference import Plays, unseen_by_others, weighted_deal
from .knowledge import Knowledge
from .rules import rule_card
from .search import SearchMatch, hand_value, playout, settled, view_sample

__all__ = ["playout_scores"]


def playout_scores(
    st: HardSettings, view: SeatView, know: Knowledge, cards: list[Card], clock: Clock, rng
) -> tuple[dict[Card, float], int] | None:
    """Each card's mean points over the sampled deals (weighted), and how many
    deals were scored; None if none fit in the clock."""
    me = know.seat
    n = view.variant.players
    exact_at = {2: st.exact_cards_2p, 3: st.exact_cards_3p}.get(n, 0)
    exact = view.variant.kind is Kind.CLASSIC and max(view.hand_sizes) <= exact_at
    totals = dict.fromkeys(cards, 0.0)
    samples = 0
    weights = 0.0
    voids = know.voids
    factor = st.surprise_2p if n == 2 else st.surprise_3p
    surprise = tuple(1.0 if s == me else factor for s in range(n))
    infer = view.variant.kind is Kind.CLASSIC and bool(view.tricks or view.trick) and factor < 1.0
    # A sample (a playout per card, or an exact search of the ending) starts only
    # if one more of the slowest so far fits.
    slowest = 0.0
    rows: list[tuple[float, dict[Card, float]]] = []
    settle = st.settle_2p if n == 2 else st.settle_3p
    judge: Plays | None = None
    while samples < st.max_samples and clock.fits(slowest):
        t0 = time.perf_counter()
        if infer:
            if judge is None:
                judge = Plays(view, surprise, rule_card, unseen_by_others(view, know))
            hands, w = weighted_deal(
                view, know, rng, judge, st.candidates_small, st.candidate_weight, st.candidates_max
            )
        else:
            hands, w = view_sample(view, know, rng), 1.0
        base = SearchMatch.from_view(view, hands)
        if exact:
            row = exact_ending(base, cards, st.bitboard_ending)
        else:
            before = list(base.scores)
            row = {}
            for c in cards:
                m = base.copy()
                m.play(me, c)
                playout(m, voids)
                row[c] = hand_value(m, me, before) + 0.01 * m.tricks_won[me]
        for c in cards:
            totals[c] += w * row[c]
        if settle:  # the rows are kept only for the early stop's test
            rows.append((w, row))
        samples += 1
        weights += w
        slowest = max(slowest, time.perf_counter() - t0)
        if settle and samples >= st.settle_samples and samples % 8 == 0 and settled(rows, totals):
            break
    if not samples or weights <= 0:
        return None
    return ({c: t / weights for c, t in totals.items()}, samples)
