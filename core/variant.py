"""Table settings: which game is played and with which of RULES.md's options."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any

from .cards import Card, parse_card

_TWO_OF_CLUBS = parse_card("2♣")

__all__ = ["HakemRule", "Kind", "Variant"]


class Kind(StrEnum):
    CLASSIC = "classic"  # Hokm for 2, 3 or 4 players
    BIDDING = "bidding"  # seed 004: two players, spades trump, bids, 500 points


class HakemRule(StrEnum):
    """Who becomes hakem after the hakem loses a 3-player hand."""

    NEXT_SEAT = "next"  # default: the old hakem deals, the next seat is hakem
    WINNER = "winner"  # seed 002: the winner of the hand becomes hakem


@dataclass(frozen=True, slots=True)
class Variant:
    players: int = 4
    kind: Kind = Kind.CLASSIC
    target: int = 7
    #: 4 players: choose partners by the second ace (یارکشی) instead of fixed seats.
    teams_by_aces: bool = False
    #: 2 and 3 players: the 2 taken out of the deck.
    removed_two: Card = _TWO_OF_CLUBS
    #: 3 players: the next hakem after the hakem loses.
    hakem_rule: HakemRule = HakemRule.NEXT_SEAT
    #: 3 players (seed 002): keep a tally of card values in won tricks.
    card_points: bool = False

    def __post_init__(self) -> None:
        if self.kind == Kind.BIDDING:
            if self.players != 2:
                raise ValueError("the bidding variant is for two players")
        elif self.players not in (2, 3, 4):
            raise ValueError("Hokm is played by 2, 3 or 4 players")
        if self.target < 1:
            raise ValueError("target must be positive")
        if self.removed_two.rank != 2:
            raise ValueError("the removed card must be a 2")

    # Constructors for the four games of RULES.md.
    @classmethod
    def four(cls, **options: Any) -> Variant:
        return cls(players=4, **options)

    @classmethod
    def three(cls, **options: Any) -> Variant:
        return cls(players=3, **options)

    @classmethod
    def two(cls, **options: Any) -> Variant:
        return cls(players=2, **options)

    @classmethod
    def bidding(cls, **options: Any) -> Variant:
        options.setdefault("target", 500)
        return cls(players=2, kind=Kind.BIDDING, **options)

    @property
    def teams(self) -> bool:
        return self.players == 4

    @property
    def sides(self) -> int:
        """How many scoring sides: two teams of two, or one per player."""
        return 2 if self.players == 4 else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.players == 4 else seat

    @property
    def deck_size(self) -> int:
        return 51 if self.kind == Kind.CLASSIC and self.players in (2, 3) else 52

    @property
    def hand_size(self) -> int:
        return 17 if self.players == 3 else 13

    @property
    def tricks_per_hand(self) -> int:
        return self.hand_size

    def with_options(self, **changes: Any) -> Variant:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = str(self.kind)
        d["hakem_rule"] = str(self.hakem_rule)
        d["removed_two"] = self.removed_two.ascii
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Variant:
        d = dict(d)
        d["kind"] = Kind(d.get("kind", "classic"))
        d["hakem_rule"] = HakemRule(d.get("hakem_rule", "next"))
        d["removed_two"] = parse_card(d.get("removed_two", "2C"))
        return cls(**d)
