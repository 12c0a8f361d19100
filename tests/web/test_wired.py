"""The Mini App served by the real bot (``HOKM_WEBAPP_URL``), against the Bot API
emulator: a page's move takes the service's path and the chat follows; every move,
from anywhere, reaches the open pages; a table whose people all have the page open
costs at most one Bot API call per card; and no payload of a whole match played
through the service shows another seat's card.

The browser test needs Chromium and Playwright (see test_browser.py); the others
use HTTP and event-stream clients only.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from core import Match, Phase, PlayCard
from core.actions import action_to_dict
from core.cards import cards_in
from telegram_bot.platform.live import PgBus
from telegram_bot.platform.storage import repo
from telegram_bot.runtime.cluster import free_port
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner, buttons
from testkit.webapp import init_data, page_hash
from tests.dbutil import fresh_database_url
from tests.web.pages import (
    CHAT_METHODS,
    WEBAPP_URL,
    Stream,
    auth,
    post_play,
    seat_users,
    started_table,
)

CARD = re.compile(r"\b[2-9TJQKA][SHDC]\b")


@pytest.fixture
async def served(emu, tmp_path) -> AsyncIterator[tuple[BotRunner, str]]:
    """The real bot with its Mini App on a loopback port."""
    port = free_port()
    async with fresh_database_url("sqlite", tmp_path) as url:
        runner = BotRunner(
            emu,
            url,
            webapp_url=WEBAPP_URL,
            webapp_listen="127.0.0.1",
            webapp_port=port,
            webapp_short_name="table",
        )
        await runner.start()
        try:
            yield runner, f"http://127.0.0.1:{port}"
        finally:
            await runner.stop()


def _hidden_from(match: Match, seat: int) -> set[str]:
    hidden = {c.ascii for s in range(match.n) if s != seat for c in cards_in(match.hands[s])}
    hidden |= {c.ascii for c in match.stock}
    return hidden


def _assert_nothing_hidden(match: Match, seat: int, view: dict[str, Any]) -> int:
    view = dict(view)
    view.pop("first_draw", None)  # the face-up deal for the first hakem, shuffled back
    shown = set(CARD.findall(json.dumps(view)))
    leaked = shown & _hidden_from(match, seat)
    assert not leaked, f"seat {seat} was shown {leaked}"
    return len(shown)


@pytest.mark.slow
async def test_a_whole_match_through_the_service_with_every_page_open(emu, served) -> None:
    """Every move of a whole match (several hands) made by the pages (the service's
    path): every seat's stream follows it, no payload shows another seat's card, and
    the chat costs at most a third of a Bot API call per card on average."""
    runner, base = served
    table, game = await started_table(emu, runner, target=2)
    match = Match.from_json(game.state)
    users = seat_users(game, match)
    cards = calls = 0
    async with aiohttp.ClientSession() as http:
        streams = [Stream(http, base, game.id, uid) for uid in users]
        for stream in streams:
            await stream.open()
        checked = 0
        while True:
            await runner.settle()
            game = await table.game()
            match = Match.from_json(game.state)
            # At this moment, every seat's newest payload on its stream. (A GET per seat
            # and move would pass the per-user rate limit: the play's answer is checked.)
            for seat, stream in enumerate(streams):
                view = await stream.at(game.move)
                assert view["move"] == game.move
                _assert_nothing_hidden(match, seat, view)
                checked += 1
            if game.status != "playing":
                break
            seat = match.turn
            action = match.legal_actions(seat)[0]
            mark = emu.mark()
            body = {"move": game.move, "action": action_to_dict(action)}
            answer = await post_play(http, base, game.id, users[seat], body)
            await runner.settle()
            # Every move's calls (the trump call's, the hand result's too), per card.
            calls += emu.count_calls(CHAT_METHODS, since=mark)
            cards += isinstance(action, PlayCard)
            game = await table.game()
            if answer["move"] == game.move:  # nothing moved since (no computer seats)
                _assert_nothing_hidden(Match.from_json(game.state), seat, answer)
                checked += 1
        for stream in streams:
            await stream.close()
    assert match.is_over and cards >= 52
    assert checked > 4 * cards
    # Every page open: the group table once a trick and at the trump call, the hand's
    # result, and the hands only at the match's end (a press would add its answer):
    # within the 1/3 call a card that lets one token hold 200 tables at a card every
    # 3 s (the limiter's 22 calls/s).
    print("calls per card with every page open", calls, cards)
    assert calls / cards <= 22 * 3 / 200, (calls, cards)


@pytest.mark.slow
async def test_without_pages_the_chat_is_as_before(emu, served) -> None:
    """The same moves with no page open cost the chat what a press costs it (the
    table and two hands), and every hand message has the page's button."""
    runner, base = served
    table, game = await started_table(emu, runner)
    match = Match.from_json(game.state)
    users = seat_users(game, match)
    for uid in users:
        kb = buttons(table.hand_message(game, table.users[uid]))
        apps = [b["web_app"]["url"] for b in kb if "web_app" in b]
        assert apps == [f"{WEBAPP_URL}?game={game.id}"], kb
    group_kb = buttons(emu.chat_log(table.chat.id)[-1])
    assert any(b.get("url", "").endswith(f"/table?startapp={game.id}") for b in group_kb)
    calls = cards = 0
    async with aiohttp.ClientSession() as http:
        for _ in range(8):
            await runner.settle()
            game = await table.game()
            match = Match.from_json(game.state)
            action = match.legal_actions(match.turn)[0]
            mark = emu.mark()
            body = {"move": game.move, "action": action_to_dict(action)}
            async with http.post(
                f"{base}/api/game/{game.id}/play", headers=auth(users[match.turn]), json=body
            ) as r:
                assert r.status == 200, await r.text()
            await runner.settle()
            if isinstance(action, PlayCard):
                cards += 1
                calls += emu.count_calls(CHAT_METHODS, since=mark)
        # A stale move number is refused and changes nothing.
        async with http.post(
            f"{base}/api/game/{game.id}/play",
            headers=auth(users[match.turn]),
            json={"move": game.move, "action": action_to_dict(action)},
        ) as r:
            assert r.status == 409 and (await r.json())["error"] == "stale_move"
    assert cards >= 6
    print("calls per card without pages", calls, cards)
    assert calls / cards > 1.5, (calls, cards)  # the table and the hands, every card


