"""Computer players. ``make_player(level)`` builds one by its lobby level name."""

from .base import ComputerPlayer, RandomPlayer

__all__ = ["ComputerPlayer", "RandomPlayer"]
