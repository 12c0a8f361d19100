"""The Mini App's HTTP API over games in memory: who may see and do what, refusals,
the live stream, and a fuzz of bodies."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cards import cards_in
from core.match import Match
from core.variant import Variant
from telegram_bot.web.app import LIMITER_KEY, RateLimiter, WebConfig, create_app
from telegram_bot.web.games import MemoryGames
from telegram_bot.web.initdata import DEFAULT_MAX_AGE
from testkit.webapp import init_data

from .conftest import TOKEN, USERS, auth, seats, trick_play_match, user_of_seat

CARD = re.compile(r"[2-9TJQKA][SHDC]")


async def _view(client: TestClient, user: int, game: str = "g1") -> dict:
    r = await client.get(f"/api/game/{game}", headers=auth(user))
    assert r.status == 200, await r.text()
    return (await r.json())["view"]


async def test_seated_user_gets_their_own_hand(client, games) -> None:
    m = games.games["g1"].match
    for seat in range(4):
        r = await client.get("/api/game/g1", headers=auth(user_of_seat(m, seat)))
        body = await r.json()
        assert r.status == 200 and r.headers["Cache-Control"] == "no-store"
        assert body["view"]["you"] == seat and body["lang"] == "fa"
        assert sorted(body["view"]["hand"]) == sorted(c.ascii for c in m.hand_of(seat))


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "missing"),
        ({"Authorization": "Bearer x"}, "missing"),
        ({"Authorization": "tma " + init_data("1:other", USERS[0])}, "bad_hash"),
        ({"Authorization": "tma " + init_data(TOKEN, USERS[0], auth_date=1)}, "stale"),
        (
            {
                "Authorization": "tma "
                + init_data(TOKEN, USERS[0], auth_date=int(time.time()) + 9999)
            },
            "future",
        ),
        ({"Authorization": "tma user=%7B%7D&hash=00"}, "bad_hash"),
    ],
)
async def test_initdata_refused(client, headers, code) -> None:
    for method, path in (
        ("GET", "/api/game/g1"),
        ("POST", "/api/game/g1/play"),
        ("GET", "/api/game/g1/events"),
        ("GET", "/api/prefs"),
        ("POST", "/api/prefs"),
    ):
        r = await client.request(method, path, headers=headers, json={"move": 0})
        assert r.status == 401 and (await r.json()) == {"error": code}, (method, path)


async def test_other_people_and_other_games(client, games) -> None:
    r = await client.get("/api/game/g1", headers=auth(999))
    assert r.status == 403 and (await r.json())["error"] == "not_seated"
    r = await client.get("/api/game/nope", headers=auth(USERS[0]))
    assert r.status == 404 and (await r.json())["error"] == "no_such_game"
    r = await client.get("/api/game/a%20b", headers=auth(USERS[0]))
    assert r.status == 404
    r = await client.post(
        "/api/game/g1/play",
        headers=auth(999),
        json={"move": 0, "action": {"type": "play", "card": "AS"}},
    )
    assert r.status == 403 and games.log == []
    # A second game: its players see theirs, not the first.
    other = trick_play_match(seed=3)
    games.add("g2", other, [{"user_id": 2000 + i, "name": f"X{i}"} for i in range(4)])
    assert (await client.get("/api/game/g2", headers=auth(USERS[0]))).status == 403
    assert (await client.get("/api/game/g1", headers=auth(2001))).status == 403


async def test_the_deck_choice_is_kept_per_user(client, games) -> None:
    me, other = USERS[0], USERS[1]
    r = await client.get("/api/prefs", headers=auth(me))
    assert r.status == 200 and await r.json() == {"deck": None}
    r = await client.post("/api/prefs", headers=auth(me), json={"deck": "four"})
    assert r.status == 200 and await r.json() == {"deck": "four"}
    # Read back on its own and with the game's view; another user's is untouched.
    assert await (await client.get("/api/prefs", headers=auth(me))).json() == {"deck": "four"}
    body = await (await client.get("/api/game/g1", headers=auth(me))).json()
    assert body["prefs"] == {"deck": "four"}
    body = await (await client.get("/api/game/g1", headers=auth(other))).json()
    assert body["prefs"] == {"deck": None}
    # Refused: unknown styles, other fields, malformed bodies; nothing changes.
    for bad, code in (
        ({"deck": "gold"}, "bad_deck"),
        ({"deck": 4}, "bad_deck"),
        ({"deck": ["four"]}, "bad_deck"),
        ({"deck": "four", "user": other}, "bad_body"),
        (["four"], "bad_body"),
        ("four", "bad_body"),
    ):
        r = await client.post("/api/prefs", headers=auth(me), json=bad)
        assert r.status == 400 and (await r.json())["error"] == code, bad
    r = await client.post("/api/prefs", headers=auth(me), data=b"{deck")
    assert r.status == 400 and (await r.json())["error"] == "bad_json"
    r = await client.post("/api/prefs", headers=auth(me), data=b"{}" + b" " * 5000)
    assert r.status == 413
    assert games.decks == {me: "four"}
    # An empty body changes nothing; null goes back to the default.
    assert await (await client.post("/api/prefs", headers=auth(me), json={})).json() == {
        "deck": "four"
    }
    r = await client.post("/api/prefs", headers=auth(me), json={"deck": None})
    assert await r.json() == {"deck": None} and games.decks == {}


async def test_play_a_legal_card(client, games) -> None:
    m = games.games["g1"].match
    seat = m.turn
    card = m.legal_cards(seat)[-1]
    sub = games.subscribe("g1")
    body = {"move": 0, "action": {"type": "play", "card": card.ascii}}
    r = await client.post("/api/game/g1/play", headers=auth(user_of_seat(m, seat)), json=body)
    assert r.status == 200, await r.text()
    view = (await r.json())["view"]
    assert view["move"] == 1 and view["trick"] == [{"seat": seat, "card": card.ascii}]
    assert card.ascii not in view["hand"] and len(view["hand"]) == 12
    assert await sub.next() == 1
    sub.close()


async def test_refused_moves_change_nothing(client, games) -> None:
    g = games.games["g1"]
    m = g.match
    seat = m.turn
    user = user_of_seat(m, seat)
    before = m.to_json()
    legal = m.legal_cards(seat)[0]
    cases = [
        (user, {"move": 5, "action": {"type": "play", "card": legal.ascii}}, 409, "stale_move"),
        (
            user_of_seat(m, (seat + 1) % 4),
            {"move": 0, "action": {"type": "play", "card": m.hand_of((seat + 1) % 4)[0].ascii}},
            422,
            "not_your_turn",
        ),
        (
            user,
            {"move": 0, "action": {"type": "play", "card": m.hand_of((seat + 1) % 4)[0].ascii}},
            422,
            "card_not_in_hand",
        ),
        (user, {"move": 0, "action": {"type": "trump", "suit": "S"}}, 422, "wrong_phase"),
        (user, {"move": 0, "action": {"type": "play", "card": "ZZ"}}, 400, "bad_action"),
        (user, {"move": "0", "action": {"type": "play", "card": legal.ascii}}, 400, "bad_move"),
        (user, {"move": True, "action": {"type": "play", "card": legal.ascii}}, 400, "bad_move"),
        (user, {"move": 0}, 400, "bad_action"),
        (user, [1, 2], 400, "bad_body"),
    ]
    for who, body, status, code in cases:
        r = await client.post("/api/game/g1/play", headers=auth(who), json=body)
        got = await r.json()
        assert (r.status, got["error"]) == (status, code), body
        if code == "stale_move":
            assert got["move"] == 0
    r = await client.post("/api/game/g1/play", headers=auth(user), data=b"{not json")
    assert r.status == 400 and (await r.json())["error"] == "bad_json"
    r = await client.post("/api/game/g1/play", headers=auth(user), data=b"x" * 5000)
    assert r.status == 413
    assert m.to_json() == before and g.move == 0 and games.log == []


async def test_must_follow_suit_is_refused(client, games) -> None:
    m = games.games["g1"].match
    leader = m.turn
    led = m.legal_cards(leader)[0]
    await client.post(
        "/api/game/g1/play",
        headers=auth(user_of_seat(m, leader)),
        json={"move": 0, "action": {"type": "play", "card": led.ascii}},
    )
    nxt = m.turn
    hand = m.hand_of(nxt)
    off = [c for c in hand if c.suit != led.suit]
    if not off or len(off) == len(hand):
        pytest.skip("this deal gives the next seat no choice")
    r = await client.post(
        "/api/game/g1/play",
        headers=auth(user_of_seat(m, nxt)),
        json={"move": 1, "action": {"type": "play", "card": off[0].ascii}},
    )
    assert r.status == 422 and (await r.json())["error"] == "must_follow_suit"


async def test_rate_limit_per_user(games) -> None:
    app = create_app(games, WebConfig(bot_token=TOKEN, burst=3, rate=0.001))
    async with TestClient(TestServer(app)) as c:
        codes = [(await c.get("/api/game/g1", headers=auth(USERS[0]))).status for _ in range(5)]
        assert codes == [200, 200, 200, 429, 429]
        r = await c.get("/api/game/g1", headers=auth(USERS[0]))
        assert int(r.headers["Retry-After"]) >= 1 and (await r.json())["error"] == "too_many"
        # Another user has a bucket of their own.
        assert (await c.get("/api/game/g1", headers=auth(USERS[1]))).status == 200


async def test_a_refused_request_is_told_a_wait_that_lets_the_next_one_through(games) -> None:
    now = [0.0]
    app = create_app(games, WebConfig(bot_token=TOKEN, burst=1, rate=5.0))
    app[LIMITER_KEY] = RateLimiter(1, 5.0, clock=lambda: now[0])
    async with TestClient(TestServer(app)) as c:
        assert (await c.get("/api/game/g1", headers=auth(USERS[0]))).status == 200
        # 1 ms short of the next token (0.2 s at 5 a second).
        now[0] = 0.199
        r = await c.get("/api/game/g1", headers=auth(USERS[0]))
        wait = (await r.json())["retry_after"]
        assert r.status == 429 and wait > 0
        now[0] += wait
        assert (await c.get("/api/game/g1", headers=auth(USERS[0]))).status == 200


async def _event(resp) -> tuple[str | None, str | None, dict | None]:
    """The next event of an SSE stream (comments and retry lines skipped)."""
    ident = kind = None
    data: list[str] = []
    while True:
        line = (await asyncio.wait_for(resp.content.readline(), 30)).decode()
        if line in ("\n", ""):
            if data:
                return ident, kind, json.loads("\n".join(data))
            if line == "":
                return None, None, None
            continue
        key, _, value = line.rstrip("\n").partition(": ")
        if key == "id":
            ident = value
        elif key == "event":
            kind = value
        elif key == "data":
            data.append(value)


async def test_live_stream_and_catch_up(client, games) -> None:
    g = games.games["g1"]
    m = g.match
    viewer = (m.turn + 2) % 4
    r = await client.get("/api/game/g1/events", headers=auth(user_of_seat(m, viewer)))
    assert r.status == 200 and r.headers["Content-Type"].startswith("text/event-stream")
    ident, kind, view = await _event(r)
    assert (ident, kind, view["move"], view["you"]) == ("0", "view", 0, viewer)
    # A move made elsewhere (a chat press, a computer) reaches the page.
    seat = m.turn
    card = m.legal_cards(seat)[0]
    await games.apply_for_seat("g1", seat, __import__("core").PlayCard(card))
    ident, kind, view = await _event(r)
    assert ident == "1" and view["trick"] == [{"seat": seat, "card": card.ascii}]
    assert sorted(view["hand"]) == sorted(c.ascii for c in m.hand_of(viewer))
    r.close()
    # A reconnect that has seen move 1 gets nothing until move 2; one that saw 0 gets 1 at once.
    behind = await client.get("/api/game/g1/events?since=0", headers=auth(user_of_seat(m, viewer)))
    assert (await _event(behind))[0] == "1"
    behind.close()
    current = await client.get(
        "/api/game/g1/events", headers={**auth(user_of_seat(m, viewer)), "Last-Event-ID": "1"}
    )
    seat = m.turn
    await games.apply_for_seat("g1", seat, __import__("core").PlayCard(m.legal_cards(seat)[0]))
    assert (await _event(current))[0] == "2"
    current.close()


async def test_stream_refusals_are_json(client) -> None:
    r = await client.get("/api/game/g1/events", headers=auth(999))
    assert r.status == 403 and (await r.json())["error"] == "not_seated"
    r = await client.get("/api/game/g1/events?since=abc", headers=auth(USERS[0]))
    assert r.status == 400


async def test_streams_per_user_are_limited(games) -> None:
    app = create_app(games, WebConfig(bot_token=TOKEN, streams_per_user=2, burst=100, rate=100))
    async with TestClient(TestServer(app)) as c:
        open_ = [await c.get("/api/game/g1/events", headers=auth(USERS[0])) for _ in range(2)]
        for r in open_:
            assert r.status == 200
            await _event(r)
        r = await c.get("/api/game/g1/events", headers=auth(USERS[0]))
        assert r.status == 429 and (await r.json())["error"] == "too_many_streams"
        for r in open_:
            r.close()


async def test_assets(client) -> None:
    r = await client.get("/")
    assert r.status == 200 and "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert "/static/tg.js" in await r.text()
    for path in (
        "/static/tg.js",
        "/static/table.js",
        "/static/table.css",
        "/static/fonts/Vazirmatn-Regular.woff2",
    ):
        assert (await client.get(path)).status == 200, path
    r = await client.get("/cards/classic/TH.svg")
    assert r.status == 200 and r.content_type == "image/svg+xml"
    again = await client.get("/cards/classic/TH.svg", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status == 304
    assert (await client.get("/cards/classic/10H.svg")).status == 404
    assert (await client.get("/static/../app.py")).status in (403, 404)
    fa = await (await client.get("/texts/fa.json")).json()
    en = await (await client.get("/texts/en.json")).json()
    assert fa["rtl"] is True and en["rtl"] is False and set(fa["texts"]) == set(en["texts"])
    assert (await client.get("/texts/de.json")).status == 404


@pytest.mark.slow
async def test_no_other_seats_card_in_any_api_payload_of_a_whole_match(games) -> None:
    """Every seat's GET, and every response to a play, at every move of a whole match."""
    m, _ = Match.new(Variant.four().with_options(target=2), seed=8)
    games.add("w", m, seats())
    rng = random.Random(8)
    app = create_app(games, WebConfig(bot_token=TOKEN, burst=10**6, rate=10**6))
    headers = {seat: auth(user_of_seat(m, seat)) for seat in range(4)}
    async with TestClient(TestServer(app)) as c:
        move = 0
        while not m.is_over:
            for seat in range(4):
                text = await (await c.get("/api/game/w", headers=headers[seat])).text()
                _assert_nothing_hidden(m, seat, text)
            seat = m.turn
            action = rng.choice(m.legal_actions(seat))
            from core.actions import action_to_dict

            r = await c.post(
                "/api/game/w/play",
                headers=headers[seat],
                json={"move": move, "action": action_to_dict(action)},
            )
            assert r.status == 200
            move += 1
            _assert_nothing_hidden(m, seat, await r.text())
    assert games.games["w"].move == move


