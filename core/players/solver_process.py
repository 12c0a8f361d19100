"""A double-dummy solver in a child process, for the solves that may run long.

The solver thread (:mod:`.solver`) cannot stop a solve: one its decision gave up on
runs to its end for nothing, and 52-card solves have a tail of seconds (at 0.125 s
a decision, such solves were 15% of hard's CPU over 24 deals, one of them 1.7 s).
A child process can be stopped: a solve still running when its decision gives up is
killed with its child, and the next child is started at once, so that it is ready
for the next solve. A killed child cost about 25 ms of CPU to replace.

Each solve costs a pipe's round trip more than in the thread (tens of µs), so only
the large ones are sent here (:data:`.hard_settings.HardSettings.kill_solves_from`).
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import dds_child

__all__ = ["SolverProcess"]

_SCRIPT = Path(dds_child.__file__).resolve()
_ANSWER = dds_child.ANSWER.size + ctypes.sizeof(dds_child.FutureTricks)


class SolverProcess:
    """One child that solves one deal at a time: :meth:`solve` waits for its answer
    until a deadline, then kills it. Callers take turns (:attr:`lock`)."""

    def __init__(self, library: str) -> None:
        self.library = library
        #: Held by the caller for a whole solve.
        self.lock = threading.Lock()
        self._child: subprocess.Popen | None = None
        self._owner = os.getpid()
        #: CPU seconds of the children: the killed ones' (from the kernel), and the
        #: living one's as it last reported.
        self._dead_cpu = 0.0
        self._live_cpu = 0.0
        #: Solves answered, children killed with a solve, children that died by
        #: themselves.
        self.solved = self.killed = self.died = 0

    def start(self) -> None:
        """Start the child now, if none is running (its start is then not paid for
        by the first solve's clock)."""
        if self._child is None:
            self._owner = os.getpid()
            self._child = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_SCRIPT), self.library],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
            )
            self._live_cpu = 0.0

    def solve(self, deal: ctypes.Structure, target: int, solutions: int, fut, until: float) -> bool:
        """``SolveBoard(deal, target, solutions, mode 1)`` into ``fut``; False if the
        answer had not come by ``until`` (a ``time.perf_counter()`` time): the solve
        is then killed. Raises RuntimeError if DDS reports an error."""
        self.start()
        child = self._child
        assert child is not None and child.stdin is not None and child.stdout is not None
        request = dds_child.REQUEST.pack(target, solutions) + bytes(deal)
        try:
            child.stdin.write(request)
        except BrokenPipeError:
            self._lost(child)
            return False
        out = child.stdout.fileno()
        answer = b""
        while len(answer) < _ANSWER:
            wait = until - time.perf_counter()
            if wait <= 0 or not select.select([out], [], [], wait)[0]:
                self._kill(child)
                return False
            chunk = os.read(out, _ANSWER - len(answer))
            if not chunk:
                self._lost(child)
                return False
            answer += chunk
        code, self._live_cpu = dds_child.ANSWER.unpack_from(answer)
        ctypes.memmove(ctypes.addressof(fut), answer[dds_child.ANSWER.size :], ctypes.sizeof(fut))
        if code != 1:
            raise RuntimeError(f"DDS error {code}")
        self.solved += 1
        return True

    def cpu(self) -> float:
        """CPU seconds spent by this solver's children so far (the living one's up
        to its last answer)."""
        return self._dead_cpu + self._live_cpu

    def pid(self) -> int | None:
        """The living child's process id (None if none is running)."""
        return None if self._child is None else self._child.pid

    def close(self) -> None:
        """Stop the child (at exit: it would otherwise finish its solve first); in a
        forked copy of its parent, leave it to the parent."""
        child = self._child
        if child is not None and os.getpid() == self._owner:
            child.send_signal(signal.SIGKILL)
            self._reap(child)

    def _kill(self, child: subprocess.Popen) -> None:
        child.send_signal(signal.SIGKILL)
        self.killed += 1
        self._reap(child)
        self.start()  # the next child gets ready while the decision goes on

    def _lost(self, child: subprocess.Popen) -> None:
        self.died += 1
        self._reap(child)

    def _reap(self, child: subprocess.Popen) -> None:
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = -1  # reaped here; Popen must not wait for it again
        self._dead_cpu += usage.ru_utime + usage.ru_stime
        self._live_cpu = 0.0
        self._child = None
