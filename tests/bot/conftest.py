"""The real bot, against the Bot API emulator, on SQLite (and PostgreSQL if reachable)."""

from __future__ import annotations

import os
import zlib
from collections.abc import AsyncIterator

import pytest

from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner
from tests.dbutil import BACKENDS, fresh_database_url

from .driver import assert_no_private_hand_in

BOT_USERNAME = "HokmTestBot"


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[str]:
    async with fresh_database_url(request.param, tmp_path) as url:  # skips without PG
        yield url


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(token=TOKEN, bot_username=BOT_USERNAME, bot_name="Hokm") as e:
        yield e
        # Every test: no version of any group message ever carried a hand's buttons.
        # (Table.step also checks, before every action, that no hidden card appears
        # in any group text.)
        for chat in list(e.world.chats.values()):
            if chat.is_group:
                assert_no_private_hand_in(e, chat.id)


@pytest.fixture
async def runner(emu, db_url) -> AsyncIterator[BotRunner]:
    r = BotRunner(emu, db_url)
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


# Each language on one database: the texts do not depend on the database, nor the
# storage on the language, so [sqlite-fa] and [postgresql-en] cover both of each
# and halve the suite's end-to-end runs. Only where PostgreSQL is required
# (HOKM_TEST_PG=1, as in CI): elsewhere every language runs on SQLite.
# HOKM_TEST_ALL_COMBOS=1 runs every combination.
_PAIRS = {("sqlite", "fa"), ("postgresql", "en")}


# Tests marked ``one_backend`` measure what does not depend on the database (memory
# kept per match, the outbox's drain at SIGTERM) and are among the longest: they run
# on PostgreSQL alone, the production backend, where PostgreSQL is required.


# The end-to-end tests of the chat's features (the game's flow, its texts, its
# buttons) go through the same storage code on either database: each runs on one of
# the two, chosen by its name, so that the suite covers both and keeps within its ten
# minutes. What is about the storage itself runs on both: crashes and restarts, the
# outbox, locks, migrations between chats, row locks, the open pages' rows.
_BOTH_BACKENDS = {
    "test_backlog.py",
    "test_chatlocks.py",
    "test_groups.py",
    "test_kill.py",
    "test_live_and_storage.py",
    "test_locks.py",
    "test_memory.py",
    "test_open_pages.py",
    "test_outbox.py",
    "test_outbox_order.py",
    "test_pings.py",
    "test_reposts_shared.py",
    "test_restart.py",
    "test_takeover.py",
}
_SPLIT_DIRS = {"bot", "web"}


def _one_of_the_two(item: pytest.Item) -> str:
    name = getattr(item, "originalname", item.name)
    return BACKENDS[zlib.crc32(f"{item.path.name}::{name}".encode()) % 2]


def _kept(item: pytest.Item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    if item.get_closest_marker("one_backend") is not None:  # and its English texts
        return params.get("db_url", "postgresql") == "postgresql" and params.get("lang") in (
            None,
            "en",
        )
    pair = (params.get("db_url"), params.get("lang"))
    split = item.path.parent.name in _SPLIT_DIRS and item.path.name not in _BOTH_BACKENDS
    if split and pair[0] is not None and pair[1] is None:
        return pair[0] == _one_of_the_two(item)
    return None in pair or pair in _PAIRS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("HOKM_TEST_PG", "").strip() != "1":
        return
    if os.environ.get("HOKM_TEST_ALL_COMBOS", "").strip() == "1":
        return
    keep, drop = [], []
    for item in items:
        (keep if _kept(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
