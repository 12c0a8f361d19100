"""CPU burners: processes that keep cores busy, to measure players under load.

A bot shares its machine with other work; a player's clock has to hold when the
cores are busy too. ``with Burner(n):`` keeps ``n`` processes spinning for the
duration of the block and stops them (by their own handles) when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["Burner", "default_burners"]


# A bare interpreter (not a multiprocessing child, which would import the
# caller's main module again).
_SPIN = "x = 1\nwhile True:\n    x = (x * 1103515245 + 12345) & 0xFFFFFFFF\n"


def default_burners(jobs: int = 1) -> int:
    """Enough burners to keep every core busy next to ``jobs`` worker processes."""
    return max(1, (os.cpu_count() or 2) - jobs)


class Burner:
    """``n`` spinning processes, started on entry and terminated on exit."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._procs: list[subprocess.Popen] = []

    def __enter__(self) -> Burner:
        for _ in range(self.n):
            self._procs.append(subprocess.Popen([sys.executable, "-c", _SPIN]))
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self._procs:
            p.terminate()
        for p in self._procs:
            p.wait()
        self._procs.clear()

    @property
    def running(self) -> int:
        return sum(1 for p in self._procs if p.poll() is None)
