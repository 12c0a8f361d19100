"""How updates are run: concurrently across chats, with a count of those in flight.

Game changes are serialized per game by the service's locks, so different groups
never wait for each other. The in-flight count lets a shutdown (or a test) wait
until every update received has been fully handled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram.ext import BaseUpdateProcessor

__all__ = ["TrackingUpdateProcessor"]


class TrackingUpdateProcessor(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int = 64) -> None:
        super().__init__(max_concurrent_updates)
        self.in_flight = 0
        #: Updates fully handled so far (a progress count for waits in tests).
        self.processed = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        self.in_flight += 1
        self._idle.clear()
        try:
            await coroutine
        finally:
            self.in_flight -= 1
            self.processed += 1
            if self.in_flight == 0:
                self._idle.set()

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass
