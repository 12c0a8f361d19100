"""How updates are run: concurrently, a few at a time, button presses first.

Game changes are serialized per game by the service's locks, so different groups
never wait for each other. At most ``workers`` updates are handled at once; when
more arrive than that (the bot is behind, or comes back to a backlog), the waiting
ones are started in this order: button presses, oldest first, then everything else,
oldest first. A person waiting on a button spinner (Telegram gives up after about 15
seconds) is served before a text, a command or an inline query, and a stale press is
answered cheaply (see ``GameService.act``) instead of queueing behind slower work.

The in-flight count lets a shutdown (or a test) wait until every update received has
been fully handled. A test rig that runs the bot in another process cannot see that
count, and seeing an update fetched tells it nothing about its handling: with
``progress_file`` (``HOKM_PROGRESS_FILE``) the processor writes, each time it goes
idle, its process id and the highest update id it has handled.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

__all__ = ["TrackingUpdateProcessor"]

#: PTB's own limit, set high: updates wait in our ordered queue, not in its FIFO.
_UNBOUNDED = 1_000_000

#: Lower runs first.
PRESS, OTHER = 0, 1


def priority(update: object) -> int:
    if isinstance(update, Update) and update.callback_query is not None:
        return PRESS
    return OTHER


class TrackingUpdateProcessor(BaseUpdateProcessor):
    def __init__(self, workers: int = 16, progress_file: str | None = None) -> None:
        super().__init__(_UNBOUNDED)
        self.workers = workers
        self.progress_file = progress_file
        #: The highest update id fully handled (0: none yet).
        self.handled_upto = 0
        #: Updates received and not yet fully handled (waiting or running).
        self.in_flight = 0
        #: Updates being handled right now.
        self.running = 0
        #: Updates fully handled so far (a progress count for waits in tests).
        self.processed = 0
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        self.in_flight += 1
        self._idle.clear()
        try:
            await self._slot(update)
            try:
                await coroutine
            finally:
                self.running -= 1
                self._next()
        finally:
            self.in_flight -= 1
            self.processed += 1
            update_id = getattr(update, "update_id", None)
            if isinstance(update_id, int) and update_id > self.handled_upto:
                self.handled_upto = update_id
            if self.in_flight == 0:
                self._idle.set()
                if self.progress_file:
                    self._write_progress(self.progress_file)

    async def _slot(self, update: object) -> None:
        if self.running < self.workers and not self._waiting:
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (priority(update), next(self._order), turn))
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.running -= 1  # it had been given a slot: pass it on
                self._next()
            raise

    def _next(self) -> None:
        while self._waiting and self.running < self.workers:
            _, _, turn = heapq.heappop(self._waiting)
            if not turn.done():
                self.running += 1
                turn.set_result(None)

    def _write_progress(self, path: str) -> None:
        # Written whole and renamed into place, so a reader never sees half a line.
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(f"{os.getpid()} {self.handled_upto}\n")
        os.replace(tmp, path)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass
