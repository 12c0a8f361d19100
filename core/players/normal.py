"""Level "normal": the rule-based player (:mod:`.rules`) with corrections to its
4-player card play, each kept because it measured better in the arena against the
rules as they were (the frozen arena level ``normal0``, core/players/RESULTS.md):

* two following rules the plain rules get wrong (third hand covers a beatable
  partner; second hand does not spend an unsafe winner);
* a light look-ahead: each distinct card is scored by 16 rule playouts of deals
  sampled to fit what the seat has seen (voids only, no inference), as the hard
  player does with far more samples and a double-dummy solver. A few tens of
  milliseconds per card.

Trump, bids, discards and the 2- and 3-player game stay with the rules. The hard
player keeps modelling others (playouts, inference) with the plain rules.
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, Card
from ..match import SeatView
from ..trick import winning_index
from .knowledge import Knowledge
from .rules import (
    PlayState,
    RulePlayer,
    _beats,
    _is_master,
    _iter,
    _safe,
    _throw,
    _want_win,
    rule_card,
    state_from_view,
)
from .search import SearchMatch, distinct_cards, hand_value, playout, view_sample

__all__ = ["NormalPlayer"]


class NormalPlayer(RulePlayer):
    """Level "normal": the rules with measured corrections to card play."""

    name = "normal"
    #: Third hand, partner winning but beatable by the last opponent: take over
    #: with a card that opponent cannot beat.
    third_cover = True
    #: Second hand, no winning card is safe from the opponent still to play: throw
    #: low instead of spending the cheapest winner (the partner plays last).
    second_low = True
    #: Second or third hand, a ruff possible: ruff only if safe, else throw.
    ruff_safe_only = False

    #: 4 players: score each distinct card by this many rule playouts of sampled
    #: deals (0: the corrected rules alone); ties go to the corrected rules' card.
    samples = 16

    def choose_card(self, view: SeatView) -> Card:
        know = Knowledge(view)
        card = self.card(state_from_view(view, know))
        if self.samples and view.variant.players == 4 and len(view.legal) > 1:
            return self._sampled(view, know, card)
        return card

    def _sampled(self, view: SeatView, know: Knowledge, rule: Card) -> Card:
        cards = distinct_cards([a.card for a in view.legal], know)  # type: ignore[union-attr]
        if rule not in cards:
            cards.append(rule)
        if len(cards) == 1:
            return cards[0]
        me = know.seat
        totals = dict.fromkeys(cards, 0.0)
        for _ in range(self.samples):
            hands = view_sample(view, know, self.rng)
            base = SearchMatch.from_view(view, hands)
            before = list(base.scores)
            for c in cards:
                m = base.copy()
                m.play(me, c)
                playout(m, know.voids)
                totals[c] += hand_value(m, me, before)
        return max(cards, key=lambda c: (totals[c], c == rule))

    def card(self, st: PlayState) -> Card:
        legal = st.legal
        if legal & (legal - 1) == 0 or not _want_win(st) or not st.trick or st.n != 4:
            return rule_card(st)
        trick = st.trick
        cards = [c for _, c in trick]
        wi = winning_index(cards, st.trump)
        wseat = trick[wi][0]
        led = cards[0] // 13
        seat = st.seat
        partner = (seat + 2) % 4
        last = (seat + 1) % 4
        if len(trick) == 2 and wseat == partner:
            if self.third_cover and not _safe(st, cards[wi], led, [last]):
                for c in _iter(legal):
                    if _beats(cards, c, st.trump) and _safe(st, c, led, [last]):
                        return c
            return _throw(st)
        if len(trick) == 1 and self.second_low:
            winners = [c for c in _iter(legal) if _beats(cards, c, st.trump)]
            # The partner, last to play, may still win the trick.
            if (
                winners
                and not any(_safe(st, c, led, [last]) for c in winners)
                and not (winners[0] // 13 == st.trump != led)
            ):
                return _throw(st)
        if (
            self.ruff_safe_only
            and len(trick) < 3
            and st.trump is not None
            and not legal & SUIT_MASKS[led]
            and legal & SUIT_MASKS[st.trump]
        ):
            later = [(seat + i) % 4 for i in range(1, 4 - len(trick))]
            opp_later = [s for s in later if s % 2 != seat % 2]
            winners = [c for c in _iter(legal) if _beats(cards, c, st.trump)]
            safe = [c for c in winners if _safe(st, c, led, opp_later)]
            if winners and not safe and not _is_master(winners[-1], st.unseen):
                return _throw(st)
        return rule_card(st)
