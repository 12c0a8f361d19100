"""The bot's update queue, with getUpdates semantics and real long polling."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from testkit.emulator.errors import conflict

__all__ = ["DEFAULT_EXCLUDED", "UpdateQueue"]

#: Update kinds Telegram does not send unless ``allowed_updates`` asks for them.
DEFAULT_EXCLUDED = frozenset({"chat_member", "message_reaction", "message_reaction_count"})

JSON = dict[str, Any]


class UpdateQueue:
    """Updates waiting for the bot, numbered from 1.

    An update stays queued until the bot confirms it (a later ``offset``); it counts
    as *fetched* as soon as one getUpdates response (or webhook delivery) carried it.
    """

    def __init__(self) -> None:
        self._queue: list[JSON] = []
        self._next_id = 1
        self._fetched_upto = 0
        self._poller = 0  # generation of the newest getUpdates request
        self._wakeup = asyncio.Event()
        self.allowed_updates: list[str] = []
        #: Updates dropped because ``allowed_updates`` excluded their kind.
        self.filtered: list[JSON] = []
        #: Loop time of the last delivery (used by ``settle``).
        self.last_delivery = 0.0
        self.closed = False

    # producing -----------------------------------------------------------------

    def push(self, kind: str, payload: JSON) -> int | None:
        """Queue an update; returns its id, or ``None`` if ``allowed_updates`` drops it."""
        update_id = self._next_id
        self._next_id += 1
        update = {"update_id": update_id, kind: payload}
        if not self._allowed(kind):
            self.filtered.append(update)
            return None
        self._queue.append(update)
        self.notify()
        return update_id

    def _allowed(self, kind: str) -> bool:
        if self.allowed_updates:
            return kind in self.allowed_updates
        return kind not in DEFAULT_EXCLUDED

    def notify(self) -> None:
        """Wake everything waiting on the queue (long polls, webhook delivery)."""
        self._wakeup.set()
        self._wakeup = asyncio.Event()

    def close(self) -> None:
        """Release every waiting long poll (server shutdown)."""
        self.closed = True
        self.notify()

    # consuming -------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Updates not yet confirmed by the bot."""
        return len(self._queue)

    @property
    def undelivered(self) -> int:
        """Updates no getUpdates response (nor webhook call) has carried yet."""
        return sum(1 for u in self._queue if u["update_id"] > self._fetched_upto)

    def confirm(self, offset: int) -> None:
        """Forget updates before ``offset``; a negative offset keeps only the last ``-offset``."""
        if offset < 0:
            del self._queue[: max(len(self._queue) + offset, 0)]
        elif offset > 0:
            self._queue = [u for u in self._queue if u["update_id"] >= offset]

    def drop_all(self) -> None:
        """Forget every pending update (``drop_pending_updates``)."""
        self._queue.clear()

    def peek(self, limit: int = 100) -> list[JSON]:
        return self._queue[:limit]

    def mark_fetched(self, updates: Sequence[JSON]) -> None:
        if updates:
            self._fetched_upto = max(self._fetched_upto, updates[-1]["update_id"])
            self.last_delivery = asyncio.get_running_loop().time()

    async def get(
        self,
        offset: int | None = None,
        limit: int = 100,
        timeout: float = 0,
    ) -> list[JSON]:
        """getUpdates: confirm up to ``offset``, then wait up to ``timeout`` for updates.

        A newer call ends a waiting older one with 409 Conflict, as on Telegram. The
        caller reports a successful delivery with :meth:`mark_fetched`.
        """
        if offset is not None:
            self.confirm(offset)
        self._poller += 1
        generation = self._poller
        self.notify()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self._queue and not self.closed:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            wakeup = self._wakeup
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wakeup.wait(), remaining)
            if generation != self._poller:
                raise conflict(
                    "terminated by other getUpdates request; "
                    "make sure that only one bot instance is running"
                )
        return self._queue[:limit]

    async def wait_change(self) -> None:
        """Wait until the queue or its settings change (webhook delivery)."""
        if not self.closed:
            await self._wakeup.wait()
