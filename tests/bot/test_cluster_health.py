"""The worker's health check (docker-compose.yml) on a real worker process: its claim
loop touches the heartbeat file that `python -m telegram_bot.runtime.health worker`
reads."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from testkit.emulator import BotApiEmulator
from tests.dbutil import fresh_database_url

ROOT = Path(__file__).resolve().parents[2]


async def test_a_running_worker_beats_for_its_health_check(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        async with BotApiEmulator() as emu:
            beat = tmp_path / "worker.heartbeat"
            env = {
                **os.environ,
                "BOT_TOKEN": emu.token,
                "DATABASE_URL": url,
                "TELEGRAM_API_URL": emu.server.url,
                "HOKM_HEARTBEAT_FILE": str(beat),
                "HOKM_THINK_PROCESSES": "0",
            }
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "telegram_bot.runtime.cluster",
                "worker",
                cwd=ROOT,
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            assert proc.stderr is not None
            try:
                # "worker ready" comes just before the claim loop, with no await between
                # them, so the SIGTERM below cannot stop the loop before its first turn.
                lines = []
                while not any("worker ready" in line for line in lines):
                    line = (await proc.stderr.readline()).decode()
                    assert line, "the worker exited:\n" + "".join(lines)
                    lines.append(line)
            finally:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
                await proc.communicate()
            assert proc.returncode == 0
            check = subprocess.run(
                [sys.executable, "-m", "telegram_bot.runtime.health", "worker"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert check.returncode == 0, check.stderr
