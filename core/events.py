"""What happened: the engine reports every change as events.

Events carry only what every seat at the table may know, so a renderer can show
any of them in the group. A seat's private cards are read from :meth:`Match.view`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from .cards import Card, Suit

__all__ = [
    "BidMade",
    "BlindDeclared",
    "CardPlayed",
    "CardsDealt",
    "Discarded",
    "Drew",
    "Event",
    "Exchanged",
    "HakemDrawn",
    "HandEnded",
    "HandKind",
    "HandStarted",
    "MatchEnded",
    "SeatsArranged",
    "TrickWon",
    "TrumpChosen",
    "event_to_dict",
]


class HandKind(StrEnum):
    NORMAL = "normal"
    KOT = "kot"  # the hakem's side won 7-0: 2 points
    HAKEM_KOT = "hakem_kot"  # the hakem's side lost 0-7: 3 points to the others


@dataclass(frozen=True, slots=True)
class HakemDrawn:
    """Cards dealt face up one at a time until the first ace (and, when partners
    are chosen by aces, the second ace to another player)."""

    draw: tuple[tuple[int, Card], ...]
    hakem: int
    partner: int | None = None


@dataclass(frozen=True, slots=True)
class SeatsArranged:
    """Partners chosen by aces now sit opposite: ``order[seat]`` is the player
    (by join order) who sits at ``seat``."""

    order: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HandStarted:
    hand_no: int
    hakem: int | None
    dealer: int
    #: Bidding variant: who draws first this hand.
    first: int | None = None


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """How many cards each seat now holds (which ones is private)."""

    counts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TrumpChosen:
    seat: int
    suit: Suit


@dataclass(frozen=True, slots=True)
class Discarded:
    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class Drew:
    seat: int
    stock_left: int


@dataclass(frozen=True, slots=True)
class BlindDeclared:
    seat: int
    blind: bool


@dataclass(frozen=True, slots=True)
class Exchanged:
    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class BidMade:
    seat: int
    tricks: int
    blind: bool = False


@dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class TrickWon:
    seat: int
    plays: tuple[tuple[int, Card], ...]
    trick_no: int
    #: Tricks taken so far this hand, per seat.
    tricks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HandEnded:
    hand_no: int
    #: The side that won the hand. In the bidding variant, where both sides score,
    #: the side that scored more this hand (None when they scored the same).
    winner: int | None
    kind: HandKind
    #: Points each side scored this hand (may be negative in the bidding variant).
    points: tuple[int, ...]
    #: Tricks taken per seat.
    tricks: tuple[int, ...]
    #: The match score per side after this hand.
    scores: tuple[int, ...]
    hakem: int | None


@dataclass(frozen=True, slots=True)
class MatchEnded:
    winner: int
    scores: tuple[int, ...]


Event = (
    HakemDrawn
    | SeatsArranged
    | HandStarted
    | CardsDealt
    | TrumpChosen
    | Discarded
    | Drew
    | BlindDeclared
    | Exchanged
    | BidMade
    | CardPlayed
    | TrickWon
    | HandEnded
    | MatchEnded
)


def _plain(value: Any) -> Any:
    if isinstance(value, Card):
        return value.ascii
    if isinstance(value, Suit):
        return value.letter
    if isinstance(value, StrEnum):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-friendly form, e.g. for logs and replays."""
    d: dict[str, Any] = {"event": type(event).__name__}
    for f in fields(event):
        d[f.name] = _plain(getattr(event, f.name))
    return d
