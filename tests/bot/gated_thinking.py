"""A computer move that waits for the test to let it go (run in the think pool).

Spawned workers inherit the environment: ``HOKM_TEST_GATE`` names a file. While it
does not exist the worker has announced itself (``<gate>.waiting``) and waits.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from telegram_bot.platform.thinking import think


def gated_think(level, time_budget, view):
    gate = Path(os.environ["HOKM_TEST_GATE"])
    Path(f"{gate}.waiting").touch()
    while not gate.exists():
        time.sleep(0.01)
    return think(level, time_budget, view)
