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


def test_the_demo_rejects_bad_options_with_a_clear_message(capsys):
    import pytest

    from testkit import demo

    for argv, says in (
        (["--people", "0"], "--people: 0 is not between 1 and --players (4)"),
        (["--players", "2", "--people", "3"], "--people: 3 is not between 1 and --players (2)"),
        (["--people", "-1"], "--people: -1 is not between 1"),
        (["--people", "two"], "--people: invalid int value: 'two'"),
        (["--players", "5"], "--players: invalid choice: 5"),
        (["--lang", "de"], "--lang: invalid choice: 'de'"),
        (["--target", "2"], "--target: invalid choice: 2"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            demo.main(argv)
        assert exit_info.value.code == 2, argv
        err = capsys.readouterr().err
        assert "usage: python -m testkit.demo" in err and says in err, (argv, err)


def test_the_demo_plays_a_whole_match_and_prints_the_group():
    """The demo as a newcomer runs it: one person and three computers, in English."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "testkit.demo",
            "--people",
            "1",
            "--lang",
            "en",
            "--target",
            "1",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Match over: Team" in done.stdout, done.stdout[-2000:]
    assert "button presses by people" in done.stdout
    assert "Traceback" not in done.stderr


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
