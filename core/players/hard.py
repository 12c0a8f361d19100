"""Level "hard": determinized search (perfect-information Monte Carlo).

For each decision the player samples deals of the hidden cards that agree with
everything its seat has seen (:func:`.search.view_sample`), scores every legal card on
each sample and plays the best on average. Sampling stops when the per-move time
budget is spent (anytime), and never uses anything but the seat's own view.

The searches, one module each, read the player's settings (:mod:`.hard_settings`):

* 4 players (:mod:`.dds_search`): each sample solved double dummy by DDS, the
  sampled deals weighted by how well the rules explain the others' past plays
  (:mod:`.inference`) and kept from one decision of the seat to its next within a
  hand (:mod:`.particles`).
* 2 and 3 players (:mod:`.playout_search`): rule-based playouts of weighted deals,
  and an exact search of the whole ending once few cards are left.
* Trump (:mod:`.trump_search`): 4 players by DDS on sampled completions of the deal
  (off by default), 3 players by playouts, 2 players by the rules. Bids (seed 004,
  :mod:`.bid_search`) from playouts. 2-player discards and draws use the rules
  (searching them, :mod:`.drawing`, measured no better: RESULTS.md).

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

from ..cards import Card, Suit, mask_of
from ..match import SeatView
from ..variant import Kind
from .bid_search import search_bid
from .clock import Clock
from .dds_search import DdsSearch
from .drawing import DrawSearch
from .hard_settings import HardSettings
from .knowledge import Knowledge
from .playout_search import playout_scores
from .policies import policy
from .rules import RulePlayer, state_from_view
from .runs import same_choice
from .search import distinct_cards
from .signals import sequence_card, signal_discard, signal_follow
from .solver import dds
from .trump_search import search_trump

__all__ = ["HardPlayer"]


class HardPlayer(HardSettings, RulePlayer):
    """Level "hard": determinized sampling with DDS (4 players) or playouts and
    exact endings (2 and 3 players)."""

    name = "hard"

    def __init__(self, seed: int | None = None, time_budget: float = 1.0) -> None:
        super().__init__(seed)
        self.time_budget = time_budget
        self.dds_search = DdsSearch(self)
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

    def _knowledge(self, view: SeatView) -> Knowledge:
        """What the seat knows (a diagnostic's subclass is shown more:
        :mod:`.sighted`)."""
        return Knowledge(view)

    def choose_card(self, view: SeatView) -> Card:
        know = self._knowledge(view)
        card = self._searched_card(view, know)
        if self.sequence_signals and view.variant.players == 4:
            return sequence_card(card, know.hand, know.unseen, not view.trick)
        return card

    def _searched_card(self, view: SeatView, know: Knowledge) -> Card:
        legal = [a.card for a in view.legal]  # type: ignore[union-attr]
        if len(legal) == 1:
            return legal[0]
        distinct = distinct_cards(legal, know)
        if len(distinct) == 1:
            return distinct[0]
        rule = policy(self.rule_policy)(state_from_view(view, know))
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
            if view.trick and self.follow_share < 1.0:
                clock = clock.part(self.follow_share)
            totals = self.dds_search.scores(view, know, distinct, clock, self.rng)
            prior = self.prior_dds
        else:
            totals = playout_scores(self, view, know, distinct, clock, self.rng)
        if totals is None:
            return rule
        means, samples = totals
        # A prior toward the rule-based card, fading as samples accumulate: with
        # few samples the averages are noisy.
        if rule in means:
            means[rule] += prior / math.sqrt(samples)
        best = max(means.values())
        good = [c for c in distinct if means[c] >= best - 1e-9]
        if (
            (self.signal_discards or self.signal_counts)
            and view.trick
            and view.variant.players == 4
        ):
            # cards the search finds as good as the best, within the tolerance
            near = [c for c in distinct if means[c] >= best - self.signal_tolerance - 1e-9]
            signal = None
            if self.signal_discards:
                led = view.trick[0][1] // 13
                signal = signal_discard(know.hand, mask_of(legal), led, view.trump)
            if signal is not None:
                same = [c for c in near if c // 13 == signal // 13]
                if same:  # the signal costs (almost) nothing to the search
                    return min(same)
            if self.signal_counts:
                signal = signal_follow(
                    know.hand, mask_of(legal), view.trick, view.trump, int(self.signal_counts)
                )
                live = know.unseen | know.hand
                if signal is not None and any(
                    same_choice(c, signal, know.hand, live) for c in near
                ):
                    # as good as a card the search chose, and to the partner's
                    # reading (:mod:`.inference`) the same card as it
                    return signal
        if rule in good:
            return rule
        return min(good, key=lambda c: (c % 13, c))

    # ---------------------------------------------- trump, draws, discards, bids

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
        return search_trump(self, view, self._clock_now(), self.rng)

    def choose_bid(self, view: SeatView) -> int:
        """Seed 004: the bid with the best expected score over playouts."""
        if self.time_budget <= 0:
            return super().choose_bid(view)
        bid = search_bid(view, self._clock_now(), self.rng)
        return super().choose_bid(view) if bid is None else bid
