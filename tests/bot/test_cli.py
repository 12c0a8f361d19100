"""The command line: what a newcomer sees without a token."""

from __future__ import annotations


def test_without_a_token_it_explains_how_to_get_one():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "BOT_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "telegram_bot"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "BotFather" in done.stderr and "BOT_TOKEN" in done.stderr


def test_the_demo_rejects_bad_options_with_a_clear_message(capsys):
    import pytest

    from telegram_bot import demo

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
        assert "usage: python -m telegram_bot.demo" in err and says in err, (argv, err)


def test_the_demo_plays_a_whole_match_and_prints_the_group():
    """The demo as a newcomer runs it: one person and three computers, in English."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "telegram_bot.demo",
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
    assert "Match over: team" in done.stdout, done.stdout[-2000:]
    assert "button presses by people" in done.stdout
    assert "Traceback" not in done.stderr
