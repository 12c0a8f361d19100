"""An arena yardstick that cheats: it is shown every hand and plays double dummy.

It is never offered at a table (not in :data:`.LEVELS`); the arena seats it with
``--a oracle`` and hands it the real match before each of its decisions
(:meth:`OraclePlayer.see`). What it wins against a level is about what *knowing*
the other hands is worth against that level: an honest player, who has to guess
them, should not expect to come near it. The trump choice is the rules' (when trump
is named most of the deal is still in the stock), and the 4-player classic game
only: elsewhere it plays by the rules.
"""

from __future__ import annotations

from ..cards import Card
from ..match import Match, SeatView
from ..variant import Kind
from .double_dummy import dds_card_tricks
from .rules import RulePlayer

__all__ = ["OraclePlayer"]


class OraclePlayer(RulePlayer):
    """Double dummy on the real deal (4-player classic card play)."""

    name = "oracle"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._match: Match | None = None

    def see(self, match: Match) -> None:
        """The real match, before a decision (the arena's hook)."""
        self._match = match

    def choose_card(self, view: SeatView) -> Card:
        m = self._match
        legal = [a.card for a in view.legal]  # type: ignore[union-attr]
        if m is None or view.variant.players != 4 or view.variant.kind is not Kind.CLASSIC:
            return super().choose_card(view)
        if len(legal) == 1:
            return legal[0]
        leader = view.trick[0][0] if view.trick else view.seat
        tricks = dds_card_tricks(list(m.hands), view.trick, leader, int(view.trump))  # type: ignore[arg-type]
        # The most tricks for our side; among equals the lowest card.
        return max(legal, key=lambda c: (tricks.get(c, -1), -(c % 13), -c))
