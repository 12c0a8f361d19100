"""The web tests' fixtures: an app over games held in memory, with signed initData."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.match import Match
from core.state import Phase
from core.variant import Variant
from telegram_bot.web.app import WebConfig, create_app
from telegram_bot.web.games import MemoryGames
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN as BOT_TOKEN
from testkit.webapp import init_data

TOKEN = "424242:test-token-for-the-web"
#: Seated users' ids, by join order.
USERS = [1001, 1002, 1003, 1004]
NAMES = ["Ali", "Sara", "Reza", "Mina"]


def trick_play_match(seed: int = 11) -> Match:
    """A four-player match at trick play: trump chosen, nobody has played."""
    m, _ = Match.new(Variant.four(), seed=seed)
    m.apply(m.turn, m.legal_actions(m.turn)[0])
    assert m.phase is Phase.PLAY
    return m


def seats() -> list[dict]:
    return [{"user_id": u, "name": n} for u, n in zip(USERS, NAMES, strict=True)]


def user_of_seat(m: Match, seat: int) -> int:
    return USERS[m.order[seat]]


def auth(user_id: int, **kw) -> dict[str, str]:
    return {"Authorization": "tma " + init_data(TOKEN, user_id, NAMES[0], **kw)}


@pytest.fixture
def games() -> MemoryGames:
    g = MemoryGames()
    g.add("g1", trick_play_match(), seats())
    return g


@pytest.fixture
async def client(games: MemoryGames) -> AsyncIterator[TestClient]:
    app = create_app(games, WebConfig(bot_token=TOKEN, burst=1000, rate=1000))
    async with TestClient(TestServer(app)) as c:
        yield c


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    """The Bot API emulator, for the tests of the page served by the real bot."""
    async with BotApiEmulator(token=BOT_TOKEN, bot_username="HokmTestBot", bot_name="Hokm") as e:
        yield e
