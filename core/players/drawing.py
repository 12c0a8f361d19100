"""Two players: the trump, discard and draw decisions searched by playouts.

With two players ten of a seat's thirteen cards come from the draw, so the draw
decides as much of a hand as the card play does. The rules judge a card by its rank
and suit alone (:func:`.rules.card_value`); here each option is scored by finishing
the deal on sampled hidden cards (the opponent's hand, the stock's order) with both
seats drawing and discarding by the rules, then playing the hand out by the rules,
and the option with the best mean result is taken. All options of a decision are
scored on the same sampled deals (common random numbers), so their difference is
far less noisy than their values.

Only the seat's own view is used: the sampled cards are drawn from the cards it has
not seen (:class:`.knowledge.Knowledge`).
"""

from __future__ import annotations

import itertools
import random
import time

from ..cards import SUIT_MASKS, Card, CardSet, cards_in, mask_of
from ..match import Phase, SeatView
from ..scoring import TRICKS_TO_WIN
from .clock import Clock
from .knowledge import Knowledge, deck_mask
from .rules import card_value, choose_discards_rule, choose_trump_rule, keeps_top
from .search import hand_from, hand_value, playout, settled

__all__ = ["DrawSearch"]

_HONOURS = sum(0b1110000000000 << (13 * s) for s in range(4))  # Q, K, A of every suit


class _Deal:
    """The hidden state of a deal before play (two seats): hands, discards and the
    stock (top first). Mutable, copied per option."""

    __slots__ = ("discards", "hands", "stock")

    def __init__(self, hands: list[CardSet], discards: list[CardSet], stock: list[Card]) -> None:
        self.hands = hands
        self.discards = discards
        self.stock = stock

    def copy(self) -> _Deal:
        return _Deal(list(self.hands), list(self.discards), list(self.stock))


