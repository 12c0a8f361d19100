"""Who sits where: a game row's seats (by lobby index) and the match's seats (by
playing order)."""

from __future__ import annotations

from typing import Any

from core import Match
from telegram_bot.platform.storage.models import Game

__all__ = ["human_seat", "seat_of"]


def seat_of(game: Game, match: Match, user_id: int) -> int | None:
    """The match seat of ``user_id`` in ``game`` (None: not playing in it)."""
    for seat in range(match.n):
        if game.seats[match.order[seat]].get("user_id") == user_id:
            return seat
    return None


def human_seat(user: Any) -> dict[str, Any]:
    """A person's fresh seat in the game row."""
    return {"user_id": user.id, "name": user.first_name, "away": False, "timeouts": 0}
