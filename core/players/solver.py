"""The double-dummy solver (DDS, from endplay), run so that a player's clock holds.

A solve is one call into C that cannot be interrupted, and its time has a long
tail (52-card deals: median 2 ms, 1 in 1,000 over a quarter second). So:

* a solve starts only if its typical cost, learnt per size in this process
  (:data:`DDS_COSTS`), fits in the decision's budget (:class:`~.clock.Clock`);
* it runs in one solver thread; the decision waits for it at most until
  ``clock.give_up`` and then goes on without it. The abandoned solve finishes in
  the background (DDS releases the GIL) and frees the solver when it is done; a
  decision that finds the solver busy waits only while a solve could still fit.

One thread also means DDS's per-thread scratch memory (thread index 0) is never
used by two solves at once, whichever threads the players think in.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import queue
import sys
import threading
import time
from types import ModuleType
from typing import TYPE_CHECKING

from ..cards import CardSet
from .clock import Clock, CostTable, OutOfTime

if TYPE_CHECKING:
    from endplay import _dds

__all__ = ["ABANDONED_COSTS", "DDS_COSTS", "dds", "solve", "wait_idle"]


@functools.cache
def dds() -> ModuleType:
    """endplay's DDS binding, loaded on first use. :class:`~.hard.HardPlayer` loads
    it when it is made, so no decision's clock pays for it.

    Only the binding (``endplay._dds``, a ctypes wrapper that imports the standard
    library alone) is loaded, not the ``endplay`` package: the package's
    ``__init__`` imports its dealer, and with it matplotlib, about a second of CPU
    that every think worker and every hint or review process paid at its start
    (35 ms for the binding alone)."""
    loaded = sys.modules.get("endplay._dds")
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("endplay")  # finds it without running __init__
    if package is None or not package.submodule_search_locations:
        raise ImportError("endplay is not installed")
    folder = os.path.join(package.submodule_search_locations[0], "_dds")
    spec = importlib.util.spec_from_file_location(
        "endplay._dds", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["endplay._dds"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["endplay._dds"]
        raise
    return module


def _dds_prior(key) -> float:
    """Typical seconds of a solve before any of its kind was timed: the 90th
    percentile measured on random deals on a quiet machine."""
    kind, tricks = key
    if kind == "count":
        return _COUNT_PRIOR.get(tricks, 0.0005)
    if kind == "edge":
        return 0.001
    return _REACH_PRIOR.get(tricks, 0.0005)


# By tricks left (cards in the longest hand). Yes/no questions ("reach") of
# targets strictly between 1 and the tricks left; "edge" targets (take one, take
# all) are much faster.
_REACH_PRIOR = {13: 0.025, 12: 0.015, 11: 0.006, 10: 0.006, 9: 0.001}
_COUNT_PRIOR = {13: 0.12, 12: 0.07, 11: 0.016, 10: 0.01, 9: 0.005, 8: 0.0035, 7: 0.002}

#: What double-dummy solves have cost in this process, by kind and size.
DDS_COSTS = CostTable(_dds_prior)
#: ... and those of them that their decision gave up on (they ran on to their end,
#: for nothing): a measurement (``benchmarks.players_cpu --split``), never asked.
ABANDONED_COSTS = CostTable(_dds_prior)


def cost_key(hands: list[CardSet], target: int) -> tuple[str, int]:
    """The kind of a solve for :data:`DDS_COSTS`: ``target`` -1 counts tricks."""
    tricks = max(h.bit_count() for h in hands)
    if target < 0:
        return ("count", tricks)
    if target <= 1 or target >= tricks:
        return ("edge", tricks)
    return ("reach", tricks)


class _Job:
    __slots__ = ("abandoned", "args", "done", "error", "key")

    def __init__(self, args: tuple, key) -> None:
        self.args = args
        self.key = key
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.abandoned = False


#: Held from a solve's submission until the solver thread has finished it (the
#: solver thread releases it, so an abandoned solve keeps the solver busy).
_BUSY = threading.Lock()
_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()


def _serve() -> None:
    while True:
        job = _jobs.get()
        try:
            t0 = time.perf_counter()
            dds().SolveBoard(*job.args, 0)
            seconds = time.perf_counter() - t0
            DDS_COSTS.record(job.key, seconds)
            if job.abandoned:
                ABANDONED_COSTS.record(job.key, seconds)
        except BaseException as e:  # handed to the waiting decision
            job.error = e
        finally:
            _BUSY.release()
            job.done.set()


@atexit.register
def _drain() -> None:
    """At exit, wait (a few seconds at most) for a solve the decision gave up on:
    DDS frees its per-thread memory when the process exits, and a solve still
    running in it then crashes the process (exit status 139 after a clean run)."""
    if _BUSY.acquire(timeout=5.0):
        _BUSY.release()


def wait_idle() -> None:
    """Return once no solve is running: one a decision gave up on runs to its end
    first (a measurement of this process's CPU should not count it)."""
    with _BUSY:
        pass


def _submit(job: _Job) -> None:
    global _thread
    if _thread is None:
        with _start_lock:
            if _thread is None:
                _thread = threading.Thread(target=_serve, name="dds-solver", daemon=True)
                _thread.start()
    _jobs.put(job)


def solve(d: _dds.deal, target: int, solutions: int, fut, key, clock: Clock | None) -> None:
    """``SolveBoard(d, target, solutions, mode 1)`` into ``fut``; with a ``clock``,
    only if it fits (else :class:`OutOfTime`, also when it is given up)."""
    job = _Job((d, target, solutions, 1, fut), key)
    if clock is None:
        _BUSY.acquire()
        _submit(job)
        job.done.wait()
    else:
        cost = DDS_COSTS.estimate(key)
        clock.check(cost)
        # The solver may be busy (another thread's solve, or an abandoned one):
        # wait only as long as a solve of this kind could still start and fit.
        wait = clock.left() - cost
        if wait <= 0 or not _BUSY.acquire(timeout=wait):
            raise OutOfTime
        if not clock.fits(cost):
            _BUSY.release()
            raise OutOfTime
        _submit(job)
        if not job.done.wait(max(0.0, clock.give_up - time.perf_counter())):
            job.abandoned = True
            raise OutOfTime  # the solver thread finishes it and frees itself
    if job.error is not None:
        raise job.error
