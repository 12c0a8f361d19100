"""The command line: what a newcomer sees without a token."""

from __future__ import annotations


def test_without_a_token_it_explains_how_to_get_one():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "BOT_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "telegram_bot"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "BotFather" in done.stderr and "BOT_TOKEN" in done.stderr
