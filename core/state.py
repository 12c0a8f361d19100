"""The match's value types: its phases, a completed trick and what one seat may know.

Kept apart from :mod:`core.match` so that renderers and computer players can use
them without the state machine's internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from .actions import Action
from .cards import Card, CardSet, Suit
from .variant import Variant

__all__ = ["Phase", "SeatView", "TrickRecord"]


class Phase(StrEnum):
    NEW = "new"  # created, start() not called yet
    TRUMP = "trump"  # the hakem names trump from the first five cards
    DISCARD = "discard"  # two players: put two cards away
    DRAW = "draw"  # two players: keep or discard from the stock
    BLIND = "blind"  # bidding variant: blind nil or not, before the draw
    EXCHANGE = "exchange"  # bidding variant: blind-nil players swap up to 3 cards
    BID = "bid"  # bidding variant: 0..13 tricks
    PLAY = "play"  # trick play
    OVER = "over"  # the match has a winner


class TrickRecord(NamedTuple):
    leader: int
    plays: tuple[tuple[int, Card], ...]
    winner: int


# Phases as module constants: an attribute of an Enum class is looked up through
# EnumType's __getattr__ hook, about nine times slower than a global here.
_NEW = Phase.NEW
_TRUMP = Phase.TRUMP
_DISCARD = Phase.DISCARD
_DRAW = Phase.DRAW
_BLIND = Phase.BLIND
_EXCHANGE = Phase.EXCHANGE
_BID = Phase.BID
_PLAY = Phase.PLAY
_OVER = Phase.OVER
_tuple_new = tuple.__new__

#: A match's whole state (copied by :meth:`Match.copy`).
_STATE = (
    "variant",
    "seed",
    "n",
    "_bidding",
    "_card_points",
    "_next",
    "_trick_extras",
    "_without",
    "phase",
    "order",
    "first_draw",
    "hand_no",
    "hakem",
    "dealer",
    "first",
    "trump",
    "turn",
    "leader",
    "hands",
    "stock",
    "discards",
    "pile",
    "trick",
    "tricks",
    "tricks_won",
    "scores",
    "card_points",
    "bags",
    "bids",
    "blind",
    "spades_broken",
    "winner",
    "history",
    "ply",
)


@dataclass(frozen=True, slots=True)
class SeatView:
    """What one seat may know, and nothing more. ``seat`` None is a spectator."""

    variant: Variant
    seat: int | None
    phase: Phase
    turn: int | None
    hand_no: int
    hakem: int | None
    dealer: int
    trump: Suit | None
    #: This seat's cards (empty for a spectator).
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    #: The trick on the table, in playing order.
    trick: tuple[tuple[int, Card], ...]
    leader: int | None
    #: Completed tricks of this hand.
    tricks: tuple[TrickRecord, ...]
    tricks_won: tuple[int, ...]
    scores: tuple[int, ...]
    card_points: tuple[int, ...]
    stock_size: int
    #: Two-player draw: the top stock card, shown only to the seat deciding on it.
    top_card: Card | None
    #: Cards this seat put away (its own discards only).
    discards: tuple[Card, ...]
    bids: tuple[int | None, ...]
    blind: tuple[bool, ...]
    spades_broken: bool
    #: ``order[seat]`` is the player (by join order) sitting there.
    order: tuple[int, ...]
    #: The face-up deal that chose the first hakem.
    first_draw: tuple[tuple[int, Card], ...]
    legal: tuple[Action, ...]

    @property
    def played(self) -> CardSet:
        """Every card played this hand, including the trick on the table."""
        m = 0
        for t in self.tricks:
            for _, c in t.plays:
                m |= 1 << c
        for _, c in self.trick:
            m |= 1 << c
        return m
