"""Games over whose last rows are still going out.

A game over is forgotten (what its messages show, which messages its slots name) so
that nothing is kept per game played; but not before its last rows are out and what
they show is noted, or a batch still carrying one out would note it again after the
forgetting, and it would be kept for good.
"""

from __future__ import annotations

from collections.abc import Iterable

from telegram_bot.platform.outbox.memory import Memory
from telegram_bot.platform.outbox.rows import _Batch, _game_of

__all__ = ["Endings"]


class Endings:
    """Game id -> the ids of its rows still waiting; and the batches being carried
    out (what they noted is not written yet)."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._ending: dict[str, set[int]] = {}
        self._batches: set[_Batch] = set()

    def game_over(self, game_id: str, waiting: set[int]) -> None:
        self._ending[game_id] = waiting
        self.drop_ended()

    def rows_gone(self, ids: Iterable[int]) -> None:
        """Rows done with or deleted (the games are dropped at the next flush, after
        what their last rows show was noted)."""
        if self._ending:
            for waiting in self._ending.values():
                waiting.difference_update(ids)

    def carrying(self, batch: _Batch) -> None:
        self._batches.add(batch)

    def carried(self, batch: _Batch) -> None:
        self._batches.discard(batch)
        self.drop_ended()

    def drop_ended(self) -> None:
        """Forget the games over whose rows are all out and noted."""
        if not self._ending:
            return
        noting = {_game_of(t.partition("/")[2]) for b in self._batches for t, _ in b.shown_now}
        for game_id in [g for g, rows in self._ending.items() if not rows and g not in noting]:
            del self._ending[game_id]
            self._memory.forget_game(game_id)

    def sizes(self) -> dict[str, int]:
        return {"ending": len(self._ending), "batches": len(self._batches)}
