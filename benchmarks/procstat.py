"""What the kernel says about a process: CPU time and resident memory, from /proc.

Only Linux. CPU time is counted for a process and, separately, for its descendants
(a pool of thinking processes belongs to the bot), so one figure per process tree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Sample", "cpu_seconds", "descendants", "load_average", "rss_bytes", "sample"]

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process (its threads included), 0 if gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = raw[raw.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def rss_bytes(pid: int) -> int:
    """Resident set size of one process, 0 if gone."""
    try:
        pages = Path(f"/proc/{pid}/statm").read_text().split()[1]
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(pages) * _PAGE


def descendants(pid: int) -> list[int]:
    """Every living descendant of a process (children of all its threads)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                kids = Path(f"/proc/{parent}/task/{tid}/children").read_text().split()
            except FileNotFoundError:
                continue
            for kid in map(int, kids):
                out.append(kid)
                todo.append(kid)
    return out


def load_average() -> tuple[float, float, float]:
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return float(one), float(five), float(fifteen)


@dataclass(frozen=True)
class Sample:
    """One reading of a process tree. ``children_cpu`` sums the descendants alive now:
    a descendant that exits between two samples takes its time with it, so pools
    should live as long as the measurement."""

    cpu: float
    children_cpu: float
    rss: int
    children_rss: int


def sample(pid: int) -> Sample:
    kids = descendants(pid)
    return Sample(
        cpu=cpu_seconds(pid),
        children_cpu=sum(cpu_seconds(k) for k in kids),
        rss=rss_bytes(pid),
        children_rss=sum(rss_bytes(k) for k in kids),
    )
