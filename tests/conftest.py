"""Suite-wide: how many workers, and the slowest tests first."""

from __future__ import annotations

import os

import pytest


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    # Many tests spend a third of their time waiting (on a child process, a socket, a
    # database), so one worker more than there are cores keeps the cores busy. Beside
    # a CPU burner on 2 cores: 622 s with 2 workers, 429 s with 3. The player-clock
    # tests hold with 3 workers there (they measure each decision's own budget).
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The suite runs on every core (xdist's worksteal): a long test begun last is a
    # tail the other workers cannot share, so those marked slow start first.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
