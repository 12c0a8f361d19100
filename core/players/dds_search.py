"""4-player card play: sampled deals of the hidden cards, scored by double dummy.

Each sampled deal is solved by DDS (:mod:`.double_dummy`). Hokm's hand ends when a
side has 7 tricks, and with every card known a side can reach 7 tricks iff its
double-dummy trick count (all 13 tricks played) reaches 7, so the DDS trick count
of each card maps exactly onto won/lost. A 7-0 (kot) is approximated by "takes every
remaining trick". In the first tricks the solver is asked yes/no questions (reach 7?
take all? take one?), several times cheaper than counting tricks.

Sampled deals are weighted by how well the rules explain the others' past plays
(:mod:`.inference`), and kept, with their weights, from one decision of the seat to
its next within a hand (:mod:`.particles`), so the inference is paid for once per
deal rather than once per decision. :class:`DdsSearch` owns those pools.
"""

from __future__ import annotations

import time

from ..cards import Card, CardSet
from ..match import SeatView
from ..scoring import TRICKS_TO_WIN
from .clock import Clock, OutOfTime
from .double_dummy import dds_card_tricks, dds_cards_reaching
from .hard_settings import HardSettings
from .inference import Plays, unseen_by_others, weighted_deal
from .knowledge import Knowledge
from .particles import DealPool, hand_key
from .policies import policy
from .search import SearchMatch, hand_value, playout, settled
from .signals import CountModel, SequenceModel, signalling_model

__all__ = ["DdsSearch"]


def _sided_points(ours: int, theirs: int, we_are_hakem: bool) -> float:
    """Points for us minus points for them, once the hand is decided."""
    if ours >= TRICKS_TO_WIN:
        p = (2 if we_are_hakem else 3) if theirs == 0 else 1
        return float(p)
    p = (3 if we_are_hakem else 2) if ours == 0 else 1
    return -float(p)


class _Stakes:
    """What each card wins or loses on a sampled deal, from double-dummy solves: the
    points of the hand for us minus for them (kot counted), with a hundredth of a
    point per trick once trick counts are asked (``yes_no`` off)."""

    __slots__ = (
        "kot_ours",
        "kot_theirs",
        "leader",
        "left",
        "need",
        "trump",
        "we_hakem",
        "won_them",
        "won_us",
        "yes_no",
    )

    def __init__(self, view: SeatView, me: int, yes_no: bool) -> None:
        side = me % 2
        self.won_us = view.tricks_won[side] + view.tricks_won[side + 2]
        self.won_them = view.tricks_won[1 - side] + view.tricks_won[3 - side]
        self.left = 13 - len(view.tricks)
        self.need = TRICKS_TO_WIN - self.won_us
        self.we_hakem = view.hakem is not None and view.hakem % 2 == side
        self.kot_ours = 2.0 if self.we_hakem else 3.0
        self.kot_theirs = 3.0 if self.we_hakem else 2.0
        self.leader = view.trick[0][0] if view.trick else me
        self.trump = int(view.trump)  # type: ignore[arg-type]
        self.yes_no = yes_no

    def row(
        self, hands: list[CardSet], trick, cards: list[Card], clock: Clock
    ) -> dict[Card, float]:
        """Each card's value on the deal ``hands`` (:class:`OutOfTime` if a solve
        would not fit)."""
        leader, trump, left = self.leader, self.trump, self.left
        row: dict[Card, float] = {}
        if self.yes_no:
            win = dds_cards_reaching(hands, trick, leader, trump, self.need, clock)
            kot_for = 0
            if self.won_them == 0 and win:
                kot_for = (
                    win
                    if self.need >= left
                    else dds_cards_reaching(hands, trick, leader, trump, left, clock)
                )
            safe = -1
            if self.won_us == 0:
                safe = dds_cards_reaching(hands, trick, leader, trump, 1, clock)
            for c in cards:
                bit = 1 << c
                if win & bit:
                    row[c] = self.kot_ours if kot_for & bit else 1.0
                else:
                    row[c] = -1.0 if safe & bit else -self.kot_theirs
            return row
        tricks = dds_card_tricks(hands, trick, leader, trump, clock=clock)
        for c in cards:
            t = tricks.get(c, 0)
            ours = self.won_us + t
            theirs = self.won_them + left - t
            row[c] = _sided_points(ours, theirs, self.we_hakem) + 0.01 * t
        return row


