"""The command line: its help, and what a newcomer (or an operator) sees when the bot
cannot start: one line on stderr and a documented exit status, never a traceback.
The commands run as real subprocesses, as a person or docker-compose runs them."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from telegram_bot.runtime.config import ENVIRONMENT, token_problem
from telegram_bot.runtime.startup import EXIT_UNAVAILABLE, EXIT_USAGE
from tests.dbutil import fresh_database_url

ROOT = Path(__file__).resolve().parents[2]


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


async def _run_bot(env: dict[str, str], *module_and_args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        *(module_and_args or ("telegram_bot",)),
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
        BOT_TOKEN="123456:NOT-THE-TOKEN",  # well formed: only Telegram can refuse it
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


def _one_line(err: str) -> str:
    """The failure's line, checking it is the only thing the process said about it."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "the process said nothing"
    return lines[-1]


# ------------------------------------------------------------------------------ help


def _help(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *argv, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_bots_help_names_every_command_every_setting_and_the_exit_codes():
    out = _help("telegram_bot")
    assert out.startswith("usage: python -m telegram_bot")
    for command in ("run", "migrate", "ingress", "worker", "all"):
        assert re.search(rf"^\s+{command}\s+\S", out, re.M), command
    assert "python -m testkit.demo" in out
    for name, _meaning in ENVIRONMENT:
        assert re.search(rf"^\s+{name}\s+\S", out, re.M), name
    for status in ("0", "1", "2", "3"):
        assert re.search(rf"^\s+{status}\s+\S", out, re.M), status


@pytest.mark.parametrize(
    "argv",
    [
        ("telegram_bot", "run"),
        ("telegram_bot", "migrate"),
        ("telegram_bot", "ingress"),
        ("telegram_bot", "worker"),
        ("telegram_bot", "all"),
        ("telegram_bot.runtime.cluster", "ingress"),
        ("telegram_bot.runtime.cluster", "worker"),
        ("telegram_bot.runtime.cluster", "all"),
    ],
)
def test_each_command_explains_itself(argv):
    out = _help(*argv)
    assert out.startswith(f"usage: python -m {argv[0]} {argv[1]}"), out
    assert "BOT_TOKEN" in out and "DATABASE_URL" in out and "exit status" in out
    if argv[1] == "all":
        assert "--workers" in out


def test_a_bad_option_is_a_usage_error():
    done = subprocess.run(
        [sys.executable, "-m", "telegram_bot", "serve"], capture_output=True, text=True
    )
    assert done.returncode == EXIT_USAGE
    assert "invalid choice: 'serve'" in done.stderr


# ------------------------------------------------------------- settings stay documented


def _variables_read_by_the_bot() -> set[str]:
    found = set()
    pattern = re.compile(
        r"""(?:env|environ|environment)(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']"""
    )
    for path in (ROOT / "telegram_bot").rglob("*.py"):
        found |= set(pattern.findall(path.read_text()))
    return found


def test_every_variable_the_bot_reads_is_in_the_help_and_in_the_readme():
    read = _variables_read_by_the_bot()
    assert {"BOT_TOKEN", "DATABASE_URL", "HOKM_LOCALES_DIR"} <= read, read  # the scan works
    documented = {name for name, _ in ENVIRONMENT}
    proxies = {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"}  # read by httpx, named in the README
    assert read - documented - proxies == set(), "read but not in config.ENVIRONMENT"
    readme = (ROOT / "README.md").read_text()
    table = [line for line in readme.splitlines() if line.startswith("| `")]
    for name in documented:
        assert any(f"`{name}`" in line for line in table), f"{name} not in README's table"


# --------------------------------------------------------------- malformed tokens


MALFORMED = [
    ("hello", None),
    ("123456789", None),
    ("bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", None),  # pasted with "bot"
    ("123456789:AAH dqTcvCH1vGWJxfSeofSAs0K5PALDsaw", None),
    ("123456789:AAHdqTcv", None),  # cut short: Telegram's secrets have 35 characters
    ("hello", "http://127.0.0.1:9"),
]


@pytest.mark.parametrize(("token", "api_url"), MALFORMED)
def test_every_malformed_token_has_its_reason(token, api_url):
    assert (token_problem(token, api_url) or "").startswith("BOT_TOKEN is malformed")


def test_a_well_formed_token_has_no_reason():
    assert token_problem("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", None) is None
    assert token_problem("123456:ANY", "http://127.0.0.1:8081") is None  # an emulator's fake


# A process per form would spend a second or more each on imports: the forms are
# checked above, and here each entry point shows that it refuses one before any call.
@pytest.mark.parametrize(
    ("token", "api_url", "command"),
    [
        ("123456789:AAHdqTcv", None, ("telegram_bot",)),
        ("hello", "http://127.0.0.1:9", ("telegram_bot.runtime.cluster", "worker")),
    ],
)
async def test_a_malformed_token_is_refused_before_any_network_call(token, api_url, command):
    # Nothing listens at 127.0.0.1:9 and api.telegram.org is not reachable from the
    # tests: a token that got as far as the network would be reported as unreachable.
    env = _env(
        BOT_TOKEN=token,
        DATABASE_URL="postgresql://nobody@127.0.0.1:9/none",
        HTTPS_PROXY="http://127.0.0.1:9",
    )
    if api_url:
        env["TELEGRAM_API_URL"] = api_url
    code, err = await _run_bot(env, *command)
    assert code == EXIT_USAGE, err
    assert _one_line(err).startswith("BOT_TOKEN is malformed"), err


# ------------------------------------------------------------------- cluster roles


@pytest.fixture
async def pg_url(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        yield url


@pytest.mark.parametrize("role", ["ingress", "worker", "all"])
async def test_a_cluster_role_without_telegram_says_one_line(role, pg_url):
    env = _env(
        BOT_TOKEN="123456:ANY",
        TELEGRAM_API_URL="http://127.0.0.1:9",
        DATABASE_URL=pg_url,
        WEBHOOK_URL="https://example.org:8443",
    )
    code, err = await _run_bot(env, "telegram_bot.runtime.cluster", role)
    assert code == EXIT_UNAVAILABLE
    assert _one_line(err).startswith("Could not reach the Telegram Bot API at http://127.0.0.1:9")


@pytest.mark.parametrize("role", ["ingress", "worker"])
async def test_a_cluster_role_without_its_database_says_one_line(role, emu):
    env = _env(
        BOT_TOKEN=emu.token,
        TELEGRAM_API_URL=emu.base_url.removesuffix("/bot"),
        DATABASE_URL="postgresql://hokm:secret@127.0.0.1:9/hokm",
        WEBHOOK_URL="https://example.org:8443",
        WEBHOOK_PORT=str(_free_port()),
    )
    code, err = await _run_bot(env, "telegram_bot.runtime.cluster", role)
    assert code == EXIT_UNAVAILABLE
    line = _one_line(err)
    assert line.startswith("Could not reach the database at postgresql+asyncpg://hokm:***@"), line
    assert "secret" not in err


async def test_a_cluster_role_on_sqlite_is_a_configuration_error(tmp_path):
    env = _env(
        BOT_TOKEN="123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'x.db'}",
    )
    code, err = await _run_bot(env, "telegram_bot", "worker")
    assert code == EXIT_USAGE
    assert "need PostgreSQL" in _one_line(err)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_all_fails_when_a_child_fails(emu, pg_url):
    """The ingress cannot listen (its port is taken): 'all' stops the workers and
    exits with the ingress's status, not 0."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = _env(
            BOT_TOKEN=emu.token,
            TELEGRAM_API_URL=emu.base_url.removesuffix("/bot"),
            DATABASE_URL=pg_url,
            WEBHOOK_URL="https://example.org:8443",
            WEBHOOK_LISTEN="127.0.0.1",
            WEBHOOK_PORT=str(port),
            HOKM_THINK_PROCESSES="0",
        )
        code, err = await _run_bot(env, "telegram_bot", "all", "--workers", "1")
    assert code == EXIT_UNAVAILABLE, err
    assert "Traceback" not in err, err
    assert f"Could not listen on 127.0.0.1:{port}" in err
    assert re.search(r"ingress\[\d+\] exited with status 3: stopping the others", err), err


async def test_the_bot_without_its_database_says_one_line(emu):
    env = _env(
        BOT_TOKEN=emu.token,
        TELEGRAM_API_URL=emu.base_url.removesuffix("/bot"),
        DATABASE_URL="postgresql://hokm:secret@127.0.0.1:9/hokm",
    )
    code, err = await _run_bot(env)
    assert code == EXIT_UNAVAILABLE, err
    assert _one_line(err).startswith(
        "Could not reach the database at postgresql+asyncpg://hokm:***@"
    )


async def test_migrate_brings_a_new_database_to_the_newest_schema(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'new.sqlite3'}"
    code, err = await _run_bot(_env(DATABASE_URL=url), "telegram_bot", "migrate")
    assert code == 0, err
    from sqlalchemy import create_engine, inspect

    tables = inspect(create_engine(f"sqlite:///{tmp_path / 'new.sqlite3'}")).get_table_names()
    assert {"games", "outbox", "alembic_version"} <= set(tables), tables


async def test_migrate_without_its_database_says_one_line():
    env = _env(DATABASE_URL="postgresql://hokm:secret@127.0.0.1:9/hokm")
    code, err = await _run_bot(env, "telegram_bot", "migrate")
    assert code == EXIT_UNAVAILABLE
    assert _one_line(err).startswith("Could not reach the database at")


async def test_the_demo_prints_only_the_messages_still_in_the_group(capsys):
    """A table the bot re-posted lower down deleted its old message: the demo must not
    print it, or a newcomer reads a second table frozen on an old turn (#22 item 11)."""
    from telegram import Bot

    from testkit import demo
    from testkit.emulator import BotApiEmulator

    token = "123456:DEMO-TEST-TOKEN"
    async with BotApiEmulator(token=token, bot_username="HokmDemoBot") as emu:
        alice = emu.add_user("Alice")
        group = emu.add_group("g", members=[alice])
        async with Bot(token, base_url=emu.base_url, base_file_url=emu.base_file_url) as bot:
            old = await bot.send_message(group.id, "Turn: Alice (old table)")
            await bot.send_message(group.id, "Turn: Alice (the table now)")
            await bot.delete_message(group.id, old.message_id)
        demo.print_chat(emu, group)
    out = capsys.readouterr().out
    assert "the table now" in out
    assert "old table" not in out


def test_the_database_pool_size_is_read_from_hokm_db_pool():
    from telegram_bot.runtime.config import Settings

    assert Settings.from_env({}).db_pool is None  # create_engine's default
    assert Settings.from_env({"HOKM_DB_POOL": " "}).db_pool is None
    assert Settings.from_env({"HOKM_DB_POOL": "40"}).db_pool == 40
    for bad in ("0", "-3", "many"):
        with pytest.raises(ValueError):
            Settings.from_env({"HOKM_DB_POOL": bad})
