"""The import rules (.importlinter) hold for the tree, and fail the build when a circle
or an upward import comes back: each is planted in a copy of the packages, and
lint-imports, with the same rules, refuses the copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "telegram_bot", "testkit")
LINT = Path(sys.executable).parent / "lint-imports"

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports over the packages found in ``root`` (and nowhere else)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT), "--no-cache", "--no-logo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The packages and the rules, copied (sources only)."""
    for name in PACKAGES:
        shutil.copytree(
            ROOT / name,
            tmp_path / name,
            ignore=shutil.ignore_patterns("__pycache__", "*.jsonl", "runs"),
        )
    shutil.copy(ROOT / ".importlinter", tmp_path)
    return tmp_path


def _plant(root: Path, module: str, line: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + f"\n{line}  # planted\n")


def test_the_tree_keeps_the_rules():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_copy_keeps_them_too(copy):
    """The copy is what the planted tests check: unchanged, it passes."""
    result = _lint(copy)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_upward_import_fails(copy):
    # The platform reaching up into the service: a layer broken, and a circle made.
    _plant(copy, "telegram_bot.platform.locks", "from telegram_bot.service import games")
    result = _lint(copy)
    assert result.returncode != 0
    out = " ".join(result.stdout.split())  # the report wraps its long lines
    assert "layers import only downwards, and core below them all BROKEN" in out
    assert "telegram_bot.platform.locks -> telegram_bot.service.games" in out


def test_a_circle_inside_a_layer_fails(copy):
    # Two parts of the service that import each other (each way is downwards).
    _plant(copy, "telegram_bot.service.seats", "from telegram_bot.service import games")
    result = _lint(copy)
    assert result.returncode != 0
    out = " ".join(result.stdout.split())
    assert "No cycles are allowed in telegram_bot.service" in out
    assert "layers import only downwards, and core below them all KEPT" in out


def test_core_importing_the_bot_fails(copy):
    _plant(copy, "core.cards", "import telegram_bot.chat.render")
    result = _lint(copy)
    assert result.returncode != 0
    out = " ".join(result.stdout.split())
    assert "knows no Telegram, database or test kit BROKEN" in out
