"""Computer players that search think in worker processes, off the event loop.

The hard player's search is Python: in a thread it would hold the GIL and slow every
table of the process. Here it runs in a small pool of processes at a lower CPU
priority, so the bot keeps answering presses while computers think. Players keep no
state between moves (each move is decided from the seat's view alone), so any
worker can take any move.

    thinkers = Thinkers(processes=2)        # at start; worker processes come lazily
    action = await thinkers.act("hard", 1.0, match.view(seat))
    await thinkers.shutdown()               # at stop

A finished hand's review (telegram_bot.service.review), a few dozen double-dummy solves, runs
in the same pool: ``await thinkers.run(review, deal, trump, plays)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from core import Action, SeatView

__all__ = ["POOLED_LEVELS", "Thinkers", "default_processes", "review"]

#: Levels whose moves go to the pool: those that search (hard) or sample playouts
#: (normal, about 25 ms a move for 4 players); easy answers in microseconds, less
#: than sending the view to another process would cost.
POOLED_LEVELS = frozenset({"hard", "normal"})

#: Workers run this much nicer than the bot, so presses are answered first.
NICENESS = 5

# One player per (level, budget) in each worker process.
_players: dict[tuple[str, float], Any] = {}


def default_processes() -> int:
    return os.cpu_count() or 1


def _start_worker(bot_pid: int) -> None:
    with contextlib.suppress(OSError):  # not permitted: think at the same priority
        os.nice(NICENESS)
    # A bot killed with SIGKILL cannot shut its pool down: its workers leave with it.
    # The bot's pid comes from the bot, not from getppid(): a worker that reaches this
    # line after its bot died has been re-parented already and would watch the wrong
    # parent for ever.
    threading.Thread(target=_exit_with_parent, args=(bot_pid,), daemon=True).start()
    import core.players.hard  # noqa: F401  (the first move should not pay the import)


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def think(level: str, time_budget: float, view: SeatView) -> tuple[Action, int]:
    """A worker's move for ``view``, and the worker's pid (for tests and logs)."""
    from core.players import make_player

    key = (level, time_budget)
    player = _players.get(key)
    if player is None:
        player = _players[key] = make_player(level, time_budget=time_budget)
    return player.act(view), os.getpid()


def review(
    deal: tuple[int, ...], trump: int, plays: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, int], tuple[int, int], tuple[tuple[int, int, int, int, int], ...]]:
    """A finished hand's double-dummy review (:func:`core.review.review_hand`, up to
    one solve per card played) as plain numbers: par and taken per side, and each
    costly play as (trick, seat, card played, best card, tricks lost)."""
    from core.review import review_hand

    r = review_hand(deal, trump, plays)
    costly = tuple((p.trick, p.seat, int(p.played), int(p.best), p.lost) for p in r.costly)
    return r.par, r.taken, costly


class Thinkers:
    """A process pool for computer moves; ``processes=0`` thinks in a thread instead."""

    def __init__(self, processes: int | None = None, worker: Any = think) -> None:
        self.processes = default_processes() if processes is None else max(0, processes)
        self._worker = worker
        self._pool: ProcessPoolExecutor | None = None
        if self.processes:
            # Spawned, not forked: the bot process has threads and a running loop.
            self._pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(os.getpid(),),
            )
        #: The pids of the processes that computed moves (the bot's own if in a thread).
        self.worker_pids: set[int] = set()

    async def act(self, level: str, time_budget: float, view: SeatView) -> Action:
        if self._pool is None:
            action, pid = await asyncio.to_thread(self._worker, level, time_budget, view)
        else:
            loop = asyncio.get_running_loop()
            action, pid = await loop.run_in_executor(
                self._pool, self._worker, level, time_budget, view
            )
        self.worker_pids.add(pid)
        return action

    async def run(self, fn: Any, *args: Any) -> Any:
        """Another CPU-heavy call (a module-level function, such as :func:`review`) in a
        worker, or in a thread without a pool: never on the event loop."""
        if self._pool is None:
            return await asyncio.to_thread(fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def shutdown(self) -> None:
        """Stop the workers; a move being searched finishes first (within its budget)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
