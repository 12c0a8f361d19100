"""What a seat can do. Every action is a small immutable value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import Card, Suit, parse_card

__all__ = [
    "Action",
    "Bid",
    "ChooseTrump",
    "DeclareBlind",
    "Discard",
    "Draw",
    "Exchange",
    "PlayCard",
    "action_from_dict",
    "action_to_dict",
]


@dataclass(frozen=True, slots=True)
class ChooseTrump:
    suit: Suit


@dataclass(frozen=True, slots=True)
class PlayCard:
    card: Card


@dataclass(frozen=True, slots=True)
class Discard:
    """Two players: put two of the first five cards away, face down."""

    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Draw:
    """Two players' draw: keep the top stock card (the next is discarded unseen) or
    discard it and keep the next one."""

    keep: bool


@dataclass(frozen=True, slots=True)
class DeclareBlind:
    """Bidding variant: bid blind nil before seeing a card, or not."""

    blind: bool


@dataclass(frozen=True, slots=True)
class Exchange:
    """Bidding variant, after a blind nil: swap up to 3 cards for random discards."""

    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Bid:
    """Bidding variant: 0 (nil) to 13 tricks."""

    tricks: int


Action = ChooseTrump | PlayCard | Discard | Draw | DeclareBlind | Exchange | Bid


def action_to_dict(action: Action) -> dict[str, Any]:
    match action:
        case ChooseTrump(suit):
            return {"type": "trump", "suit": suit.letter}
        case PlayCard(card):
            return {"type": "play", "card": card.ascii}
        case Discard(cards):
            return {"type": "discard", "cards": [c.ascii for c in cards]}
        case Exchange(cards):
            return {"type": "exchange", "cards": [c.ascii for c in cards]}
        case Draw(keep):
            return {"type": "draw", "keep": keep}
        case DeclareBlind(blind):
            return {"type": "blind", "blind": blind}
        case Bid(tricks):
            return {"type": "bid", "tricks": tricks}
    raise TypeError(f"not an action: {action!r}")


def action_from_dict(d: dict[str, Any]) -> Action:
    t = d["type"]
    if t == "trump":
        return ChooseTrump(Suit.parse(d["suit"]))
    if t == "play":
        return PlayCard(parse_card(d["card"]))
    if t == "discard":
        return Discard(tuple(parse_card(c) for c in d["cards"]))
    if t == "exchange":
        return Exchange(tuple(parse_card(c) for c in d["cards"]))
    if t == "draw":
        return Draw(bool(d["keep"]))
    if t == "blind":
        return DeclareBlind(bool(d["blind"]))
    if t == "bid":
        return Bid(int(d["tricks"]))
    raise ValueError(f"unknown action type {t!r}")
