"""Computer players. ``make_player(level)`` builds one by its lobby level name.

Levels: ``"random"`` (uniform legal moves), ``"easy"`` (rules with 30% random
cards), ``"normal"`` (rule-based) and ``"hard"`` (determinized search with a
double-dummy solver for 4 players, playouts and exact endings for 2 and 3).
"""

from __future__ import annotations

from .base import ComputerPlayer, RandomPlayer
from .rules import EasyPlayer, RulePlayer

__all__ = [
    "ARENA_LEVELS",
    "LEVELS",
    "ComputerPlayer",
    "EasyPlayer",
    "RandomPlayer",
    "RulePlayer",
    "make_player",
]

#: The lobby's levels, weakest first.
LEVELS: tuple[str, ...] = ("random", "easy", "normal", "hard")
#: Every player the arena can seat: the lobby's levels and four yardsticks, "bare"
#: (the issue's bare rule set), "normal0" (the rule player as "normal" was before
#: its measured corrections, :mod:`.normal`), "yardstick" (an independent, frozen
#: rule-based player written apart from the rules, :mod:`.yardstick`) and "oracle"
#: (sees every hand, :mod:`.oracle`; the arena only); and "hard-sighted", hard shown
#: its partner's hand, its partner's honours or the opponents' hands (:mod:`.sighted`,
#: a diagnostic).
ARENA_LEVELS: tuple[str, ...] = (
    *LEVELS,
    "bare",
    "normal0",
    "yardstick",
    "oracle",
    "hard-sighted",
)


def make_player(
    level: str, seed: int | None = None, time_budget: float | None = None
) -> ComputerPlayer:
    """A computer player for ``level``; ``time_budget`` (seconds per move) is used
    by "hard" only (default 1.0)."""
    if level == "random":
        return RandomPlayer(seed)
    if level == "easy":
        return EasyPlayer(seed)
    if level == "normal":
        from .normal import NormalPlayer

        return NormalPlayer(seed)
    if level == "normal0":
        return RulePlayer(seed)
    if level == "bare":
        from .bare import BarePlayer

        return BarePlayer(seed)
    if level == "yardstick":
        from .yardstick import YardstickPlayer

        return YardstickPlayer(seed)
    if level == "oracle":
        from .oracle import OraclePlayer

        return OraclePlayer(seed)
    if level == "hard":
        from .hard import HardPlayer

        return HardPlayer(seed, time_budget=1.0 if time_budget is None else time_budget)
    if level == "hard-sighted":
        from .sighted import SightedHardPlayer

        return SightedHardPlayer(seed, time_budget=1.0 if time_budget is None else time_budget)
    raise ValueError(f"unknown level {level!r}; choose one of {', '.join(ARENA_LEVELS)}")
