"""The bots under test, each in its own process, and the databases they use.

A bot is started with ``python -c`` in the root of a checkout, so ``telegram_bot``
is imported from that checkout (this one, or an older commit checked out with
``git worktree add`` for a same-run baseline).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

__all__ = ["ROOT", "BotProcess", "checkout", "fresh_database", "hokm_bot", "minimal_bot"]

ROOT = Path(__file__).resolve().parent.parent

# A module that is not installed costs a search of every sys.path entry and an
# ImportError each time it is imported; this finder reproduces that for sniffio when
# it is installed, so "without sniffio" can be measured in the same run.
_HIDE_SNIFFIO = """
import importlib.machinery, sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name == "sniffio" or name.startswith("sniffio."):
            importlib.machinery.PathFinder.find_spec(name, path)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Absent())
"""

_RUN_HOKM = """
import sys
from {module} import main
sys.exit(main())
"""


def _entry_module(source: Path) -> str:
    """The bot's entry module in the checkout at ``source``: it moved with the layout
    (commit ff6628a); a baseline from before the move has it at telegram_bot.app."""
    if (source / "telegram_bot" / "runtime" / "app.py").exists():
        return "telegram_bot.runtime.app"
    return "telegram_bot.app"


class BotProcess:
    """A bot running in a child process, its output in a log file."""

    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.name = name
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.log_path = Path(tempfile.mkstemp(prefix=f"bench-{name}-", suffix=".log")[1])

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self) -> None:
        log = self.log_path.open("wb")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, cwd=self.cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        finally:
            log.close()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def stop(self, timeout: float = 20.0) -> int | None:
        """Ctrl-C (the bot stops as in production), then kill if it hangs."""
        if self.proc is None or self.proc.returncode is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGINT)
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            return await self.proc.wait()

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOKM_", "DATABASE_URL"))}
    env.pop("PYTHONPATH", None)
    return env


def hokm_bot(
    name: str,
    source: Path,
    *,
    api_url: str,
    token: str,
    database_url: str,
    hide_sniffio: bool = False,
    webhook_port: int | None = None,
    extra_env: dict[str, str] | None = None,
) -> BotProcess:
    """The project's bot from the checkout at ``source``, with the rate limiter off."""
    env = _base_env()
    env.update(
        {
            "BOT_TOKEN": token,
            "TELEGRAM_API_URL": api_url,
            "DATABASE_URL": database_url,
            "HOKM_RATE_LIMIT": "0",
            "HOKM_COMPUTER_DELAY": "0",
            "HOKM_HAND_PAUSE": "0",
            "PYTHONPATH": str(source),
        }
    )
    if webhook_port is not None:
        env.update(
            {
                "WEBHOOK_URL": f"http://127.0.0.1:{webhook_port}",
                "WEBHOOK_LISTEN": "127.0.0.1",
                "WEBHOOK_PORT": str(webhook_port),
            }
        )
    env.update(extra_env or {})
    code = (_HIDE_SNIFFIO if hide_sniffio else "") + _RUN_HOKM.format(module=_entry_module(source))
    return BotProcess(name, [sys.executable, "-c", code], source, env)


def minimal_bot(
    name: str,
    *,
    api_url: str,
    token: str,
    hide_sniffio: bool = False,
    extra_env: dict[str, str] | None = None,
) -> BotProcess:
    """The cheapest bot on the same stack: :mod:`benchmarks.minimal_bot`."""
    env = _base_env()
    env.update({"BOT_TOKEN": token, "TELEGRAM_API_URL": api_url, "PYTHONPATH": str(ROOT)})
    env.update(extra_env or {})
    code = (_HIDE_SNIFFIO if hide_sniffio else "") + (
        "import sys\nfrom benchmarks.minimal_bot import main\nsys.exit(main())\n"
    )
    return BotProcess(name, [sys.executable, "-c", code], ROOT, env)


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """This repository at ``ref``, in a temporary git worktree removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="hokm-baseline-"))
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(path), ref],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
            capture_output=True,
        )


@contextlib.asynccontextmanager
async def fresh_database(spec: str, directory: Path) -> AsyncIterator[str]:
    """A new empty database: ``sqlite`` (a file in ``directory``) or, for a
    ``postgresql://`` URL naming a server and a database we may connect to, a
    ``hokm_bench_<random>`` database created on that server and dropped afterwards."""
    if spec == "sqlite":
        yield f"sqlite+aiosqlite:///{directory / f'bench-{secrets.token_hex(4)}.sqlite3'}"
        return
    import asyncpg
    from sqlalchemy.engine import make_url

    admin = make_url(spec.replace("+asyncpg", ""))
    dsn = admin.render_as_string(hide_password=False)
    name = f"hokm_bench_{secrets.token_hex(5)}"
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        url = admin.set(drivername="postgresql+asyncpg", database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()
