"""Suite-wide collection: the slowest tests first."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The suite runs on every core (xdist's worksteal): a long test begun last is a
    # tail the other workers cannot share, so those marked slow start first.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
