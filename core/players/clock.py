"""The clock of a thinking player: one decision's budget, and what steps cost.

A search runs until its time is spent, but some of its steps cannot be stopped
once started: a double-dummy solve is one call into C that takes from 0.1 ms to
over a second (52-card deals have a very long tail). So each such step is started
only when it fits, judged by what steps of its kind have cost in this process:

* its *typical* cost (the 95th percentile of recent calls) must fit before the
  budget runs out, so a decision ends near its budget;
* its *worst* cost (the slowest recent call) must fit before a hard limit (1.9 times
  the budget), so that a decision never takes twice its budget.

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
    """One decision's time: its ``budget`` from now, and a hard limit beyond it."""

    __slots__ = ("budget", "deadline", "limit", "start")

    def __init__(self, budget: float, hard_factor: float = 1.9) -> None:
        self.start = time.perf_counter()
        self.budget = budget
        self.deadline = self.start + budget
        self.limit = self.start + hard_factor * budget

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def fits(self, typical: float, worst: float = 0.0) -> bool:
        """Whether a step of this typical and worst cost can still be started."""
        now = time.perf_counter()
        return now + typical <= self.deadline and now + worst <= self.limit

    def check(self, typical: float, worst: float = 0.0) -> None:
        if not self.fits(typical, worst):
            raise OutOfTime


class CostTable:
    """Recent costs of steps by kind, with a prior for kinds seen too rarely.

    Shared by every player of the process (costs depend on the machine, not on the
    player); ``record`` may be called from several threads.
    """

    def __init__(
        self,
        prior: Callable[[Hashable], tuple[float, float]],
        window: int = 512,
        trust: int = 32,
        trust_worst: int = 256,
    ) -> None:
        self._prior = prior
        self._window = window
        self._trust = trust
        self._trust_worst = trust_worst
        self._seen: dict[Hashable, deque[float]] = {}
        self._cache: dict[Hashable, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def estimate(self, key: Hashable) -> tuple[float, float]:
        """(typical, worst) seconds for a step of kind ``key``."""
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        typical, worst = self._prior(key)
        with self._lock:
            seen = sorted(self._seen.get(key, ()))
        n = len(seen)
        if n >= self._trust:
            typical = seen[min(n - 1, int(0.95 * n))]
        if n >= self._trust_worst:
            worst = seen[-1]
        elif n:
            worst = max(worst, seen[-1])
        est = (typical, max(typical, worst))
        self._cache[key] = est
        return est

    def record(self, key: Hashable, seconds: float) -> None:
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                seen = self._seen[key] = deque(maxlen=self._window)
            seen.append(seconds)
            n = len(seen)
        # Re-estimate on every step while the prior still counts, then from time
        # to time (sorting the window on every call would cost more than the small
        # solves it guards), and at once after a step slower than the worst known.
        cached = self._cache.get(key)
        if n <= self._trust_worst or n % 16 == 0 or cached is None or seconds > cached[1]:
            self._cache.pop(key, None)

    def forget(self) -> None:
        with self._lock:
            self._seen.clear()
            self._cache.clear()
