"""What a seat can deduce from its own view: cards seen, voids shown, cards unseen.

Everything here is derived from a :class:`~core.match.SeatView` only, so a player
built on it can never look at another seat's cards.
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, CardSet, mask_of
from ..match import Phase, SeatView
from ..variant import Kind

__all__ = ["FULL", "Knowledge", "deck_mask", "void_suits"]

FULL: CardSet = (1 << 52) - 1
_SPADES = SUIT_MASKS[0]


def deck_mask(view: SeatView) -> CardSet:
    """The cards in play in this variant (51 with 2 or 3 classic players)."""
    v = view.variant
    if v.deck_size == 51:
        return FULL & ~(1 << v.removed_two)
    return FULL


def void_suits(view: SeatView) -> list[int]:
    """``voids[seat]``: a 4-bit mask of the suits ``seat`` has shown it lacks.

    A seat that did not follow the suit led is void in it. In the bidding variant
    a seat that led a spade before spades were broken holds only spades.
    """
    n = view.variant.players
    voids = [0] * n
    bidding = view.variant.kind is Kind.BIDDING
    broken = False
    all_tricks = [t.plays for t in view.tricks]
    if view.trick:
        all_tricks.append(view.trick)
    for plays in all_tricks:
        led = plays[0][1] // 13
        if bidding and led == 0 and not broken:
            voids[plays[0][0]] |= 0b1110
        for seat, card in plays[1:]:
            if card // 13 != led:
                voids[seat] |= 1 << led
        if bidding and led != 0 and any(c < 13 for _, c in plays):
            broken = True
    return voids


class Knowledge:
    """A seat's deductions: played cards, voids, and the cards it has not seen."""

    __slots__ = ("deck", "hand", "n", "played", "seat", "unseen", "voids")

    def __init__(self, view: SeatView) -> None:
        assert view.seat is not None
        self.n = view.variant.players
        self.seat = view.seat
        self.deck = deck_mask(view)
        self.hand = mask_of(view.hand)
        self.played = view.played
        self.voids = void_suits(view)
        known = self.played | self.hand | mask_of(view.discards)
        if view.phase is Phase.DRAW and view.top_card is not None:
            known |= 1 << view.top_card
        #: Cards this seat has not seen: in other hands, the stock or others' discards.
        self.unseen = self.deck & ~known
