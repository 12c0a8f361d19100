"""Models of how a seat plays, for the searches' playouts, their inference and the
card that wins ties: the rules, the rules with normal's corrections to following,
or (a diagnostic) the arena's yardstick itself."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from ..cards import Card
from .normal import NormalPlayer
from .rules import PlayState, rule_card
from .yardstick import _Seat

__all__ = ["CORRECTED", "policy", "yardstick_card"]

#: normal's corrected following rules, without its look-ahead.
CORRECTED = NormalPlayer(seed=0)
CORRECTED.samples = 0


def yardstick_card(st: PlayState) -> Card:
    """The card the yardstick (:mod:`.yardstick`) plays in ``st``: an exact model of
    the arena's opponent, so that inference with it (``inference_policy=2``) shows
    what knowing how the opponents play is worth. A diagnostic, never a level's
    setting: people do not play like the yardstick. ``st.leads`` must be set (the
    yardstick reads the leads of the tricks before)."""
    if not st.legal & (st.legal - 1):
        return st.legal.bit_length() - 1
    seat = _Seat.__new__(_Seat)
    seat.view = SimpleNamespace(
        hakem=st.hakem, tricks=[SimpleNamespace(plays=(lead,)) for lead in st.leads]
    )
    seat.n = st.n
    seat.seat = st.seat
    seat.hand = st.hand
    seat.legal = st.legal
    seat.unseen = st.unseen
    seat.voids = st.voids
    seat.trump = st.trump
    seat.partner = (st.seat + 2) % 4 if st.n == 4 else None
    seat.opponents = [s for s in range(st.n) if s != st.seat and s != seat.partner]
    seat.trick = list(st.trick)
    return seat.follow() if st.trick else seat.lead()


def policy(model: int) -> Callable[[PlayState], Card]:
    """The model a setting chooses: 0 the rules, 1 the corrected rules, 2 the
    yardstick (a diagnostic: :func:`yardstick_card`)."""
    if model == 2:
        return yardstick_card
    return CORRECTED.card if model else rule_card
