"""A bare rule set, kept only as a yardstick for the arena (not a lobby level).

Issue 4 measures the normal player against "a bare rule set, lowest winning card and
no overtaking of the partner", which wins about 77% of 4-player hands against
random. This is that set: win a trick with the lowest winning card, never overtake a
partner who is already winning, and otherwise, and to lead, play the cheapest card
(78.3% against random here). Measuring the search player against it as well as
against our stronger normal player tells how much of a gap is the search and how
much the opponent. Trump choice, 2-player draws and bids are the normal player's.
"""

from __future__ import annotations

from ..cards import Card
from ..match import SeatView
from ..trick import trick_winner, winning_index
from .rules import RulePlayer

__all__ = ["BarePlayer"]


def _low(cards: list[Card], trump: int | None) -> Card:
    """The cheapest card: the lowest non-trump, else the lowest trump."""
    return min(cards, key=lambda c: (c // 13 == trump, c % 13, c))


class BarePlayer(RulePlayer):
    """Lowest winning card, no overtaking of the partner, else (and to lead) the
    cheapest card."""

    name = "bare"

    def choose_card(self, view: SeatView) -> Card:
        legal = [a.card for a in view.legal]  # type: ignore[union-attr]
        trump = None if view.trump is None else int(view.trump)
        me = view.seat
        assert me is not None
        if not view.trick:
            return _low(legal, trump)
        taking = trick_winner(view.trick, trump)
        partner_wins = view.variant.players == 4 and taking % 2 == me % 2
        if partner_wins:
            return _low(legal, trump)
        played = [c for _, c in view.trick]
        winners = [c for c in legal if winning_index([*played, c], trump) == len(played)]
        if winners:
            return _low(winners, trump)
        return _low(legal, trump)
