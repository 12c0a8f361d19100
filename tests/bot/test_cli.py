"""The command line: what a newcomer sees without a token, or with a wrong one."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BOT_TOKEN", "TELEGRAM_API_URL")}
    return {**env, **extra}


def test_without_a_token_it_explains_how_to_get_one():
    done = subprocess.run(
        [sys.executable, "-m", "telegram_bot"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "BotFather" in done.stderr and "BOT_TOKEN" in done.stderr


async def _run_bot(env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "telegram_bot",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _out, err = await process.communicate()
    return process.returncode, err.decode()


@pytest.mark.asyncio
async def test_a_wrong_token_ends_in_one_line_not_a_traceback(emu, tmp_path):
    # The emulator answers 401 Unauthorized to any other token, as Telegram does.
    env = _env(
        BOT_TOKEN="123456:NOT-THE-TOKEN",
        TELEGRAM_API_URL=emu.base_url.removesuffix("/bot"),
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'hokm.sqlite3'}",
    )
    code, err = await _run_bot(env)
    assert code == 2
    assert "Traceback" not in err
    assert "401 Unauthorized" in err and "@BotFather" in err
    assert len([line for line in err.splitlines() if "BOT_TOKEN" in line]) == 1


@pytest.mark.asyncio
async def test_an_unreachable_api_ends_in_one_line(tmp_path):
    env = _env(
        BOT_TOKEN="123456:ANY",
        TELEGRAM_API_URL="http://127.0.0.1:9",  # discard port: nothing answers
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'hokm.sqlite3'}",
    )
    code, err = await _run_bot(env)
    assert code == 3
    assert "Traceback" not in err
    assert "Could not reach the Telegram Bot API at http://127.0.0.1:9" in err
