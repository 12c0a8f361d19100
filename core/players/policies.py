"""Models of how a seat plays, for the searches' playouts, their inference and the
card that wins ties: the rules, or the rules with normal's corrections to following."""

from __future__ import annotations

from collections.abc import Callable

from ..cards import Card
from .normal import NormalPlayer
from .rules import PlayState, rule_card

__all__ = ["CORRECTED", "policy"]

#: normal's corrected following rules, without its look-ahead.
CORRECTED = NormalPlayer(seed=0)
CORRECTED.samples = 0


def policy(corrected: int) -> Callable[[PlayState], Card]:
    """The model a setting chooses: 0 the rules, 1 the corrected rules."""
    return CORRECTED.card if corrected else rule_card