async def test_moves_cross_processes_by_notify(emu, tmp_path) -> None:
    """On PostgreSQL every stored move, a chat press too, is NOTIFYed in its
    transaction by a worker: another process's bus (the cluster's ingress) hears it.
    (Without a Mini App configured, nothing is sent: the bot is as it was.)"""
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        # A cluster's worker: the Mini App configured, served by another process.
        runner = BotRunner(emu, url, shared=True, webapp_url=WEBAPP_URL)
        await runner.start()
        bus = PgBus(url)
        try:
            await bus.start()
            table, game = await started_table(emu, runner)
            match = Match.from_json(game.state)
            users = seat_users(game, match)
            async with bus.subscribe(game.id) as sub:
                await table.step({users[match.turn]: lambda view: view.legal[0]})
                moved = await asyncio.wait_for(sub.next(), 60)  # a guard against a hang
            stored = await table.game()
            assert moved == stored.move == game.move + 1
            assert bus.received >= 1
        finally:
            await bus.close()
            await runner.stop()


async def test_the_cluster_ingress_serves_the_page(tmp_path) -> None:
    """With HOKM_WEBAPP_URL the cluster's ingress serves the Mini App (its API reads
    the shared database); stopping the ingress stops it."""
    from telegram_bot.runtime.cluster import run_ingress
    from telegram_bot.runtime.config import Settings

    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        async with BotApiEmulator(token=TOKEN, bot_username="HokmIngressBot") as emu:
            web_port = free_port()
            settings = Settings(
                token=TOKEN,
                database_url=url,
                api_url=emu.base_url,
                webhook_url="http://127.0.0.1:1",
                webhook_listen="127.0.0.1",
                webhook_port=free_port(),
                rate_limit=False,
                sweep_seconds=0.0,
                webapp_url=WEBAPP_URL,
                webapp_listen="127.0.0.1",
                webapp_port=web_port,
            )
            stop = asyncio.Event()
            ingress = asyncio.create_task(run_ingress(settings, stop))
            base = f"http://127.0.0.1:{web_port}"
            async with aiohttp.ClientSession() as http:
                while True:  # until the page is served (or the ingress failed)
                    assert not ingress.done(), ingress.exception()
                    try:
                        async with http.get(f"{base}/") as r:
                            if r.status == 200:
                                break
                    except aiohttp.ClientConnectionError:
                        pass
                    await asyncio.sleep(0.05)
                async with http.get(f"{base}/api/game/nosuch", headers=auth(7)) as r:
                    assert r.status == 404 and (await r.json())["error"] == "no_such_game"
                async with http.get(f"{base}/api/game/nosuch") as r:
                    assert r.status == 401
            stop.set()
            await ingress
            async with aiohttp.ClientSession() as http:
                with pytest.raises(aiohttp.ClientConnectionError):
                    await http.get(f"{base}/")


