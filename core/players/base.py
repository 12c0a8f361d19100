"""The one small interface every computer player implements.

A player sees only its seat's :class:`~core.match.SeatView` and returns an action.
Each phase has its own method so a player can override just the decisions it is
good at; the defaults pick uniformly at random among the legal actions.
"""

from __future__ import annotations

import random

from ..actions import Action, Bid, ChooseTrump, DeclareBlind, Discard, Draw, Exchange, PlayCard
from ..match import Phase, SeatView

__all__ = ["ComputerPlayer"]


class ComputerPlayer:
    """Base class: ``act(view)`` dispatches on the phase."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, view: SeatView) -> Action:
        if view.seat is None or view.turn != view.seat or not view.legal:
            raise ValueError("it is not this player's turn")
        phase = view.phase
        if phase is Phase.PLAY:
            return PlayCard(self.choose_card(view))
        if phase is Phase.TRUMP:
            return ChooseTrump(self.choose_trump(view))
        if phase is Phase.DISCARD:
            return Discard(self.choose_discards(view))
        if phase is Phase.DRAW:
            return Draw(self.choose_keep(view))
        if phase is Phase.BLIND:
            return DeclareBlind(self.choose_blind(view))
        if phase is Phase.EXCHANGE:
            return Exchange(self.choose_exchange(view))
        if phase is Phase.BID:
            return Bid(self.choose_bid(view))
        raise ValueError(f"nothing to decide in phase {phase}")

    # The decisions. Each receives a view in which it is this seat's turn.

    def choose_card(self, view: SeatView):
        return self.rng.choice([a.card for a in view.legal if isinstance(a, PlayCard)])

    def choose_trump(self, view: SeatView):
        return self.rng.choice([a.suit for a in view.legal if isinstance(a, ChooseTrump)])

    def choose_discards(self, view: SeatView):
        return tuple(self.rng.sample(view.hand, 2))

    def choose_keep(self, view: SeatView) -> bool:
        return self.rng.random() < 0.5

    def choose_blind(self, view: SeatView) -> bool:
        return False

    def choose_exchange(self, view: SeatView):
        return ()

    def choose_bid(self, view: SeatView) -> int:
        return self.rng.randint(1, 13)


class RandomPlayer(ComputerPlayer):
    """Plays a uniformly random legal card; the baseline every other player must beat."""

    name = "random"