def _assert_nothing_hidden(m: Match, seat: int, text: str) -> None:
    body = json.loads(text)
    view = body["view"]
    view.pop("first_draw")  # the face-up deal for the first hakem, shuffled back
    shown = set(CARD.findall(json.dumps(view)))
    hidden = {c.ascii for s in range(4) if s != seat for c in cards_in(m.hands[s])}
    assert not shown & hidden


# ----------------------------------------------------------------------------- fuzz

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_actions = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["play", "trump", "discard", "draw", "blind", "exchange", "bid", "x"]
        )
    },
    optional={
        "card": _json_values | st.sampled_from(["AS", "2C", "TD", "ZZ", "10H"]),
        "suit": _json_values | st.sampled_from(["S", "♥", "q"]),
        "cards": _json_values,
        "keep": _json_values,
        "tricks": _json_values,
    },
)
_bodies = st.one_of(
    _json_values,
    st.fixed_dictionaries(
        {"move": _json_values | st.integers(-3, 3), "action": _json_values | _actions}
    ),
)


@pytest.fixture(scope="module")
def fuzz_server():
    """One server for every example (hypothesis runs the examples synchronously)."""
    loop = asyncio.new_event_loop()
    games = MemoryGames()
    m = trick_play_match()
    games.add("g1", m, seats())
    client = TestClient(
        TestServer(create_app(games, WebConfig(bot_token=TOKEN, burst=10**6, rate=10**6))),
        loop=loop,
    )
    loop.run_until_complete(client.start_server())
    yield loop, client, games
    loop.run_until_complete(client.close())
    loop.close()


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=_bodies)
def test_fuzz_bodies_never_fail_badly(fuzz_server, body) -> None:
    """Any JSON body, from the player on turn: a clear 4xx, or a legal move."""
    loop, client, games = fuzz_server
    g = games.games["g1"]
    seat = g.match.turn
    headers = auth(user_of_seat(g.match, seat))

    async def go():
        r = await client.post("/api/game/g1/play", headers=headers, json=body)
        return r.status, await r.json()

    before = (g.move, g.match.to_json())
    status, got = loop.run_until_complete(go())
    if status == 200:
        assert g.move == before[0] + 1 and games.log[-1][1] == seat
    else:
        assert 400 <= status < 500 and isinstance(got.get("error"), str)
        assert (g.move, g.match.to_json()) == before


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_fuzz_raw_bytes(fuzz_server, raw) -> None:
    loop, client, games = fuzz_server
    g = games.games["g1"]

    async def go():
        r = await client.post(
            "/api/game/g1/play", headers=auth(user_of_seat(g.match, g.match.turn)), data=raw
        )
        return r.status

    before = g.move
    status = loop.run_until_complete(go())
    assert 400 <= status < 500 or (status == 200 and g.move == before + 1)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    # What a header can carry: printable ASCII.
    data=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=200),
    age=st.integers(DEFAULT_MAX_AGE + 1, 10**8),
)
def test_fuzz_initdata_over_http(fuzz_server, data, age) -> None:
    loop, client, _ = fuzz_server

    async def go(header):
        r = await client.get("/api/game/g1", headers={"Authorization": header})
        return r.status

    assert loop.run_until_complete(go("tma " + data)) == 401
    stale = init_data(TOKEN, USERS[0], auth_date=int(time.time()) - age)
    assert loop.run_until_complete(go("tma " + stale)) == 401