# ------------------------------------------------------------------------ browser

try:
    from tests.web.test_browser import ARGS, CHROMIUM, MISSING, REQUIRED
except Exception:  # pragma: no cover - the browser module's imports
    MISSING, REQUIRED = "tests.web.test_browser could not be imported", False

browser_only = pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=str(MISSING))


@pytest.mark.slow
@browser_only
async def test_a_page_plays_through_the_real_bot(emu, served) -> None:
    if MISSING is not None:
        pytest.fail(f"HOKM_TEST_BROWSER=1 but {MISSING}")
    from playwright.async_api import async_playwright, expect

    runner, base = served
    table, game = await started_table(emu, runner)
    match = Match.from_json(game.state)
    users = seat_users(game, match)
    # The hakem names trump in the chat.
    await table.step({users[match.turn]: lambda view: view.legal[0]})
    game = await table.game()
    match = Match.from_json(game.state)
    assert match.phase is Phase.PLAY
    leader = match.turn
    follower = (leader + 1) % 4
    group_before = emu.chat_log(table.chat.id)

    def table_text() -> str:
        slot = [m for m in emu.chat_log(table.chat.id) if m.from_bot]
        return "\n".join(m.text for m in slot)

    before = table_text()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            pages = []
            for seat in (leader, follower):
                ctx = await browser.new_context(
                    viewport={"width": 390, "height": 844}, has_touch=True
                )
                page = await ctx.new_page()
                data = init_data(TOKEN, users[seat], "P", language_code="fa")
                # The web_app button's URL, as Telegram opens it (with the hash).
                url = WEBAPP_URL + f"?game={game.id}"
                path = url.removeprefix(WEBAPP_URL)
                await page.goto(f"{base}/{path}{page_hash(data)}")
                pages.append(page)
            mine, other = pages
            await expect(mine.locator("#hand .card")).to_have_count(13)
            await expect(other.locator("#hand .card")).to_have_count(13)
            card = await mine.locator("#hand .card.legal").first.get_attribute("data-card")
            await mine.locator(f'#hand .card[data-card="{card}"]').tap(
                position={"x": 6, "y": 30}, force=True
            )
            await expect(mine.locator("#hand .card")).to_have_count(12)
            # The second player's page follows without reloading.
            await expect(other.locator(f'#trick .tc[data-card="{card}"]')).to_have_count(1)
            await runner.settle()
            async with runner.service.sessions() as s:
                stored = await repo.get_game(s, game.id)
            assert stored.move == game.move + 1
            played = Match.from_json(stored.state)
            assert [c.ascii for _, c in played.trick] == [card]
            # The group's table in the emulator changed (two of four pages open: the
            # chat follows every card).
            assert table_text() != before
            assert len(emu.chat_log(table.chat.id)) >= len(group_before)
            # A card played in the chat reaches both pages.
            await table.step({users[follower]: lambda view: view.legal[0]})
            async with runner.service.sessions() as s:
                stored = await repo.get_game(s, game.id)
            second = Match.from_json(stored.state).trick[1][1].ascii
            for page in pages:
                await expect(page.locator(f'#trick .tc[data-card="{second}"]')).to_have_count(1)
        finally:
            await browser.close()
