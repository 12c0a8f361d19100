"""Level "hard": determinized search (perfect-information Monte Carlo).

For each decision the player samples deals of the hidden cards that agree with
everything its seat has seen (:func:`.search.view_sample`), scores every legal card on
each sample and plays the best on average. Sampling stops when the per-move time
budget is spent (anytime), and never uses anything but the seat's own view.

* 4 players: each sample is solved double dummy by DDS (endplay, through
  :mod:`.double_dummy`). Hokm's hand ends when a side has 7 tricks, and with every
  card known a side can reach 7 tricks iff its double-dummy trick count (all 13
  tricks played) reaches 7, so the DDS trick count of each card maps exactly onto
  won/lost. A 7-0 (kot) is approximated by "takes every remaining trick". A blend
  with rule-based playouts of each sampled deal (``playout_weight``) is kept as a
  setting: it helped against the old rule player and not against today's levels
  (core/players/RESULTS.md). Sampled deals are weighted by how well the rules
  explain the others' past plays (:mod:`.inference`), and kept, with their weights,
  from one decision of the seat to its next within a hand (:mod:`.particles`), so
  the inference is paid for once per deal rather than once per decision.
* 2 and 3 players: rule-based playouts on engine copies (``Match.from_view`` then
  ``Match.play``) of deals weighted by the same inference (by default with 2
  players only), and an exact search of the whole ending once few cards are left
  (:mod:`.exact`; on bitboards, :mod:`.endgame`: two players minimax, three players
  max^n).
* Trump choice: 4 players by DDS on sampled completions of the deal; 3 players by
  playouts; 2 players by the rules. Bids (seed 004) from playouts. 2-player
  discards and draws use the rules (searching them, :mod:`.drawing`, measured no
  better: RESULTS.md).

Time: every decision has a :class:`~.clock.Clock`. Each step that cannot be cut
short (a solve, a playout sample, an exact ending) starts only if its cost, learnt
from the steps before it, fits; a solve runs in :mod:`.solver`'s thread and is left
to finish there if it overruns. Measured under load in RESULTS.md ("The clock").

Thread safety: all state is per instance; DDS calls are serialised through the one
solver thread (DDS keeps per-thread-index scratch memory, and endplay calls it with
index 0).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from ..cards import Card, CardSet, Suit, mask_of
from ..match import Phase, SeatView
from ..scoring import TRICKS_TO_WIN, bidding_points
from ..variant import Kind
from .clock import Clock, OutOfTime
from .double_dummy import dds_card_tricks, dds_cards_reaching
from .drawing import DrawSearch
from .exact import exact_ending
from .inference import Plays
from .knowledge import Knowledge
from .normal import NormalPlayer
from .particles import DealPool, hand_key
from .rules import PlayState, RulePlayer, choose_trump_rule, rule_card, state_from_view
from .search import (
    SearchMatch,
    distinct_cards,
    hand_from,
    hand_value,
    playout,
    sample_hands,
    settled,
    view_sample,
)
from .solver import dds

#: normal's corrected following rules, without its look-ahead: a playout policy.
_CORRECTED = NormalPlayer(seed=0)
_CORRECTED.samples = 0


def _policy(corrected: int) -> Callable[[PlayState], Card]:
    """A model of play for the settings that choose one: 0 the rules, 1 the corrected
    rules."""
    return _CORRECTED.card if corrected else rule_card


__all__ = ["HardPlayer"]


def _hidden(view: SeatView, know: Knowledge) -> CardSet:
    """Cards no seat of the sample holds that every other seat has never seen. 2
    players: the opponent saw the stock go by but not our discards, so they are
    unseen to it all hand long, as our hand is (the others' discards it knows:
    leaving them out matched its real choices on 37 of 40 positions, counting them
    as unseen on 25)."""
    return mask_of(view.discards) & ~know.played


def _sided_points(ours: int, theirs: int, we_are_hakem: bool) -> float:
    """Points for us minus points for them, once the hand is decided."""
    if ours >= TRICKS_TO_WIN:
        p = (2 if we_are_hakem else 3) if theirs == 0 else 1
        return float(p)
    p = (3 if we_are_hakem else 2) if ours == 0 else 1
    return -float(p)


# ----------------------------------------------------------------- player


class HardPlayer(RulePlayer):
    """Level "hard": determinized sampling with DDS (4 players) or playouts and
    exact endings (2 and 3 players)."""

    name = "hard"
    #: Exact search once every hand holds at most this many cards (2 / 3 players).
    #: 2 players at 7 rather than 5 (with inference, below): +4.0 points (SE 1.8) on
    #: 100 fresh deals (RESULTS.md, "Issue 25, third session"); at 9 since the
    #: bitboard solver made a solve about eight times cheaper (a 9-card ending costs
    #: what a 7-card one did): +1.9 (SE 1.1) over 300 tuning deals against the old
    #: solver at 7, and +2.5 (SE 1.3) for bitboards at 7 on 100 of them: the gain is
    #: the cheaper solve, 9 cards no worse than 7 (RESULTS.md, "fifth session").
    exact_cards_2p = 9
    exact_cards_3p = 3
    #: Solve the exact ending on bitboards (:mod:`.endgame`; off: on engine copies, the
    #: same values at about 8 (2 players) to 20 (3 players) times the cost: a baseline
    #: to measure).
    bitboard_ending = True
    max_samples = 400
    #: Weight of the rule-based card's prior (points, divided by sqrt(samples)).
    prior = 0.5
    #: ... for 4-player card play. Off: every pull toward the rules measured worse
    #: there (RESULTS.md, "Exploration"); the rule card still wins ties.
    prior_dds = 0.0
    #: 4 players: before this many tricks are complete, score cards with yes/no
    #: double-dummy questions (reach 7? take all? take one?) instead of trick counts.
    yes_no_tricks = 5
    #: Inference (:mod:`.inference`): a sampled deal's weight is multiplied by this
    #: for every past play an opponent / the partner would not have made by the rules.
    surprise_opponent = 0.1
    surprise_partner = 0.6
    #: Candidate deals drawn per solved one while yes/no questions are used (a solve
    #: then costs 10-20 candidates' drawing and weighing).
    candidates_early = 6
    candidates_late = 2
    candidates_max = 8
    #: ... and more, up to ``candidates_max``, while their weights add up to less.
    candidate_weight = 1.0
    #: 4 players: add this times the result of a rule-based playout of the sampled
    #: deal to each card's double-dummy score (0: double dummy only). Double dummy
    #: credits every seat with seeing all cards; a playout of the rules models how
    #: the rule-based levels go on. Weight 2 won against ``normal0`` (+3.1, SE 1.5),
    #: but weight 0 won against the yardstick (+3.2, SE 1.0, 732 fresh pairs) and
    #: matched it against today's normal (+0.9, SE 1.1, 835 load-matched fresh
    #: pairs), at a little less CPU: RESULTS.md, "Issue 25, eighth session".
    playout_weight = 0.0
    #: ... on leads too, when ``playout_weight`` is set (off: leads are scored by
    #: double dummy alone, the other cards with the blend; a measurement:
    #: benchmarks/dd_errors.py put most of the playouts' cost on leads).
    lead_playouts = True
    #: Who plays the seats in those playouts: 0 the rules (``normal0``), 1 the
    #: rules with normal's corrections to following (no look-ahead).
    playout_policy = 0
    #: The policy of the card that wins ties and decides when no sample fits (0 the
    #: rules, 1 the corrected rules).
    rule_policy = 0
    #: The model of the others' play in inference (:func:`.inference.play_likelihood`):
    #: 0 the rules, 1 the corrected rules.
    inference_policy = 0
    #: 2 and 3 players: inference for the playouts' deals, the factor for every past
    #: play of another seat that the rules would not have made (1.0: off, uniform
    #: deals by the voids), and the candidate deals drawn per sample. 2 players: on
    #: (with ``exact_cards_2p=7``, +3.3 points, SE 1.5, on 150 fresh deals); 3
    #: players: off, +0.8 (SE 2.7) on 40 fresh deals (RESULTS.md, "Issue 25, third
    #: session"; the runs there name both ``surprise_small``).
    surprise_2p = 0.1
    surprise_3p = 1.0
    candidates_small = 4
    #: 4 players: keep this many weighted deals from one decision to the next within
    #: a hand (:mod:`.particles`; 0: fresh candidate deals every decision). The
    #: solved deals are then drawn from the pool in proportion to their weights, and
    #: a deal drawn again reuses its scores; ``max_samples`` counts distinct deals.
    #: On since the ninth session: with double dummy alone it played even with fresh
    #: deals (−0.1, SE 1.0, over 608 fresh pairs against the yardstick; −0.4, SE 1.1, over 503
    #: against normal) at half the CPU per decision (69 against 142 ms). With the rule
    #: playouts it had cost 3.3 points (SE 1.3): RESULTS.md, "Issue 25, ninth session".
    reuse_deals = 128
    #: ... dropping kept deals whose weight falls below this times the best one.
    reuse_floor = 0.01
    #: ... and drawing at most this share of the pool's size afresh per decision
    #: (0.125 since the twelfth session, with ``settle_margin``, below; 0.5 before).
    reuse_fresh = 0.125
    #: ... keeping the pools of this many hands (seats of tables) at most: a bot's
    #: think process serves every computer seat, three a solo table (at 64, 40 solo
    #: tables' 120 seats wiped each other's pools: benchmarks.solo_capacity). A full
    #: pool of 128 deals is about 36 KiB, so 256 pools are about 9 MiB a process.
    pools_kept = 256
    #: 4 players: score cards by double dummy at all (off: the playouts alone, as
    #: normal does, with inference and as many samples as the budget allows).
    dds = True
    #: Stop sampling early (at least this many samples) once the choice is settled.
    settle_samples = 24
    #: 4 players: ... or once no other card could be better by this many points
    #: (its edge over the leader, two standard errors up; 0: only a clear leader
    #: settles it). Cards that differ on one deal in thirty keep the search going to
    #: the end of its budget otherwise. At 0.05, with ``reuse_fresh`` 0.125, at
    #: 0.125 s, against the settings before (0, 0.5, at 0.25 s), over 1,000 fresh
    #: pairs each: +0.1 points (SE 0.8) against normal, −0.5 (SE 0.8) against the
    #: yardstick, at 28% of the CPU the issue started from (RESULTS.md, "Issue 25,
    #: eleventh session" and "twelfth session"). The default since.
    settle_margin = 0.05
    #: 2 / 3 players: stop sampling early once the choice is settled, as with 4.
    settle_2p = False
    settle_3p = False
    #: Fewer sampled deals than this for the trump choice: choose by the rules.
    min_trump_samples = 12
    #: 4 players: search the trump choice at all (off: the rules name it at once; a
    #: sampled choice scored no better than the rule's, RESULTS.md). Off since the
    #: twelfth session: on 60 hakems' choices (``benchmarks.trump_search``) it never
    #: reached ``min_trump_samples`` at 0.125 or 0.25 s, so the rule named every
    #: trump after 83 (166) ms of CPU spent for nothing; at 1 s 7 of 60 reached it
    #: and 2 chose another suit than the rule.
    search_trump_4p = False
    #: Search the opening lead too (yes/no solver questions on 52-card deals, a few
    #: ms each, rarely over 0.1 s), as every later card is.
    search_opening_lead = True
    #: 4 players: search the cards of the first trick only when the decision's budget
    #: is at least this many seconds (0: always; else the rules play them). On 52-card
    #: deals a decision affords about five solves at 0.125 s, and the first trick is
    #: a fifth of a hand's CPU. At 0.125 s the rules' first trick played even with
    #: the searched one over 1,000 fresh pairs against normal (+0.1 points, SE 0.9)
    #: and the yardstick (−0.3, SE 0.8), at 20% of the CPU the issue started from
    #: instead of 26%, but against the settings before (0.25 s) it lost 0.9 (SE 0.8)
    #: and 3.2 (SE 1.3, 437 pairs): not the default (RESULTS.md, "Issue 25, twelfth
    #: session").
    first_trick_budget = 0.0
    #: 4 players: search the leads after the opening one (off: the rules lead; a
    #: measurement of the leads, where most of hard's decisive errors are made:
    #: benchmarks/dd_errors.py).
    search_leads = True
    #: 2 players: search the hakem's trump, the discards and every keep-or-take
    #: draw by finishing the deal and playing it out by the rules on sampled hidden
    #: cards (:mod:`.drawing`) instead of deciding them by the rules' card values.
    search_trump_2p = False
    search_discards_2p = False
    search_draw_2p = False
    #: ... at most this many sampled deals per decision (fewer once settled).
    deal_samples = 400

    def __init__(self, seed: int | None = None, time_budget: float = 1.0) -> None:
        super().__init__(seed)
        self.time_budget = time_budget
        self._pools: dict[tuple, DealPool] = {}
        dds()

    def act(self, view: SeatView):
        # The budget counts from the moment the decision is asked for.
        self._clock = Clock(self.time_budget)
        return super().act(view)

    def _clock_now(self) -> Clock:
        """The running decision's clock (a fresh one when a decision method is
        called directly rather than through :meth:`act`)."""
        clock = getattr(self, "_clock", None)
        if clock is None or clock.elapsed() > 2 * self.time_budget + 1.0:
            clock = self._clock = Clock(self.time_budget)
        return clock

    # -------------------------------------------------------------- play

    def choose_card(self, view: SeatView) -> Card:
        legal = [a.card for a in view.legal]  # type: ignore[union-attr]
        know = Knowledge(view)
        if len(legal) == 1:
            return legal[0]
        distinct = distinct_cards(legal, know)
        if len(distinct) == 1:
            return distinct[0]
        rule = _policy(self.rule_policy)(state_from_view(view, know))
        if rule not in distinct:
            distinct.append(rule)
        clock = self._clock_now()
        prior = self.prior
        if view.variant.players == 4 and view.variant.kind is Kind.CLASSIC:
            if not view.tricks and not view.trick and not self.search_opening_lead:
                return rule
            if not view.tricks and self.time_budget < self.first_trick_budget:
                return rule
            if view.tricks and not view.trick and not self.search_leads:
                return rule
            totals = self._score_dds(view, know, distinct, clock)
            prior = self.prior_dds
        else:
            totals = self._score_playouts(view, know, distinct, clock)
        if totals is None:
            return rule
        means, samples = totals
        # A prior toward the rule-based card, fading as samples accumulate: with
        # few samples the averages are noisy.
        if rule in means:
            means[rule] += prior / math.sqrt(samples)
        best = max(means.values())
        good = [c for c in distinct if means[c] >= best - 1e-9]
        if rule in good:
            return rule
        return min(good, key=lambda c: (c % 13, c))

    def _score_dds(
        self, view: SeatView, know: Knowledge, cards: list[Card], clock: Clock
    ) -> tuple[dict[Card, float], int] | None:
        me = know.seat
        side = me % 2
        won_us = view.tricks_won[side] + view.tricks_won[side + 2]
        won_them = view.tricks_won[1 - side] + view.tricks_won[3 - side]
        left = 13 - len(view.tricks)
        need = TRICKS_TO_WIN - won_us
        we_hakem = view.hakem is not None and view.hakem % 2 == side
        kot_ours = 2.0 if we_hakem else 3.0
        kot_theirs = 3.0 if we_hakem else 2.0
        leader = view.trick[0][0] if view.trick else me
        trump = int(view.trump)  # type: ignore[arg-type]
        yes_no = len(view.tricks) < self.yes_no_tricks
        surprise = tuple(
            1.0 if s == me else (self.surprise_partner if s % 2 == side else self.surprise_opponent)
            for s in range(4)
        )
        infer = bool(view.tricks or view.trick) and min(surprise) < 1.0
        model = _policy(self.inference_policy)
        weight_playouts = self.playout_weight if view.trick or self.lead_playouts else 0.0
        totals = dict.fromkeys(cards, 0.0)
        rows: list[tuple[float, dict[Card, float]]] = []
        samples = 0
        weights = 0.0
        pool: DealPool | None = None
        if infer and self.reuse_deals > 0:
            key = hand_key(view, know)
            pool = self._pool_for(key)
            pool.update(view, know, self.rng, surprise, model, clock, key=key)
        # Scores of the pool's deals solved in this decision (a deal drawn again
        # reuses them), how many were solved, and how many draws are allowed.
        solved: dict[int, dict[Card, float]] = {}
        judge: Plays | None = None
        draws_left = 8 * self.max_samples
        # A sample starts only if one more of the average so far fits; each solve in
        # it is checked again. (Drawing and weighing candidates and the playouts
        # take as long as the solves in the first tricks, and longer later.)
        per_sample = 0.0
        while (samples if pool is None else len(solved)) < self.max_samples and clock.fits(
            per_sample
        ):
            t0 = time.perf_counter()
            if pool is not None:
                if draws_left <= 0:
                    break
                draws_left -= 1
                i = pool.draw(self.rng)
                if i in solved:
                    self._note(1.0, pool.hands(i))
                    rows.append((1.0, solved[i]))
                    for c in cards:
                        totals[c] += solved[i][c]
                    weights += 1.0
                    samples += 1
                    continue
            # Importance resampling: draw a few candidate deals, weigh each by how
            # well it explains the plays seen, solve one chosen in proportion to its
            # weight. Candidates are cheap next to a solve in the first tricks.
            # At least a few candidates, more while their weights add up to less
            # than one full-weight deal (late in a hand most random deals explain
            # the plays badly). The count depends on weights, not on measured
            # times, so that a decision with a sample cap is reproducible.
            if pool is not None:
                hands = pool.hands(i)
                weight = 1.0
            else:
                least = (self.candidates_early if yes_no else self.candidates_late) if infer else 1
                if judge is None and infer:
                    judge = Plays(view, surprise, model, _hidden(view, know))
                hands, weight = self._weighted_deal(view, know, judge, least)
            row: dict[Card, float] = dict.fromkeys(cards, 0.0)
            if self.dds:
                try:  # a solve that would not fit ends the search (this sample is dropped)
                    if yes_no:
                        win = dds_cards_reaching(hands, view.trick, leader, trump, need, clock)
                        kot_for = 0
                        if won_them == 0 and win:
                            kot_for = (
                                win
                                if need >= left
                                else dds_cards_reaching(
                                    hands, view.trick, leader, trump, left, clock
                                )
                            )
                        safe = -1
                        if won_us == 0:
                            safe = dds_cards_reaching(hands, view.trick, leader, trump, 1, clock)
                    else:
                        tricks = dds_card_tricks(hands, view.trick, leader, trump, clock=clock)
                except OutOfTime:
                    break
                if yes_no:
                    for c in cards:
                        bit = 1 << c
                        if win & bit:
                            v = kot_ours if kot_for & bit else 1.0
                        else:
                            v = -1.0 if safe & bit else -kot_theirs
                        row[c] = v
                else:
                    for c in cards:
                        t = tricks.get(c, 0)
                        ours = won_us + t
                        theirs = won_them + left - t
                        row[c] = _sided_points(ours, theirs, we_hakem) + 0.01 * t
            if weight_playouts:
                base = SearchMatch.from_view(view, hands)
                before = list(base.scores)
                policy = _policy(self.playout_policy)
                for c in cards:
                    m = base.copy()
                    m.play(me, c)
                    playout(m, know.voids, policy)
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
            if (
                samples >= self.settle_samples
                and samples % 8 == 0
                and settled(rows, totals, self.settle_margin)
            ):
                break
        if not samples or weights <= 0:
            return None
        return ({c: t / weights for c, t in totals.items()}, samples)

    def _pool_for(self, key: tuple) -> DealPool:
        """The deal pool of the hand ``key`` (:func:`.particles.hand_key`), the most
        recently used last in ``_pools``. One player may think for many seats:
        the bot's worker processes keep one player per level for every table, so the
        pools are kept per hand, the least recently used dropped past ``pools_kept``."""
        pools = self._pools
        pool = pools.pop(key, None)
        if pool is None or pool.size != self.reuse_deals:
            fresh = max(1, round(self.reuse_fresh * self.reuse_deals))
            pool = DealPool(self.reuse_deals, self.reuse_floor, fresh)
        pools[key] = pool  # the most recently used last
        while len(pools) > self.pools_kept:
            del pools[next(iter(pools))]
        return pool

    def _weighted_deal(
        self, view: SeatView, know: Knowledge, judge: Plays | None, least: int
    ) -> tuple[list[CardSet], float]:
        """Importance resampling: draw a few candidate deals, weigh each by how well
        it explains the plays seen, keep one chosen in proportion to its weight; the
        kept deal's weight is the candidates' mean. At least ``least`` candidates,
        more while their weights add up to less than one full-weight deal (late in a
        hand most random deals explain the plays badly). The count depends on
        weights, not on measured times, so that a decision with a sample cap is
        reproducible. ``judge`` weighs them (None: no inference, weight 1)."""
        cands: list[tuple[list[CardSet], float]] = []
        total_w = 0.0
        while len(cands) < least or (
            total_w < self.candidate_weight and len(cands) < self.candidates_max
        ):
            hands = view_sample(view, know, self.rng)
            w = judge.likelihood(hands) if judge is not None else 1.0
            cands.append((hands, w))
            total_w += w
        r = self.rng.random() * total_w
        hands = cands[-1][0]
        for h, w in cands:
            if r < w:
                hands = h
                break
            r -= w
        return hands, total_w / len(cands)

    def _note(self, weight: float, hands: list[CardSet]) -> None:
        """Keep a solved deal and its weight for measurements (``self.noted``, when a
        list: :mod:`benchmarks.deal_accuracy`)."""
        noted = getattr(self, "noted", None)
        if noted is not None:
            noted.append((weight, hands))

    def _score_playouts(
        self, view: SeatView, know: Knowledge, cards: list[Card], clock: Clock
    ) -> tuple[dict[Card, float], int] | None:
        me = know.seat
        n = view.variant.players
        exact_at = {2: self.exact_cards_2p, 3: self.exact_cards_3p}.get(n, 0)
        exact = view.variant.kind is Kind.CLASSIC and max(view.hand_sizes) <= exact_at
        totals = dict.fromkeys(cards, 0.0)
        samples = 0
        weights = 0.0
        voids = know.voids
        factor = self.surprise_2p if n == 2 else self.surprise_3p
        surprise = tuple(1.0 if s == me else factor for s in range(n))
        infer = (
            view.variant.kind is Kind.CLASSIC and bool(view.tricks or view.trick) and factor < 1.0
        )
        # A sample (a playout per card, or an exact search of the ending) starts only
        # if one more of the slowest so far fits.
        slowest = 0.0
        rows: list[tuple[float, dict[Card, float]]] = []
        settle = self.settle_2p if n == 2 else self.settle_3p
        judge: Plays | None = None
        while samples < self.max_samples and clock.fits(slowest):
            t0 = time.perf_counter()
            if infer:
                if judge is None:
                    judge = Plays(view, surprise, rule_card, _hidden(view, know))
                hands, w = self._weighted_deal(view, know, judge, self.candidates_small)
            else:
                hands, w = view_sample(view, know, self.rng), 1.0
            base = SearchMatch.from_view(view, hands)
            if exact:
                row = exact_ending(base, cards, self.bitboard_ending)
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
            if (
                settle
                and samples >= self.settle_samples
                and samples % 8 == 0
                and settled(rows, totals)
            ):
                break
        if not samples or weights <= 0:
            return None
        return ({c: t / weights for c, t in totals.items()}, samples)

    # ---------------------------------------------------------- trump

    def _dealing_2p(self, view: SeatView, on: bool) -> DrawSearch | None:
        """The two-player deal search, when ``on`` applies to this view."""
        if not on or self.time_budget <= 0 or view.variant.kind is not Kind.CLASSIC:
            return None
        return DrawSearch(self.rng, self.deal_samples)

    def choose_keep(self, view: SeatView) -> bool:
        search = self._dealing_2p(view, self.search_draw_2p)
        keep = search.keep(view, self._clock_now()) if search else None
        return super().choose_keep(view) if keep is None else keep

    def choose_discards(self, view: SeatView) -> tuple[Card, Card]:
        search = self._dealing_2p(view, self.search_discards_2p)
        pair = search.discards(view, self._clock_now()) if search else None
        return super().choose_discards(view) if pair is None else pair

    def choose_trump(self, view: SeatView) -> Suit:
        n = view.variant.players
        if n == 2:
            search = self._dealing_2p(view, self.search_trump_2p)
            trump = search.trump(view, self._clock_now()) if search else None
            return super().choose_trump(view) if trump is None else Suit(trump)
        if self.time_budget <= 0 or (n == 4 and not self.search_trump_4p):
            return super().choose_trump(view)
        clock = self._clock_now()
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
            others = sample_hands(self.rng, -1, 0, unseen, sizes, voids)
            others[me] |= hand
            values = []
            try:  # a step that would not fit drops this sample (the first too: the rule decides)
                for s in range(4):
                    if n != 4:
                        clock.check(slowest)
                    t1 = time.perf_counter()
                    values.append(self._trump_value(view, others, s, clock))
                    slowest = max(slowest, time.perf_counter() - t1)
            except OutOfTime:
                break
            for s in range(4):
                totals[s] += values[s]
            samples += 1
            now = time.perf_counter()
            avg += (now - t0 - avg) / samples
            if samples >= 2 and now + avg * (self.min_trump_samples - samples) > clock.deadline:
                # Too few deals would fit: the rule decides, so stop spending time.
                # (Full 52-card solves at the trump choice are the slowest of the
                # hand, 10 ms to over a second each.)
                break
        rule = choose_trump_rule(hand)
        if samples < self.min_trump_samples:
            # A handful of sampled deals is noise next to the rule: 8 of the hakem's
            # 13 cards are still unknown when trump is chosen.
            return rule
        means = [t / samples for t in totals]
        means[rule] += self.prior / math.sqrt(samples)
        best = max(means)
        if means[rule] >= best - 1e-9:
            return rule
        return Suit(means.index(best))

    def _trump_value(
        self, view: SeatView, hands: list[CardSet], trump: int, clock: Clock | None = None
    ) -> float:
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

    # ------------------------------------------------------------ bids

    def choose_bid(self, view: SeatView) -> int:
        """Seed 004: pick the bid with the best expected score over playouts."""
        if self.time_budget <= 0:
            return super().choose_bid(view)
        me = view.seat
        assert me is not None
        know = Knowledge(view)
        clock = self._clock_now()
        sizes = list(view.hand_sizes)
        dist = [0] * 14  # tricks taken when playing for tricks
        nil_ok = 0
        samples = 0
        opp_bid = view.bids[1 - me]
        slowest = 0.0
        while samples < 300 and clock.fits(slowest):
            t0 = time.perf_counter()
            hands = sample_hands(self.rng, me, know.hand, know.unseen, sizes, know.voids)
            for nil in (False, True):
                m = SearchMatch(view.variant, None)
                m.phase = Phase.PLAY
                m.trump = Suit.SPADES
                m.turn = m.leader = view.dealer  # the second player leads
                m.first = 1 - view.dealer
                m.hands = list(hands)
                bids: list[int | None] = [None, None]
                bids[me] = 0 if nil else max(1, round(self._rule_est(view)))
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
            return super().choose_bid(view)
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

    def _rule_est(self, view: SeatView) -> float:
        from .rules import bid_estimate

        return bid_estimate(mask_of(view.hand))
