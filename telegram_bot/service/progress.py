"""How far each game in progress is, as last seen stored: a press on a button known
to be outdated is refused at once, without waiting for the game's lock."""

from __future__ import annotations

from core import Match
from telegram_bot.chat.i18n import Translator
from telegram_bot.platform.storage.models import Game
from telegram_bot.service.answer import Answer

__all__ = ["Progress"]


class Progress:
    def __init__(self) -> None:
        #: game in progress -> (move, hand number) as last seen stored.
        self._seen: dict[str, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def note(self, game: Game, match: Match | None) -> None:
        """Remember how far a game in progress is, as stored (moves and hands only go
        forward, so an old note is safe: it only refuses less). A game that is over
        is forgotten: its presses are refused from the database, under a free lock."""
        if game.status != "playing" or match is None or match.is_over:
            self._seen.pop(game.id, None)
            return
        old = self._seen.get(game.id, (0, 0))
        self._seen[game.id] = (max(old[0], game.move), max(old[1], match.hand_no))

    def stale(self, game_id: str, move: int | None, by_hand: bool, tr: Translator) -> Answer | None:
        """The refusal for a press on a button already known to be outdated."""
        known = self._seen.get(game_id)
        if known is None or move is None:
            return None
        current_move, hand_no = known
        if move < (hand_no if by_hand else current_move):
            return Answer(tr("This button belongs to an earlier hand"), alert=True)
        return None