class DdsSearch:
    """The 4-player card search of one player, with the deal pools of the hands it
    thinks about: one player may think for many seats (the bot's think processes
    keep one player per level for every table), so the pools are kept per hand, the
    least recently used dropped past ``pools_kept``."""

    def __init__(self, settings: HardSettings) -> None:
        self.settings = settings
        #: The pools by :func:`.particles.hand_key`, the most recently used last.
        self.pools: dict[tuple, DealPool] = {}
        #: When a list, every scored deal and its weight are appended to it (a
        #: measurement: :mod:`benchmarks.deal_accuracy`).
        self.noted: list[tuple[float, list[CardSet]]] | None = None

    def scores(
        self, view: SeatView, know: Knowledge, cards: list[Card], clock: Clock, rng
    ) -> tuple[dict[Card, float], int] | None:
        """Each card's mean points over the sampled deals (weighted), and how many
        deals were scored; None if none fit in the clock."""
        st = self.settings
        me = know.seat
        side = me % 2
        stakes = _Stakes(view, me, len(view.tricks) < st.yes_no_tricks)
        yes_no = stakes.yes_no
        surprise = tuple(
            1.0 if s == me else (st.surprise_partner if s % 2 == side else st.surprise_opponent)
            for s in range(4)
        )
        infer = bool(view.tricks or view.trick) and min(surprise) < 1.0
        model = policy(st.inference_policy)
        partner = (me + 2) % 4
        counts = int(st.signal_counts)
        apart = counts and st.surprise_count < 1.0  # the count read apart from the rest
        if st.signal_discards or (counts and not apart):
            model = signalling_model(model, partner, 0 if apart else counts, st.signal_discards)
        if apart:
            model = CountModel(model, partner, counts, st.surprise_count)
        if st.sequence_signals:
            model = SequenceModel(model, (me + 2) % 4, st.surprise_sequence)
        weight_playouts = st.playout_weight if view.trick or st.lead_playouts else 0.0
        totals = dict.fromkeys(cards, 0.0)
        rows: list[tuple[float, dict[Card, float]]] = []
        samples = 0
        weights = 0.0
        pool: DealPool | None = None
        if infer and st.reuse_deals > 0 and (view.trick or st.pool_leads):
            key = hand_key(view, know)
            pool = self.pool_for(key)
            pool.update(
                view, know, rng, surprise, model, clock, key=key, trump_prior=st.trump_prior
            )
        margin = st.settle_margin if view.trick else st.lead_settle_margin
        settle_from = st.settle_samples if len(view.tricks) >= 2 else st.settle_samples_first
        # Scores of the pool's deals solved in this decision (a deal drawn again
        # reuses them), how many were solved, and how many draws are allowed.
        solved: dict[int, dict[Card, float]] = {}
        judge: Plays | None = None
        draws_left = 8 * st.max_samples
        # A sample starts only if one more of the average so far fits; each solve in
        # it is checked again. (Drawing and weighing candidates and the playouts
        # take as long as the solves in the first tricks, and longer later.)
        per_sample = 0.0
        while (samples if pool is None else len(solved)) < st.max_samples and clock.fits(
            per_sample
        ):
            t0 = time.perf_counter()
            if pool is not None:
                if draws_left <= 0:
                    break
                draws_left -= 1
                i = pool.draw(rng)
                if i in solved:
                    self._note(1.0, pool.hands(i))
                    rows.append((1.0, solved[i]))
                    for c in cards:
                        totals[c] += solved[i][c]
                    weights += 1.0
                    samples += 1
                    continue
            # Without a pool, importance resampling: a few candidate deals, one
            # solved (candidates are cheap next to a solve in the first tricks).
            if pool is not None:
                hands = pool.hands(i)
                weight = 1.0
            else:
                least = (st.candidates_early if yes_no else st.candidates_late) if infer else 1
                if judge is None and infer:
                    judge = Plays(
                        view, surprise, model, unseen_by_others(view, know), st.trump_prior
                    )
                hands, weight = weighted_deal(
                    view, know, rng, judge, least, st.candidate_weight, st.candidates_max
                )
            row: dict[Card, float] = dict.fromkeys(cards, 0.0)
            if st.dds:
                try:  # a solve that would not fit ends the search (this sample is dropped)
                    row = stakes.row(hands, view.trick, cards, clock)
                except OutOfTime:
                    break
            if weight_playouts:
                base = SearchMatch.from_view(view, hands)
                before = list(base.scores)
                playing = policy(st.playout_policy)
                for c in cards:
                    m = base.copy()
                    m.play(me, c)
                    playout(m, know.voids, playing)
                    row[c] += weight_playouts * hand_value(m, me, before)
            for c in cards:
                totals[c] += weight * row[c]
            rows.append((weight, row))
            weights += weight
            samples += 1
            self._note(weight, hands)
            if pool is not None:
                solved[i] = row
            n_solved = len(solved) if pool is not None else samples
            per_sample += (time.perf_counter() - t0 - per_sample) / n_solved
            if samples >= settle_from and samples % 8 == 0 and settled(rows, totals, margin):
                break
        if not samples or weights <= 0:
            return None
        return ({c: t / weights for c, t in totals.items()}, samples)

    def pool_for(self, key: tuple) -> DealPool:
        """The deal pool of the hand ``key`` (:func:`.particles.hand_key`), now the
        most recently used."""
        st = self.settings
        pools = self.pools
        pool = pools.pop(key, None)
        if pool is None or pool.size != st.reuse_deals:
            fresh = max(1, round(st.reuse_fresh * st.reuse_deals))
            pool = DealPool(st.reuse_deals, st.reuse_floor, fresh)
        pools[key] = pool  # the most recently used last
        while len(pools) > st.pools_kept:
            del pools[next(iter(pools))]
        return pool

    def _note(self, weight: float, hands: list[CardSet]) -> None:
        if self.noted is not None:
            self.noted.append((weight, hands))
