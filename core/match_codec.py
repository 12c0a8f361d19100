"""A match saved as JSON and read back: the layout of :meth:`Match.to_json`.

The bot stores every game in this form after every move, so the layout is versioned
(:data:`FORMAT_VERSION`) and changes only with a migration of stored games.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from .cards import Card, CardSet, Suit, cards_in, mask_of, parse_card
from .state import Phase, TrickRecord
from .variant import Variant

# The match's class is a parameter, not an import: core.match imports this module,
# and the import goes one way.
M = TypeVar("M")

#: Bumped whenever :meth:`Match.to_json`'s layout changes incompatibly.
FORMAT_VERSION = 1


def to_dict(match: Any) -> dict[str, Any]:
    """The match as plain JSON values (cards as "AS"-style text)."""

    def cs(mask: CardSet) -> list[str]:
        return [c.ascii for c in cards_in(mask)]

    return {
        "format": FORMAT_VERSION,
        "variant": match.variant.to_dict(),
        "seed": match.seed,
        "phase": str(match.phase),
        "order": list(match.order),
        "first_draw": [[s, c.ascii] for s, c in match.first_draw],
        "hand_no": match.hand_no,
        "hakem": match.hakem,
        "dealer": match.dealer,
        "first": match.first,
        "trump": match.trump.letter if match.trump is not None else None,
        "turn": match.turn,
        "leader": match.leader,
        "hands": [cs(h) for h in match.hands],
        "stock": [c.ascii for c in match.stock],
        "discards": [cs(d) for d in match.discards],
        "pile": [c.ascii for c in match.pile],
        "trick": [[s, c.ascii] for s, c in match.trick],
        "tricks": [[t.leader, [[s, c.ascii] for s, c in t.plays], t.winner] for t in match.tricks],
        "tricks_won": list(match.tricks_won),
        "scores": list(match.scores),
        "card_points": list(match.card_points),
        "bags": list(match.bags),
        "bids": list(match.bids),
        "blind": list(match.blind),
        "spades_broken": match.spades_broken,
        "winner": match.winner,
        "history": match.history,
        "ply": match.ply,
    }


def to_json(match: Any) -> str:
    return json.dumps(to_dict(match), separators=(",", ":"), ensure_ascii=True)


def from_dict(cls: type[M], d: dict[str, Any]) -> M:
    """A match of class ``cls`` from :func:`to_dict`'s output."""

    if d.get("format") != FORMAT_VERSION:
        raise ValueError(f"unsupported match format {d.get('format')!r}")
    m: Any = cls(Variant.from_dict(d["variant"]), d["seed"])
    p = parse_card

    def pairs(items: list[list[Any]]) -> list[tuple[int, Card]]:
        return [(int(s), p(c)) for s, c in items]

    m.phase = Phase(d["phase"])
    m.order = tuple(d["order"])
    m.first_draw = tuple(pairs(d["first_draw"]))
    m.hand_no = d["hand_no"]
    m.hakem = d["hakem"]
    m.dealer = d["dealer"]
    m.first = d["first"]
    m.trump = Suit.parse(d["trump"]) if d["trump"] is not None else None
    m.turn = d["turn"]
    m.leader = d["leader"]
    m.hands = [mask_of(p(c) for c in h) for h in d["hands"]]
    m.stock = [p(c) for c in d["stock"]]
    m.discards = [mask_of(p(c) for c in h) for h in d["discards"]]
    m.pile = [p(c) for c in d["pile"]]
    m.trick = pairs(d["trick"])
    m.tricks = [TrickRecord(t[0], tuple(pairs(t[1])), t[2]) for t in d["tricks"]]
    m.tricks_won = list(d["tricks_won"])
    m.scores = list(d["scores"])
    m.card_points = list(d["card_points"])
    m.bags = list(d["bags"])
    m.bids = list(d["bids"])
    m.blind = list(d["blind"])
    m.spades_broken = d["spades_broken"]
    m.winner = d["winner"]
    m.history = list(d["history"])
    m.ply = d["ply"]
    return m


def from_json(cls: type[M], text: str) -> M:
    return from_dict(cls, json.loads(text))