class DrawSearch:
    """Scores trump, discard and keep options for a two-player seat by playouts."""

    #: Weight of a card that the opponent kept from the draw (trump, Q-K-A) against
    #: one it let go, when its hand is sampled (as :func:`.search.view_sample`).
    good_weight = 2.0
    #: Samples before the choice may be called settled (:func:`.search.settled`).
    settle_samples = 32

    def __init__(self, rng: random.Random, max_samples: int = 400) -> None:
        self.rng = rng
        self.max_samples = max_samples

    # ------------------------------------------------------------ decisions

    def keep(self, view: SeatView, clock: Clock) -> bool | None:
        """Keep the top card? ``None`` when no sample fits the clock."""
        assert view.top_card is not None
        means = self._score(view, clock, [True, False], self._apply_keep)
        if means is None:
            return None
        return means[True] >= means[False]

    def discards(
        self, view: SeatView, clock: Clock, candidates: int = 4
    ) -> tuple[Card, Card] | None:
        """The two cards to put away, among the ``candidates`` cheapest pairs by the
        rules' card values (the rest are never better: they throw away a trump or an
        honour the cheaper pairs keep)."""
        trump = view.trump
        ranked = sorted(view.hand, key=lambda c: (card_value(c, trump), c))
        # Ascending, so each pair comes out sorted.
        cheap = sorted(ranked[: candidates + 1])
        options: list[tuple[Card, Card]] = list(itertools.combinations(cheap, 2))
        options.sort(key=lambda p: (card_value(p[0], trump) + card_value(p[1], trump), p))
        options = options[: max(1, candidates * 2)]
        means = self._score(view, clock, options, self._apply_discard)
        if means is None:
            return None
        return max(options, key=lambda o: (means[o], -options.index(o)))

    def trump(self, view: SeatView, clock: Clock) -> int | None:
        """The hakem's trump from its first five cards."""
        means = self._score(view, clock, [0, 1, 2, 3], self._apply_trump)
        if means is None:
            return None
        rule = int(choose_trump_rule(mask_of(view.hand)))
        return max(range(4), key=lambda s: (means[s], s == rule))

    # ------------------------------------------------------------ the search

    def _score(self, view, clock, options, apply) -> dict | None:
        me = view.seat
        know = Knowledge(view)
        totals = dict.fromkeys(options, 0.0)
        rows: list[tuple[float, dict]] = []
        samples = 0
        slowest = 0.0
        while samples < self.max_samples and clock.fits(slowest):
            t0 = time.perf_counter()
            deal = self._sample(view, know)
            row = {}
            for o in options:
                d = deal.copy()
                trump = apply(view, d, o)
                row[o] = v = self._finish(view, d, me, trump)
                totals[o] += v
            rows.append((1.0, row))
            samples += 1
            slowest = max(slowest, time.perf_counter() - t0)
            # Most draws are clear (an ace of trump, a low card of a long side suit):
            # stop once the paired differences settle the choice.
            if samples >= self.settle_samples and samples % 8 == 0 and settled(rows, totals):
                break
        if not samples:
            return None
        return {o: t / samples for o, t in totals.items()}

    def _sample(self, view: SeatView, know: Knowledge) -> _Deal:
        """The cards this seat has not seen, dealt at random: the opponent's hand
        (trump and honours more likely there, once it has chosen what to keep), then
        the stock in order; the rest are the opponent's discards."""
        me = view.seat
        opp = 1 - me
        rng = self.rng
        unseen = list(cards_in(know.unseen))
        rng.shuffle(unseen)
        size = view.hand_sizes[opp]
        if view.phase is Phase.DRAW or (view.phase is Phase.DISCARD and size < 5):
            good = _HONOURS | (SUIT_MASKS[view.trump] if view.trump is not None else 0)
            w = self.good_weight
            keys = [rng.random() ** (1.0 / w if good >> c & 1 else 1.0) for c in unseen]
            order = sorted(range(len(unseen)), key=keys.__getitem__, reverse=True)
            hand_idx = set(order[:size])
            opp_cards = [unseen[i] for i in order[:size]]
            rest = [unseen[i] for i in range(len(unseen)) if i not in hand_idx]
        else:
            opp_cards, rest = unseen[:size], unseen[size:]
        stock_size = view.stock_size
        stock: list[Card] = []
        if view.phase is Phase.DRAW:
            stock = [view.top_card, *rest[: stock_size - 1]]  # type: ignore[list-item]
        else:
            stock = rest[:stock_size]
        hands = [0, 0]
        hands[me] = know.hand
        hands[opp] = mask_of(opp_cards)
        discards = [0, 0]
        discards[me] = mask_of(view.discards)
        # The opponent's discards: what is left; only their count matters (never drawn).
        return _Deal(hands, discards, stock)

    @staticmethod
    def _apply_keep(view: SeatView, d: _Deal, keep: bool) -> int:
        me = view.seat
        first, second = d.stock[0], d.stock[1]
        kept, dropped = (first, second) if keep else (second, first)
        d.hands[me] |= 1 << kept
        d.discards[me] |= 1 << dropped
        d.stock = d.stock[2:]
        return int(view.trump)  # type: ignore[arg-type]

    @staticmethod
    def _apply_discard(view: SeatView, d: _Deal, pair: tuple[Card, Card]) -> int:
        me = view.seat
        m = mask_of(pair)
        d.hands[me] &= ~m
        d.discards[me] |= m
        return int(view.trump)  # type: ignore[arg-type]

    @staticmethod
    def _apply_trump(view: SeatView, d: _Deal, trump: int) -> int:
        me = view.seat
        m = mask_of(choose_discards_rule(cards_in(d.hands[me]), trump))
        d.hands[me] &= ~m
        d.discards[me] |= m
        return trump

    def _finish(self, view: SeatView, d: _Deal, me: int, trump: int) -> float:
        """Finish the deal by the rules (the opponent's discards if still due, the
        rest of the draw), play the hand out by the rules, and return its value for
        ``me``."""
        opp = 1 - me
        hand_size = view.variant.hand_size
        if view.phase is not Phase.DRAW and view.hand_sizes[opp] == 5:
            m = mask_of(choose_discards_rule(cards_in(d.hands[opp]), trump))
            d.hands[opp] &= ~m
            d.discards[opp] |= m
        hakem = view.hakem
        assert hakem is not None
        deck = deck_mask(view)
        # Whose draw is next: the seat on turn now drew if it is us, so the other.
        turn = opp if view.phase is Phase.DRAW else hakem
        stock = d.stock
        i = 0
        while (
            d.hands[0].bit_count() < hand_size or d.hands[1].bit_count() < hand_size
        ) and i + 1 < len(stock):
            top = stock[i]
            unseen = deck & ~(d.hands[turn] | d.discards[turn] | 1 << top)
            kept, dropped = (
                (top, stock[i + 1]) if keeps_top(top, unseen, trump) else (stock[i + 1], top)
            )
            d.hands[turn] |= 1 << kept
            d.discards[turn] |= 1 << dropped
            i += 2
            turn = 1 - turn
        m = hand_from(view, d.hands, trump, hakem)
        before = list(m.scores)
        playout(m, [0, 0])
        return hand_value(m, me, before) + 0.01 * (m.tricks_won[me] - TRICKS_TO_WIN)
