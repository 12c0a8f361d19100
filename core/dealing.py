"""Before the tricks: the first hakem, each deal, trump, and the two-player discards
and draws. A part of :class:`core.match.Match` (a mixin over its attributes)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .actions import ChooseTrump, Discard, Draw
from .cards import Card, CardSet, Suit
from .deck import deal, deck_rng, owners, shuffled_deck
from .errors import ErrorCode, IllegalAction
from .events import (
    CardsDealt,
    Discarded,
    Drew,
    Event,
    HakemDrawn,
    HandStarted,
    SeatsArranged,
    TrumpChosen,
)
from .state import _BLIND, _DISCARD, _DRAW, _PLAY, _TRUMP

_FIRST_DEAL = 5
_ACE = 12  # card index within a suit
_BITS = tuple(1 << i for i in range(52))


class DealingPhases:
    """The phases from a hand's first card dealt to its first card played."""

    __slots__ = ()

    def _draw_for_hakem(self, events: list[Event]) -> None:
        """First hakem: deal face up from a random seat until the first ace."""
        v = self.variant
        # Drawn from the game's own deck: with 2 or 3 players the removed 2 is out.
        deck = shuffled_deck(self.seed, "hakem", self._without)
        seat = deck_rng(self.seed, "hakem-seat").randrange(self.n)
        draw: list[tuple[int, Card]] = []
        hakem = partner = None
        for card in deck:
            if hakem is not None and seat == hakem:
                seat = (seat + 1) % self.n  # the hakem gets no more cards
            draw.append((seat, card))
            if card % 13 == _ACE:
                if hakem is None:
                    hakem = seat
                    if not (v.teams and v.teams_by_aces):
                        break
                else:
                    partner = seat
                    break
            seat = (seat + 1) % self.n
        assert hakem is not None
        self.hakem = hakem
        self.first_draw = tuple(draw)
        events.append(HakemDrawn(self.first_draw, hakem, partner))
        if partner is not None:
            opposite = (hakem + 2) % 4
            if partner != opposite:
                order = list(self.order)
                order[partner], order[opposite] = order[opposite], order[partner]
                self.order = tuple(order)
            events.append(SeatsArranged(self.order))

    def _start_hand(self, events: list[Event] | None) -> None:
        """Deal the next hand; ``events`` None: nobody is told (searches, self-play)."""
        n = self.n
        self.hand_no += 1
        self.trump = None
        self.trick = []
        self.tricks = []
        self.tricks_won = [0] * n
        self.hands = [0] * n
        self.discards = [0] * n
        self.pile = []
        self.bids = [None] * n
        self.blind = [False] * n
        self.spades_broken = False
        self.stock = shuffled_deck(self.seed, f"hand:{self.hand_no}", self._without)
        if self._bidding:
            first = self.first
            assert first is not None
            self.dealer = 1 - first
            self.trump = Suit.SPADES
            if events is not None:
                events.append(HandStarted(self.hand_no, None, self.dealer, first))
            self.phase = _BLIND
            self.turn = 1 - first  # the second player declares and bids first
            return
        hakem = self.hakem
        assert hakem is not None
        self.dealer = (hakem - 1) % n
        if events is not None:
            events.append(HandStarted(self.hand_no, hakem, self.dealer))
        # Only the hakem's five cards are dealt before trump, except with two
        # players, where both take five and the rest is the stock.
        if n == 2:
            for seat in self._from(hakem):
                self._deal(seat, _FIRST_DEAL)
        else:
            self._deal(hakem, _FIRST_DEAL)
        if events is not None:
            events.append(CardsDealt(self._counts()))
        self.phase = _TRUMP
        self.turn = hakem

    def _from(self, seat: int) -> list[int]:
        return [(seat + i) % self.n for i in range(self.n)]

    def _deal(self, seat: int, count: int) -> None:
        taken, self.stock = self.stock[:count], self.stock[count:]
        self.hands[seat] |= _packed(taken)

    def _counts(self) -> tuple[int, ...]:
        return tuple(map(int.bit_count, self.hands))

    def _choose_trump(self, seat: int, action: ChooseTrump, events: list[Event]) -> None:
        suit = action.suit
        if suit.__class__ is not Suit:  # a plain int (or junk) from outside
            try:
                suit = Suit(suit)
            except ValueError:
                raise IllegalAction(ErrorCode.UNKNOWN_ACTION, "no such suit") from None
        self.trump = suit
        events.append(TrumpChosen(seat, suit))
        if self.n == 2:
            self.phase = _DISCARD
            return
        stock, hands = self.stock, self.hands
        plan = _REST_OF_DEAL[self.n, seat]
        for seat_, cards in enumerate(deal(stock, plan, self.n)):
            hands[seat_] |= cards
        self.stock = stock[len(plan) :]
        events.append(CardsDealt(self._counts()))
        self._begin_play(seat)

    def _begin_play(self, leader: int) -> None:
        self.phase = _PLAY
        self.turn = self.leader = leader

    def _own_cards(self, seat: int, cards: Iterable[Any], code: ErrorCode) -> CardSet:
        m = 0
        for c in cards:
            if not isinstance(c, int) or not 0 <= c < 52:
                raise IllegalAction(ErrorCode.UNKNOWN_CARD)
            m |= 1 << c
        if m & ~self.hands[seat]:
            raise IllegalAction(ErrorCode.CARD_NOT_IN_HAND)
        return m

    def _discard(self, seat: int, action: Discard, events: list[Event]) -> None:
        m = self._own_cards(seat, action.cards, ErrorCode.BAD_DISCARD)
        if m.bit_count() != 2 or len(action.cards) != 2:
            raise IllegalAction(ErrorCode.BAD_DISCARD, "discard exactly two cards")
        self.hands[seat] &= ~m
        self.discards[seat] |= m
        events.append(Discarded(seat, 2))
        other = 1 - seat
        if self.discards[other]:
            self.phase = _DRAW
            self.turn = self.hakem
        else:
            self.turn = other

    def _draw(self, seat: int, action: Draw, events: list[Event]) -> None:
        first, second = self.stock[0], self.stock[1]
        self.stock = self.stock[2:]
        kept, dropped = (first, second) if action.keep else (second, first)
        self.hands[seat] |= 1 << kept
        self.discards[seat] |= 1 << dropped
        if self._bidding:
            self.pile.append(dropped)
        events.append(Drew(seat, len(self.stock)))
        size = self.variant.hand_size
        if all(h.bit_count() == size for h in self.hands):
            if self._bidding:
                self._after_draw_bidding(events)
            else:
                events.append(CardsDealt(self._counts()))
                self._begin_play(self.hakem)  # type: ignore[arg-type]
        else:
            self.turn = 1 - seat


def _rest_of_deal(n: int, hakem: int) -> bytes:
    """Who receives each card of the stock after trump is named (a plan for
    :func:`~core.deck.deal`): the others' first five, then rounds of four, each
    from the hakem."""
    order = [(hakem + i) % n for i in range(n)]
    seats = [s for s in order[1:] for _ in range(_FIRST_DEAL)]
    for _ in range(2 if n == 4 else 3):
        seats += [s for s in order for _ in range(4)]
    return owners(seats)


_REST_OF_DEAL = {(n, h): _rest_of_deal(n, h) for n in (3, 4) for h in range(n)}


def _packed(cards: list[Card]) -> CardSet:
    """The set of distinct cards (a deal's slice of one deck): a C-level sum."""
    return sum(map(_BITS.__getitem__, cards))
