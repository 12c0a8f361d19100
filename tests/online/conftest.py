"""Fixtures of the play-with-anyone tests: as tests/storage's, on SQLite and PostgreSQL.

- ``db_url``: a fresh empty database (tmp SQLite file or ``hokm_test_<random>``).
- ``engine``: an engine on that database, migrated to head; ``sessions`` a sessionmaker.
- ``workers``: several engines on that database, as several worker processes have.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Make ``tests.dbutil`` importable however pytest was started (tests/ has no __init__).
_REPO_ROOT = str(Path(__file__).resolve().parents[2])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from tests.dbutil import db_url, engine, sessions, workers  # noqa: E402, F401 (the fixtures)
