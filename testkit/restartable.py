"""A bot process the kill tests start, SIGKILL and start again (testkit.chaos,
testkit.fleet).

The child is ``python -m <module> <args>`` with its own environment; its output is
appended to one log file across restarts. ``start`` returns once the child is ready,
as its ``ready`` check decides for that start (a line in the log since the start, or
anything else the caller can observe, such as the emulator's calls).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "ReadyCheck",
    "Restartable",
    "cluster",
    "cluster_env",
    "log_says",
    "run_stopping_on_sigterm",
]

T = TypeVar("T")

#: Children die with the process that started them (Linux's parent-death signal, set
#: by util-linux's setpriv before it becomes the child): a rig killed or crashed leaves
#: no bot behind to poll the database and load the machine (it once did, for an hour).
_DIE_WITH_PARENT = (
    ["setpriv", "--pdeathsig", "KILL"]
    if sys.platform == "linux" and shutil.which("setpriv")
    else []
)

#: Called at each start (before the child runs): returns the test of that start.
ReadyCheck = Callable[["Restartable"], Callable[[], bool]]


def log_says(line: str) -> ReadyCheck:
    """Ready once the log shows ``line`` after this start."""

    def at_start(proc: Restartable) -> Callable[[], bool]:
        offset = proc.log_path.stat().st_size if proc.log_path.exists() else 0
        seen = b""

        def ready() -> bool:
            nonlocal offset, seen
            with open(proc.log_path, "rb") as log:
                log.seek(offset)
                new = log.read()
            offset += len(new)
            seen = (seen + new)[-(len(line) + 4096) :]
            return line.encode() in seen

        return ready

    return at_start


class Restartable:
    def __init__(
        self,
        module: str,
        args: list[str],
        env: dict[str, str],
        log_path: Path,
        ready: ReadyCheck,
        *,
        cwd: Path | None = None,
    ) -> None:
        self.module, self.args, self.env = module, args, env
        self.log_path, self.ready_check, self.cwd = log_path, ready, cwd
        self.proc: asyncio.subprocess.Process | None = None
        #: How many times it was started.
        self.starts = 0
        #: Started and ready, not being stopped.
        self.ready = False

    @property
    def name(self) -> str:
        return " ".join([self.module, *self.args])

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def local_ports(self) -> set[int]:
        """The local ports of the child's TCP sockets (Linux's /proc; empty when not
        running or unreadable): which connections, and so which calls, are its."""
        if not self.alive():
            return set()
        return tcp_ports(self.pid)  # type: ignore[arg-type]

    async def start(self) -> None:
        ready = self.ready_check(self)
        with open(self.log_path, "ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                *_DIE_WITH_PARENT,
                sys.executable,
                "-m",
                self.module,
                *self.args,
                env=self.env,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                cwd=self.cwd,
            )
        self.starts += 1
        while not ready():
            if self.proc.returncode is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode}; see {self.log_path}"
                )
            await asyncio.sleep(0.02)
        self.ready = True

    async def stop(self, sig: int = signal.SIGTERM) -> None:
        self.ready = False
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.send_signal(sig)
        await self.proc.wait()

    async def restart(self, sig: int = signal.SIGKILL) -> None:
        await self.stop(sig)
        await self.start()


def tcp_ports(pid: int) -> set[int]:
    """The local ports of process ``pid``'s TCP sockets, from /proc."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
        inodes = set()
        for fd in fds:
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        ports = set()
        for table in ("tcp", "tcp6"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/net/{table}") as f:
                next(f)  # the header
                for line in f:
                    fields = line.split()
                    if fields[9] in inodes:
                        ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        return ports
    except OSError:  # gone meanwhile
        return set()


def cluster_env(api_url: str, token: str, db_url: str, port: int, secret: str) -> dict[str, str]:
    """This process's environment with the settings every cluster of the fleet and the
    tests has: the emulator's Bot API (``api_url``, ending in /bot), the database,
    the ingress's webhook on loopback ``port``, client-side pacing and think
    processes off; callers add their own."""
    return {
        **os.environ,
        "BOT_TOKEN": token,
        "TELEGRAM_API_URL": api_url.removesuffix("/bot"),
        "DATABASE_URL": db_url,
        "WEBHOOK_URL": f"http://127.0.0.1:{port}",
        "WEBHOOK_LISTEN": "127.0.0.1",
        "WEBHOOK_PORT": str(port),
        "WEBHOOK_SECRET": secret,
        "HOKM_RATE_LIMIT": "0",
        "HOKM_THINK_PROCESSES": "0",
        "PYTHONUNBUFFERED": "1",
    }


def cluster(
    env: dict[str, str], log_dir: Path, workers: int
) -> tuple[Restartable, list[Restartable]]:
    """The webhook ingress and ``workers`` workers of ``telegram_bot.runtime.cluster``
    (not started), each logging to ``log_dir``: the fleet's and the tests' topology,
    started as docker-compose.yml starts them (``python -m telegram_bot ROLE``)."""
    ingress = Restartable(
        "telegram_bot",
        ["ingress"],
        env,
        log_dir / "ingress.log",
        log_says("ingress listening"),
    )
    procs = [
        Restartable(
            "telegram_bot",
            ["worker"],
            env,
            log_dir / f"worker{i}.log",
            log_says("worker ready"),
        )
        for i in range(workers)
    ]
    return ingress, procs


def run_stopping_on_sigterm(main: Coroutine[Any, Any, T]) -> T | None:
    """``asyncio.run(main)``, where SIGTERM (``kill``, ``timeout``) cancels ``main``
    as Ctrl-C does, so that its clean-up runs: the bots it started are stopped and
    the databases it created are dropped (killed outright, a run left its bots
    running). Returns None when stopped that way."""

    async def cancellable() -> T:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        return await main

    try:
        return asyncio.run(cancellable())
    except asyncio.CancelledError:
        print("stopped by SIGTERM", file=sys.stderr, flush=True)
        return None
