"""The test rigs' bot processes (testkit.restartable) never outlive the rig."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

_RIG = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    from testkit.restartable import Restartable, log_says

    async def main():
        # Started once it serves: past setpriv, which sets the signal and then runs it.
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        child = Restartable(
            "http.server", ["0", "--bind", "127.0.0.1"], env, Path(sys.argv[1]),
            log_says("Serving HTTP"),
        )
        await child.start()
        print(child.pid, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="Linux's parent-death signal")
def test_a_child_dies_with_a_rig_killed_outright(tmp_path):
    rig = subprocess.Popen(
        [sys.executable, "-c", _RIG, str(tmp_path / "child.log")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        child = int(rig.stdout.readline())  # type: ignore[union-attr]
        assert _running(child)
        rig.send_signal(signal.SIGKILL)
        rig.wait()
        # The signal is sent as the rig dies: wait for it to land (the bound only
        # turns a regression into a failure instead of a hang).
        for _ in range(600):
            if not _running(child):
                break
            time.sleep(0.05)
        assert not _running(child), "the child outlived its rig"
    finally:
        rig.kill()
        rig.wait()
