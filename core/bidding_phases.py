"""The bidding variant's phases before play: blind nil, the exchange and the bids.
A part of :class:`core.match.Match` (a mixin over its attributes)."""

from __future__ import annotations

from .actions import Bid, DeclareBlind, Exchange
from .cards import cards_in, mask_of
from .deck import deck_rng
from .errors import ErrorCode, IllegalAction
from .events import BidMade, BlindDeclared, CardsDealt, Event, Exchanged
from .state import _BID, _DRAW, _EXCHANGE


class BiddingPhases:
    """Blind nil or not, the blind-nil exchange and the bids (RULES.md, bidding)."""

    __slots__ = ()

    def _second(self) -> int:
        return 1 - self.first  # type: ignore[operator]

    def _declare_blind(self, seat: int, action: DeclareBlind, events: list[Event]) -> None:
        self.blind[seat] = bool(action.blind)
        if action.blind:
            self.bids[seat] = 0
        events.append(BlindDeclared(seat, bool(action.blind)))
        if seat == self._second():
            self.turn = self.first
        else:
            self.phase = _DRAW
            self.turn = self.first

    def _after_draw_bidding(self, events: list[Event]) -> None:
        events.append(CardsDealt(self._counts()))
        for seat in (self._second(), self.first):
            if self.blind[seat]:
                self.phase, self.turn = _EXCHANGE, seat
                return
        self._next_bidder(events)

    def _exchange(self, seat: int, action: Exchange, events: list[Event]) -> None:
        m = self._own_cards(seat, action.cards, ErrorCode.BAD_EXCHANGE)
        k = m.bit_count()
        if k > 3 or k != len(action.cards):
            raise IllegalAction(ErrorCode.BAD_EXCHANGE, "exchange at most three cards")
        rng = deck_rng(self.seed, f"exchange:{self.hand_no}:{seat}")
        taken = rng.sample(self.pile, k) if k else []
        for c in taken:
            self.pile.remove(c)
        given = cards_in(m)
        self.pile.extend(given)
        self.hands[seat] = (self.hands[seat] & ~m) | mask_of(taken)
        # The pile is made of discards: a card taken back is nobody's discard any more,
        # a card given is this seat's.
        for other in range(self.n):
            self.discards[other] &= ~mask_of(taken)
        self.discards[seat] |= m
        events.append(Exchanged(seat, k))
        if seat == self._second() and self.blind[self.first]:  # type: ignore[index]
            self.turn = self.first
            return
        self._next_bidder(events)

    def _next_bidder(self, events: list[Event]) -> None:
        for seat in (self._second(), self.first):
            if self.bids[seat] is None:  # type: ignore[index]
                self.phase, self.turn = _BID, seat
                return
        self._begin_play(self._second())

    def _bid(self, seat: int, action: Bid, events: list[Event]) -> None:
        t = action.tricks
        if not isinstance(t, int) or not 0 <= t <= 13:
            raise IllegalAction(ErrorCode.BAD_BID, "bid 0 to 13")
        self.bids[seat] = t
        events.append(BidMade(seat, t, False))
        self._next_bidder(events)
