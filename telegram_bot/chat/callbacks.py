"""Callback data: what an inline button carries, in at most 64 ASCII bytes.

Every button names its game and, for anything that changes a game in progress, the
move number it was drawn for: ``k:k3f9ab:57:1`` keeps the top stock card in game
``k3f9ab`` if the game is still at move 57. Card buttons carry the hand number
instead (``p:k3f9ab:3:AS``): the engine itself refuses a card out of turn or not in
hand, so a hand keyboard needs no edit each time someone else plays. A press whose
game, move or hand is not the current one is stale and changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_BYTES", "Callback", "MalformedCallback", "decode", "encode"]

MAX_BYTES = 64

#: Known actions and what they mean.
ACTIONS = {
    # lobby (no move number: the lobby is not a move sequence)
    "j": "join",
    "l": "leave",
    "b": "add computer",
    "s": "start",
    "c": "cancel",
    "o": "settings menu / set an option (arg: name=value)",
    # game in progress (move number required)
    "t": "choose trump (arg: suit letter)",
    "p": "play a card (arg: card; the number is the hand, not the move)",
    "d": "select a discard (arg: selected cards, then the card pressed)",
    "k": "draw: keep (arg 1) or discard (arg 0)",
    "n": "blind nil (arg 1) or look at the cards (arg 0)",
    "x": "exchange selection (arg: selected cards, then the card pressed or '!' to confirm)",
    "v": "bid (arg: tricks)",
    "r": "I'm back",
    "g": "language (arg: fa/en), for a user or a group",
    "m": "rematch: a new game with a finished match's seats and settings",
    "e": "end the game: confirm (arg 1) or keep playing (arg 0)",
    "w": "take over a computer's or away player's seat (arg: its lobby index)",
    "h": "hint: the card the hard computer player would play (solo tables, if on)",
    "y": "review a finished hand, in private (the number is the hand)",
    "q": "play with anyone: ask which game (a; s: after ending solo match <game>), queue (4/3/2), "
    "leave (0), computers now (c)",
    "z": "a preset reaction at an online table (arg: its number)",
}

_GAME_ID = re.compile(r"[a-z0-9]{1,12}")
_ARG = re.compile(r"[A-Za-z0-9.=!_-]*")


class MalformedCallback(ValueError):
    """Data that no button of this bot produces."""


@dataclass(frozen=True, slots=True)
class Callback:
    action: str
    game_id: str
    move: int | None = None
    arg: str = ""


def encode(action: str, game_id: str, move: int | None = None, arg: str = "") -> str:
    if action not in ACTIONS:
        raise ValueError(f"unknown callback action {action!r}")
    parts = [action, game_id, "" if move is None else str(move), arg]
    data = ":".join(parts).rstrip(":")
    if len(data.encode()) > MAX_BYTES:
        raise ValueError(f"callback data over {MAX_BYTES} bytes: {data!r}")
    return data


def decode(data: str | None) -> Callback:
    """The button a press names, or :class:`MalformedCallback` for anything else
    (forged data may hold any characters, lone surrogates included)."""
    if not data or not data.isascii() or len(data) > MAX_BYTES:
        raise MalformedCallback(data)
    parts = data.split(":")
    if len(parts) > 4:
        raise MalformedCallback(data)
    parts += [""] * (4 - len(parts))
    action, game_id, move, arg = parts
    if action not in ACTIONS or not _ARG.fullmatch(arg):
        raise MalformedCallback(data)
    if action not in ("g", "q") and not _GAME_ID.fullmatch(game_id):
        raise MalformedCallback(data)
    if move and not (move.isdigit() and len(move) <= 9):
        raise MalformedCallback(data)
    return Callback(action, game_id, int(move) if move else None, arg)
