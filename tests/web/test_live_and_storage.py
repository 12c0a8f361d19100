"""The in-process live bus, and views read from the games' rows (SQLite, and
PostgreSQL when reachable)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.actions import PlayCard
from telegram_bot.platform.live import LiveBus, LocalBus
from telegram_bot.platform.storage import create_engine, migrate, repo, session_factory
from telegram_bot.web.games import StoredGames, WebError
from telegram_bot.web.initdata import WebAppUser
from tests.dbutil import BACKENDS, fresh_database_url

from .conftest import NAMES, USERS, seats, trick_play_match, user_of_seat


def _user(uid: int, lang: str | None = "en") -> WebAppUser:
    return WebAppUser(uid, "X", None, None, lang, 0)


async def test_bus_coalesces_and_unsubscribes() -> None:
    bus = LocalBus()
    assert isinstance(bus, LiveBus)
    a = bus.subscribe("g")
    other = bus.subscribe("h")
    bus.publish("g", 1)
    bus.publish("g", 2)
    bus.publish("g", 1)  # an older notice arriving late changes nothing
    assert await a.next() == 2
    assert await a.next(timeout=0) is None
    waiter = asyncio.ensure_future(a.next())
    await asyncio.sleep(0)
    assert not waiter.done()
    bus.publish("g", 3)
    assert await waiter == 3
    assert other.latest == -1
    assert bus.listeners("g") == 1 and bus.listeners() == 2
    async with a:
        pass
    assert bus.listeners("g") == 0 and await a.next() is None
    other.close()
    other.close()
    assert bus.listeners() == 0


async def test_a_closed_subscription_wakes_its_waiter() -> None:
    bus = LocalBus()
    sub = bus.subscribe("g")
    waiter = asyncio.ensure_future(sub.next())
    await asyncio.sleep(0)
    sub.close()
    assert await waiter is None


@pytest.fixture(params=BACKENDS)
async def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator:
    async with fresh_database_url(request.param, tmp_path) as url:
        await migrate(url)
        engine = create_engine(url)
        try:
            yield session_factory(engine)
        finally:
            await engine.dispose()


async def test_stored_games_views_and_refusals(sessions) -> None:
    m = trick_play_match(seed=4)
    deadline = datetime(2030, 1, 1, tzinfo=UTC)
    async with sessions() as s, s.begin():
        await repo.get_or_create_chat(s, -100, "group")
        game = await repo.create_game(s, -100, USERS[0], seats(), status="playing")
        game.state = m.to_json()
        game.move = 3
        game.deadline = deadline
        await repo.save_game(s, game, 0)
        await repo.get_or_create_user(s, USERS[1], "Sara")
        await repo.set_user_language(s, USERS[1], "fa")
    calls = []

    async def actor(game_id, user_id, move, action):
        calls.append((game_id, user_id, move, action))

    games = StoredGames(sessions, LocalBus(), actor)
    for seat in range(4):
        view = await games.view(game.id, _user(user_of_seat(m, seat)))
        assert view["you"] == seat and view["move"] == 3
        assert sorted(view["hand"]) == sorted(c.ascii for c in m.hand_of(seat))
        assert view["deadline"] == deadline.timestamp()
        assert [s["name"] for s in view["seats"]] == [NAMES[m.order[s]] for s in range(4)]
    with pytest.raises(WebError) as err:
        await games.view(game.id, _user(999))
    assert (err.value.status, err.value.code) == (403, "not_seated")
    with pytest.raises(WebError) as err:
        await games.view("nope", _user(USERS[0]))
    assert err.value.status == 404
    # Actions go to the service's actor; the answer is the view read afterwards.
    seat = m.turn
    card = m.legal_cards(seat)[0]
    view = await games.act(game.id, _user(user_of_seat(m, seat)), 3, PlayCard(card))
    assert calls == [(game.id, user_of_seat(m, seat), 3, PlayCard(card))] and view["you"] == seat
    # Languages: the one chosen in the bot, else Telegram's.
    assert await games.language(_user(USERS[1], "en")) == "fa"
    assert await games.language(_user(USERS[2], "en")) == "en"
    assert await games.language(_user(USERS[3], None)) == "fa"


async def test_stored_games_keep_the_deck_in_the_users_row(sessions) -> None:
    async with sessions() as s, s.begin():
        await repo.get_or_create_user(s, USERS[0], "Ali", None, "fa")
        await repo.set_user_language(s, USERS[0], "en")

    async def actor(*_args):
        raise AssertionError("no action here")

    games = StoredGames(sessions, LocalBus(), actor)
    known, newcomer = _user(USERS[0], "fa"), _user(777, "fa")
    assert await games.deck(known) is None
    await games.set_deck(known, "four")
    assert await games.deck(known) == "four"
    # Someone the bot has not seen yet (a link shared in a group): a row is made.
    await games.set_deck(newcomer, "classic")
    assert await games.deck(newcomer) == "classic"
    async with sessions() as s:
        user = await repo.get_user(s, 777)
        assert user is not None and (user.first_name, user.deck) == ("X", "classic")
        # The deck leaves the chosen language alone.
        assert (await repo.get_user(s, USERS[0])).language == "en"
    await games.set_deck(known, None)
    assert await games.deck(known) is None


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_busy_database_is_a_503_the_page_retries_not_a_500(
    backend: str, tmp_path: Path
) -> None:
    """Every connection of the pool in use past its wait: a view, a page's move and
    the page's load answer 503 ``busy`` with Retry-After (the page asks again), never
    a 500; once a connection is free, the same requests succeed."""
    from aiohttp.test_utils import TestClient, TestServer

    from telegram_bot.web.app import WebConfig, create_app

    from .conftest import TOKEN, auth

    async with fresh_database_url(backend, tmp_path) as url:
        await migrate(url)
        engine = create_engine(url, pool_size=1, max_overflow=0, pool_timeout=0.2)
        sessions = session_factory(engine)
        try:
            m = trick_play_match(seed=4)
            async with sessions() as s, s.begin():
                await repo.get_or_create_chat(s, -100, "group")
                game = await repo.create_game(s, -100, USERS[0], seats(), status="playing")
                game.state = m.to_json()
                await repo.save_game(s, game, 0)
            stored = []

            async def actor(game_id, user_id, move, action):  # the service's: a transaction
                async with sessions.begin() as s:
                    stored.append(await repo.get_game(s, game_id))

            games = StoredGames(sessions, LocalBus(), actor)
            app = create_app(games, WebConfig(bot_token=TOKEN, burst=1000, rate=1000))
            who = user_of_seat(m, m.turn)
            body = {"move": 0, "action": {"type": "play", "card": m.legal_cards(m.turn)[0].ascii}}
            async with TestClient(TestServer(app)) as client:
                async with engine.connect():  # the pool's only connection, held
                    for method, path, kw in (
                        ("GET", f"/api/game/{game.id}", {}),
                        ("POST", f"/api/game/{game.id}/play", {"json": body}),
                        ("GET", f"/api/game/{game.id}/events", {}),
                    ):
                        r = await client.request(method, path, headers=auth(who), **kw)
                        assert r.status == 503, (path, r.status)
                        assert (await r.json())["error"] == "busy"
                        assert r.headers["Retry-After"] == "1"
                    assert stored == []
                r = await client.get(f"/api/game/{game.id}", headers=auth(who))
                assert r.status == 200
                r = await client.post(f"/api/game/{game.id}/play", headers=auth(who), json=body)
                assert r.status == 200 and len(stored) == 1
        finally:
            await engine.dispose()
