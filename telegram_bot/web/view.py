"""The page's view model: one seat's view of a game, as JSON.

Built from core's :class:`~core.state.SeatView` only (``Match.view(seat)``), which
holds what the seat may know: its own hand, the top stock card when it is the one
deciding on it, and the public table. Nothing else of the match is read here, so no
payload can carry another seat's cards. A seat of None gives the public table (no
hand, no legal actions). The seat's own discards are left out: with two players,
``SeatView.discards`` also holds the card put away unseen after a kept draw.

Cards are written as :attr:`core.Card.ascii` (``"AS"``, ``"TD"``), suits as their
letters (``"S"``, ``"H"``, ``"D"``, ``"C"``): the card art's file names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.actions import Bid, ChooseTrump, DeclareBlind, Discard, Draw, Exchange, PlayCard
from core.cards import Card
from core.match import Match
from core.state import SeatView

__all__ = ["VERSION", "SeatInfo", "TableInfo", "hand_order", "seat_view", "view_of_match"]

#: Bumped when the payload's layout changes in a way the page must know about.
VERSION = 1


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """What the game row says of one seat (by seat, not join order)."""

    name: str
    bot: bool = False
    away: bool = False


@dataclass(frozen=True, slots=True)
class TableInfo:
    """The game's facts outside the match: its id, move number, the seats' names and
    the turn's deadline (seconds since the epoch, or None)."""

    game_id: str
    move: int
    seats: tuple[SeatInfo, ...]
    deadline: float | None = None
    #: The match's winning side once it is over (public).
    winner: int | None = None
    #: Summaries of finished hands (``Match.history``, public), oldest first.
    history: tuple[dict[str, Any], ...] = field(default=())


# Suits in the hand alternate colours (spades, hearts, clubs, diamonds), highest first.
_SUIT_ORDER = (0, 1, 3, 2)


def hand_order(cards: Sequence[Card]) -> list[Card]:
    """A hand as it is held: by suit, colours alternating, high to low in each."""
    return sorted(cards, key=lambda c: (_SUIT_ORDER[c // 13], -(c % 13)))


def _plays(plays: Sequence[tuple[int, Card]]) -> list[dict[str, Any]]:
    return [{"seat": s, "card": c.ascii} for s, c in plays]


def _legal(view: SeatView) -> dict[str, Any]:
    """The seat's legal actions, summed up for the page (the discard and exchange
    choices are combinations of the hand: sent as their size, not listed)."""
    legal = view.legal
    if not legal:
        return {}
    first = legal[0]
    if isinstance(first, PlayCard):
        return {"play": [a.card.ascii for a in legal if isinstance(a, PlayCard)]}
    if isinstance(first, ChooseTrump):
        return {"trump": [a.suit.letter for a in legal if isinstance(a, ChooseTrump)]}
    if isinstance(first, Discard):
        return {"discard": {"count": len(first.cards)}}
    if isinstance(first, Draw):
        top = view.top_card.ascii if view.top_card is not None else None
        return {"draw": {"top": top}}
    if isinstance(first, DeclareBlind):
        return {"blind": [a.blind for a in legal if isinstance(a, DeclareBlind)]}
    if isinstance(first, Exchange):
        return {"exchange": {"max": max(len(a.cards) for a in legal if isinstance(a, Exchange))}}
    if isinstance(first, Bid):
        return {"bid": [a.tricks for a in legal if isinstance(a, Bid)]}
    return {}


def seat_view(view: SeatView, table: TableInfo) -> dict[str, Any]:
    """The JSON-ready payload for ``view.seat`` (None: the public table)."""
    v = view.variant
    n = v.players
    if len(table.seats) != n:
        raise ValueError(f"{len(table.seats)} seats for a {n}-player match")
    seats = []
    for s in range(n):
        info = table.seats[s]
        seats.append(
            {
                "seat": s,
                "name": info.name,
                "bot": info.bot,
                "away": info.away,
                "side": v.side_of(s),
                "cards": view.hand_sizes[s],
                "tricks": view.tricks_won[s],
                "bid": view.bids[s],
                "blind": view.blind[s],
            }
        )
    sides = []
    for side in range(v.sides):
        sides.append(
            {
                "tricks": sum(view.tricks_won[s] for s in range(n) if v.side_of(s) == side),
                "score": view.scores[side],
                "points": view.card_points[side] if v.card_points else None,
            }
        )
    last = view.tricks[-1] if view.tricks else None
    mine = view.seat is not None
    return {
        "v": VERSION,
        "game": table.game_id,
        "move": table.move,
        "variant": {
            "players": n,
            "kind": str(v.kind),
            "target": v.target,
            "teams": v.teams,
            "hand_size": v.hand_size,
            "tricks": v.tricks_per_hand,
        },
        "phase": str(view.phase),
        "hand_no": view.hand_no,
        "you": view.seat,
        "seats": seats,
        "sides": sides,
        "hakem": view.hakem,
        "dealer": view.dealer,
        "turn": view.turn,
        "leader": view.leader,
        "trump": view.trump.letter if view.trump is not None else None,
        "trick": _plays(view.trick),
        "last_trick": (
            {"leader": last.leader, "plays": _plays(last.plays), "winner": last.winner}
            if last is not None
            else None
        ),
        "tricks_played": len(view.tricks),
        "stock": view.stock_size,
        # The face-up deal that chose the first hakem, while it is news (the deck is
        # shuffled again before the deal, so it tells nothing of any hand).
        "first_draw": _plays(view.first_draw) if view.hand_no == 1 and not view.tricks else [],
        "hand": [c.ascii for c in hand_order(view.hand)] if mine else [],
        "legal": _legal(view) if mine else {},
        "deadline": table.deadline,
        "winner": table.winner,
        "last_hand": dict(table.history[-1]) if table.history else None,
    }


def view_of_match(
    match: Match,
    seat: int | None,
    *,
    game_id: str,
    move: int,
    seats: Sequence[SeatInfo],
    deadline: float | None = None,
) -> dict[str, Any]:
    """:func:`seat_view` of ``match.view(seat)`` with the match's public extras."""
    table = TableInfo(
        game_id=game_id,
        move=move,
        seats=tuple(seats),
        deadline=deadline,
        winner=match.winner,
        history=tuple(match.history),
    )
    return seat_view(match.view(seat), table)
