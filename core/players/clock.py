"""The clock of a thinking player: one decision's budget, and what steps cost.

A search runs until its time is spent, but some of its steps cannot be stopped
once started: a double-dummy solve is one call into C that takes from 0.1 ms to
over a second (52-card deals have a very long tail). So each step is started only
when its *typical* cost (the 90th percentile of recent steps of its kind in this
process) still fits before the budget runs out; a solve that then overruns is left
behind at ``give_up`` (see :mod:`.solver`), so one slow solve cannot hold a
decision much past its budget.

Costs are measured in wall-clock time, so on a busy machine they grow and the
player starts fewer steps by itself.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

__all__ = ["Clock", "CostTable", "OutOfTime"]


class OutOfTime(Exception):
    """A step would not fit in what is left of the decision's time."""


class Clock:
    """One decision's time: its ``budget`` from now (or from ``start``)."""

    __slots__ = ("budget", "deadline", "give_up", "patience", "start")

    def __init__(self, budget: float, give_up: float = 1.1, start: float | None = None) -> None:
        self.start = time.perf_counter() if start is None else start
        self.budget = budget
        self.deadline = self.start + budget
        #: A step that runs aside (a solve) is waited for until this many budgets...
        self.patience = give_up
        #: ... from the start, then left.
        self.give_up = self.start + give_up * budget

    def part(self, share: float) -> Clock:
        """The same decision held to ``share`` of its budget (from the same start)."""
        return Clock(self.budget * share, self.patience, self.start)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def fits(self, cost: float) -> bool:
        """Whether a step of this typical cost can still be started."""
        return time.perf_counter() + cost <= self.deadline

    def check(self, cost: float) -> None:
        if not self.fits(cost):
            raise OutOfTime


class CostTable:
    """Recent costs of steps by kind, with a prior for kinds seen too rarely.

    Shared by every player of the process (costs depend on the machine, not on the
    player); ``record`` may be called from several threads.
    """

    def __init__(
        self,
        prior: Callable[[Hashable], float],
        quantile: float = 0.9,
        window: int = 512,
        trust: int = 32,
    ) -> None:
        self._prior = prior
        self._quantile = quantile
        self._window = window
        self._trust = trust
        self._seen: dict[Hashable, deque[float]] = {}
        self._cache: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def estimate(self, key: Hashable) -> float:
        """Typical seconds for a step of kind ``key``: the prior until ``trust``
        steps were seen, then the quantile of the recent ones."""
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        with self._lock:
            seen = sorted(self._seen.get(key, ()))
        n = len(seen)
        est = seen[min(n - 1, int(self._quantile * n))] if n >= self._trust else self._prior(key)
        self._cache[key] = est
        return est

    def record(self, key: Hashable, seconds: float) -> None:
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                seen = self._seen[key] = deque(maxlen=self._window)
            seen.append(seconds)
            n = len(seen)
        # Re-estimate on every step until the prior is dropped, then from time to
        # time (sorting the window on every call would cost more than the small
        # solves it guards).
        if n <= self._trust or n % 16 == 0:
            self._cache.pop(key, None)

    def forget(self) -> None:
        with self._lock:
            self._seen.clear()
            self._cache.clear()
