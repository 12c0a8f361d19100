"""What the tests of the Mini App served by the real bot share (one bot process in
test_wired.py and test_open_pages.py, the cluster in test_cluster_pages.py): a
started group table, a page's initData, a seat's event stream, a move posted by a
page."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from core import Match
from core.actions import Action, action_to_dict
from testkit.simulation import TOKEN, Table
from testkit.webapp import init_data

WEBAPP_URL = "https://hokm.example/app"
#: What a card may cost the chat (turn reminders aside: the timer is off).
CHAT_METHODS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")


def webapp_env(port: int) -> dict[str, str]:
    """A cluster's settings for its ingress to serve the Mini App on ``port``."""
    return {
        "HOKM_WEBAPP_URL": WEBAPP_URL,
        "HOKM_WEBAPP_LISTEN": "127.0.0.1",
        "HOKM_WEBAPP_PORT": str(port),
    }


async def started_table(emu, runner, target: int = 7):
    """Four people at a started group match (timer off); returns (table, game)."""
    people = [emu.add_user(n, language_code="fa") for n in ["سارا", "علی", "مریم", "رضا"]]
    for u in people:
        await emu.send_message(u, u.private_chat_id, "/start")
    group = emu.add_group("حکم", members=people, admins=[people[0]])
    await runner.settle()
    await emu.send_message(people[0], group.id, "/newgame")
    await runner.settle()
    table = Table(emu, runner, group, people)
    game = await table.game()
    lobby = emu.chat_log(group.id)[-1]
    for name, value in {"timer": 0, "target": target}.items():
        await emu.press(people[0], group.id, lobby.message_id, f"o:{game.id}::{name}={value}")
        await runner.settle()
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, f"j:{game.id}")
        await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, f"s:{game.id}")
    await runner.settle()
    game = await table.game()
    assert game.status == "playing"
    return table, game


def auth(user_id: int) -> dict[str, str]:
    """The header of a page opened by ``user_id`` (signed with the bot's token)."""
    return {"Authorization": "tma " + init_data(TOKEN, user_id, "P")}


def seat_users(game, match: Match) -> list[int]:
    return [int(game.seats[match.order[s]]["user_id"]) for s in range(match.n)]


async def post_play(http, base: str, game_id: str, user_id: int, body: dict[str, Any]) -> Any:
    """A page's play, answered 200 (its view returned). A 429 (a test plays far faster
    than a person: the per-user limit of 5 a second after a burst of 30) is waited
    out as its Retry-After says and the play sent again, as a person would press
    again; any other answer fails the test."""
    for _ in range(20):
        async with http.post(
            f"{base}/api/game/{game_id}/play", headers=auth(user_id), json=body
        ) as r:
            answer = await r.json()
            if r.status != 429:
                assert r.status == 200, answer
                return answer["view"]
        await asyncio.sleep(float(answer.get("retry_after", 1.0)))
    raise AssertionError(f"the page's play was refused 20 times: {answer}")


async def post_move(http, base: str, game, users: list[int]) -> tuple[Match, Action]:
    """The seat on turn's first legal move in ``game`` (as stored), posted by its page
    to the web server at ``base``; returns the match before it and the move."""
    match = Match.from_json(game.state)
    action = match.legal_actions(match.turn)[0]
    body = {"move": game.move, "action": action_to_dict(action)}
    await post_play(http, base, game.id, users[match.turn], body)
    return match, action


async def play(http, base, runner, table, users) -> tuple[Match, Action]:
    """One move by the seat on turn, through the page's API, and what it sends sent."""
    moved = await post_move(http, base, await table.game(), users)
    await runner.settle()
    return moved


class Stream:
    """One seat's open page without a browser: its event stream, read to the end."""

    def __init__(self, http: aiohttp.ClientSession, base: str, game_id: str, user_id: int):
        self.http, self.base, self.game_id, self.user_id = http, base, game_id, user_id
        self.views: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()
        self.task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        self.task = asyncio.create_task(self._read())
        await self.until(lambda: bool(self.views))

    async def _read(self) -> None:
        url = f"{self.base}/api/game/{self.game_id}/events"
        async with self.http.get(url, headers=auth(self.user_id)) as resp:
            assert resp.status == 200, await resp.text()
            data: list[str] = []
            async for raw in resp.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    view = json.loads("\n".join(data))
                    data = []
                    async with self.changed:
                        self.views.append(view)
                        self.changed.notify_all()

    async def until(self, predicate) -> None:
        # A guard against a hang only (a failure): the wait itself is on progress.
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(predicate), 120)

    async def at(self, move: int) -> dict[str, Any]:
        await self.until(lambda: bool(self.views) and self.views[-1]["move"] >= move)
        return self.views[-1]

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
