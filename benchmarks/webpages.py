"""Open Mini App pages on one process: what they cost and how fast they follow.

The real bot (one process, SQLite, the Mini App on a loopback port) against the Bot
API emulator. ``--tables`` four-person tables each make one move every ``--every``
seconds through the page's API (the service's path). With ``--pages``, every seat
has its page open: an event stream (no browser) read to the end, so ``4 x tables``
open pages. Reported:

- move -> all pages: from the move's request to the last of the table's four
  streams receiving it, p50 and p99;
- CPU per move: this process's CPU time (the bot, the emulator and the clients)
  over the moves made, to compare with the same load without pages;
- Bot API calls per card (the emulator's count of sendMessage, edits and deletes);
- tables one bot token holds at a card every 3 s within the shared limiter's 22
  calls a second: 22 x 3 / (calls per card).

    .venv/bin/python -m benchmarks.webpages --tables 50 --seconds 60 --pages
    .venv/bin/python -m benchmarks.webpages --tables 50 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import tempfile
import time
from typing import Any

import aiohttp

from core import Match, PlayCard
from core.actions import action_to_dict
from telegram_bot.platform.storage import repo
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner
from testkit.webapp import init_data

CHAT_METHODS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")
#: The shared limiter's budget of messages and edits a second (docs/performance.md).
LIMITER_RATE = 22


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _auth(user_id: int) -> dict[str, str]:
    return {"Authorization": "tma " + init_data(TOKEN, user_id, "P")}


async def _table(emu: BotApiEmulator, runner: BotRunner, n: int) -> tuple[str, list[int]]:
    """A started four-person group match (timer off): its id and its seats' users."""
    people = [emu.add_user(f"P{n}-{i}", language_code="fa") for i in range(4)]
    for u in people:
        await emu.send_message(u, u.private_chat_id, "/start")
    group = emu.add_group(f"T{n}", members=people, admins=[people[0]])
    await runner.settle()
    await emu.send_message(people[0], group.id, "/newgame")
    await runner.settle()
    async with runner.service.sessions() as s:
        game = await repo.get_active_game(s, group.id)
    lobby = emu.chat_log(group.id)[-1]
    await emu.press(people[0], group.id, lobby.message_id, f"o:{game.id}::timer=0")
    for p in people[1:]:
        await emu.press(p, group.id, lobby.message_id, f"j:{game.id}")
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, f"s:{game.id}")
    await runner.settle()
    async with runner.service.sessions() as s:
        game = await repo.get_game(s, game.id)
    match = Match.from_json(game.state)
    return game.id, [int(game.seats[match.order[s]]["user_id"]) for s in range(4)]


class Page:
    """One seat's open page: its event stream, the time each move reached it."""

    def __init__(self, http: aiohttp.ClientSession, base: str, game_id: str, user: int):
        self.http, self.base, self.game_id, self.user = http, base, game_id, user
        self.seen: dict[int, float] = {}
        self.ready = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        url = f"{self.base}/api/game/{self.game_id}/events"
        async with self.http.get(url, headers=_auth(self.user), timeout=None) as resp:
            async for raw in resp.content:
                if raw.startswith(b"id: "):
                    self.seen.setdefault(int(raw[4:]), time.perf_counter())
                    self.ready.set()


async def run(tables: int, seconds: float, every: float, pages: bool) -> dict[str, Any]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/bench.sqlite3"
        async with BotApiEmulator(token=TOKEN, bot_username="HokmBench", bot_name="H") as emu:
            runner = BotRunner(
                emu,
                url,
                webapp_url="https://hokm.example/",
                webapp_listen="127.0.0.1",
                webapp_port=port,
            )
            await runner.start()
            base = f"http://127.0.0.1:{port}"
            try:
                games = [await _table(emu, runner, n) for n in range(tables)]
                conn = aiohttp.TCPConnector(limit=0)
                async with aiohttp.ClientSession(connector=conn) as http:
                    open_pages: dict[str, list[Page]] = {}
                    if pages:
                        for game_id, users in games:
                            open_pages[game_id] = [Page(http, base, game_id, u) for u in users]
                        for ps in open_pages.values():
                            for p in ps:
                                await p.ready.wait()
                    await runner.settle()
                    return await _play(emu, runner, http, base, games, open_pages, seconds, every)
            finally:
                await runner.stop()


async def _play(emu, runner, http, base, games, open_pages, seconds, every) -> dict[str, Any]:
    latencies: list[float] = []
    moves = cards = 0
    mark = emu.mark()
    stop = time.perf_counter() + seconds

    sent: list[tuple[str, int, float]] = []
    missed = 0

    async def table(game_id: str, users: list[int]) -> None:
        nonlocal moves, cards
        await asyncio.sleep(random.random() * every)
        while time.perf_counter() < stop:
            tick = time.perf_counter()
            async with runner.service.sessions() as s:
                game = await repo.get_game(s, game_id)
            if game.status != "playing":
                return
            match = Match.from_json(game.state)
            action = match.legal_actions(match.turn)[0]
            body = {"move": game.move, "action": action_to_dict(action)}
            t0 = time.perf_counter()
            async with http.post(
                f"{base}/api/game/{game_id}/play", headers=_auth(users[match.turn]), json=body
            ) as r:
                if r.status != 200:
                    raise RuntimeError(await r.text())
            moves += 1
            cards += isinstance(action, PlayCard)
            sent.append((game_id, game.move + 1, t0))
            await asyncio.sleep(max(0.0, every - (time.perf_counter() - tick)))

    cpu0, wall0, load0 = time.process_time(), time.perf_counter(), os.getloadavg()[0]
    await asyncio.gather(*(table(g, u) for g, u in games))
    await runner.settle()
    for game_id, move, t0 in sent:
        ps = open_pages.get(game_id)
        if not ps:
            continue
        give_up = time.perf_counter() + 10
        while not all(move in p.seen for p in ps) and time.perf_counter() < give_up:
            await asyncio.sleep(0.05)  # the streams still reading (each time is stamped)
        if all(move in p.seen for p in ps):
            latencies.append(max(p.seen[move] for p in ps) - t0)
        else:
            missed += 1
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    calls = emu.count_calls(CHAT_METHODS, since=mark)
    per_card = calls / max(cards, 1)
    lat = sorted(latencies)
    return {
        "tables": len(games),
        "pages": sum(len(p) for p in open_pages.values()),
        "moves": moves,
        "cards": cards,
        "wall_s": round(wall, 1),
        "cpu_ms_per_move": round(1000 * cpu / max(moves, 1), 2),
        "move_to_all_pages_ms_p50": round(1000 * statistics.median(lat), 1) if lat else None,
        "move_to_all_pages_ms_p99": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1)
        if lat
        else None,
        "moves_a_page_never_got": missed,
        "bot_api_calls_per_card": round(per_card, 2),
        "tables_per_token_at_3s": int(LIMITER_RATE * 3 / per_card) if per_card else None,
        "load_average_1m": [round(load0, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--every", type=float, default=3.0, help="seconds between a table's moves")
    parser.add_argument("--pages", action="store_true", help="every seat has its page open")
    args = parser.parse_args()
    result = asyncio.run(run(args.tables, args.seconds, args.every, args.pages))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
