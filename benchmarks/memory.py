"""Memory benchmark: does the bot keep anything per match played?

    python -m benchmarks.memory                      # 5,000 matches on SQLite
    python -m benchmarks.memory --matches 1000 --db postgresql://postgres@127.0.0.1/postgres

Matches are played to the end through the real service (``GameService`` with its
``Outbox`` and a database): a group opens a lobby, sets a 1-point match with easy
computers, seats three of them and starts; its one person plays each turn through
``GameService.act`` (the path of a button press after the handler), the computers
through the service's own turns. Several tables play at once. The Bot API is a stub
answering at once (what is measured is what the bot keeps, not the HTTP client's
buffers), so thousands of matches take minutes.

Printed at 100 finished matches and at every ``--every`` after that: this process's
RSS and the sizes of the service's and the outbox's per-game structures. The goal:
RSS after 5,000 matches within 15 MiB of RSS after 100. The same driver, on a small
count with tracemalloc, is ``tests/bot/test_memory.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from core import Match
from core.players import make_player
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.db import create_engine, migrate, session_factory
from telegram_bot.service.config import ServiceConfig
from telegram_bot.service.games import GameService

from . import procstat
from .botprocess import ROOT, fresh_database

MIB = 1024 * 1024
RESULTS = ROOT / "benchmarks" / "results"


class StubBot:
    """The outbox's side of the Bot API, answering at once."""

    username = "HokmBenchBot"

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.calls = 0

    async def _post(self, method: str, data: dict[str, Any]) -> Any:
        self.calls += 1
        if method == "sendMessage":
            return {"message_id": next(self._ids), "chat": {"id": data["chat_id"]}}
        return True

    # The python-telegram-bot methods, for an outbox that calls those (older commits).
    async def send_message(self, chat_id: int, **_: Any) -> Any:
        reply = await self._post("sendMessage", {"chat_id": chat_id})
        return SimpleNamespace(message_id=reply["message_id"])

    async def edit_message_text(self, **_: Any) -> Any:
        return await self._post("editMessageText", {})

    async def delete_message(self, **_: Any) -> Any:
        return await self._post("deleteMessage", {})


class Tables:
    """The real service on a database, and ``tables`` groups playing 1-point matches
    against easy computers, one person each."""

    def __init__(self, database_url: str, tables: int = 8) -> None:
        self.database_url = database_url
        self.count = tables
        self.finished = 0
        self.service: GameService | None = None
        self._engine: Any = None

    async def __aenter__(self) -> Tables:
        await migrate(self.database_url)
        self._engine = create_engine(self.database_url)
        sessions = session_factory(self._engine)
        config = ServiceConfig(bot_username=StubBot.username, computer_delay=0, hand_pause=0)
        self.service = GameService(sessions, Outbox(StubBot(), sessions), config)  # type: ignore[arg-type]
        await self.service.resume_all()
        self.people = [
            SimpleNamespace(id=1000 + t, first_name=f"P{t}", username=None, language_code="en")
            for t in range(self.count)
        ]
        async with sessions.begin() as s:
            for person in self.people:
                await repo.get_or_create_user(s, person.id, person.first_name, None, "en")
                await repo.mark_started(s, person.id)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.service is not None:
            await self.service.shutdown()
        if self._engine is not None:
            await self._engine.dispose()

    async def play(self, matches: int, on_finished: Callable[[int], None] | None = None) -> None:
        """Play until ``matches`` more have finished (whole rounds of every table)."""
        goal = self.finished + matches
        while self.finished < goal:
            tables = range(min(self.count, goal - self.finished))
            await asyncio.gather(*(self._match(t) for t in tables))
            for _ in tables:
                self.finished += 1
                if on_finished is not None:
                    on_finished(self.finished)

    async def _match(self, t: int) -> None:
        svc = self.service
        assert svc is not None
        person, chat_id = self.people[t], -1_000_000 - t

        async def admin() -> bool:
            return True

        error = await svc.open_lobby(chat_id, "group", f"Table {t}", person)
        assert error is None, error
        game = await svc.active_game(chat_id)
        assert game is not None
        for action, arg in [("o", "target=1"), ("o", "level=easy"), *[("b", "")] * 3, ("s", "")]:
            answer = await svc.lobby_action(game.id, person, action, arg, admin)
            assert not answer.alert, (action, arg, answer.text)
        player = make_player("easy", seed=self.finished + t)
        while True:
            await svc.idle()  # the computers' turns and the messages
            async with svc.sessions() as s:
                game = await repo.get_game(s, game.id)
            assert game is not None
            if game.status != "playing":
                assert game.status == "finished", game.status
                return
            match = Match.from_json(game.state)
            seat = next(i for i in range(match.n) if game.seats[match.order[i]].get("user_id"))
            assert match.turn == seat, "the computers stopped on their own turn"
            answer = await svc.act(game.id, None, person.id, lambda m, me: player.act(m.view(me)))
            assert not answer.alert, answer.text


def per_game_state(service: GameService) -> dict[str, int]:
    """Sizes of every structure of the service and its outbox that holds something per
    game, per chat or per user (all bounded or emptied when games end)."""
    sizes = {f"service.{name}": size for name, size in service.sizes().items()}
    sizes |= {f"outbox.{name}": size for name, size in service.outbox.sizes().items()}
    return sizes


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    readings: list[dict[str, Any]] = []
    marks = {100, opts.matches, *range(opts.every, opts.matches + 1, opts.every)}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hokm-memory-") as tmp:
        async with fresh_database(opts.db, Path(tmp)) as url, Tables(url, opts.tables) as tables:
            assert tables.service is not None

            def finished(n: int) -> None:
                if n not in marks:
                    return
                gc.collect()
                state = per_game_state(tables.service)  # type: ignore[arg-type]
                rss = procstat.rss_bytes(os.getpid()) / MIB
                reading = {
                    "matches": n,
                    "rss_mib": round(rss, 1),
                    "seconds": round(time.perf_counter() - started, 1),
                    "load": procstat.load_average(),
                    "state": {k: v for k, v in state.items() if v},
                }
                readings.append(reading)
                print(
                    f"{n:>6} matches  RSS {rss:6.1f} MiB  {reading['seconds']:>7} s"
                    f"  load {reading['load'][0]:.2f}  non-empty: {reading['state']}",
                    flush=True,
                )

            await tables.play(opts.matches, finished)
    first = next(r for r in readings if r["matches"] == 100)
    last = readings[-1]
    growth = round(last["rss_mib"] - first["rss_mib"], 1)
    print(
        f"RSS after {last['matches']} matches {last['rss_mib']} MiB, after 100"
        f" {first['rss_mib']} MiB: growth {growth} MiB (goal: within 15 MiB)"
    )
    return {"readings": readings, "rss_growth_mib": growth}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.memory", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--matches", type=int, default=5000)
    p.add_argument("--tables", type=int, default=8, help="groups playing at once")
    p.add_argument("--every", type=int, default=500, help="read RSS every this many matches")
    p.add_argument("--db", default="sqlite", help="'sqlite' or a postgresql:// URL of a server")
    p.add_argument("--out", type=Path, help="JSON results file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    started = datetime.now(UTC)
    print(
        f"load average {procstat.load_average()}  cores {os.cpu_count()}  db {opts.db}"
        f"  tables {opts.tables}  matches {opts.matches}",
        flush=True,
    )
    result = asyncio.run(run(opts))
    report = {
        "started": started.isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks.memory", *sys.argv[1:]]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "options": {k: v for k, v in vars(opts).items() if k != "out"},
        **result,
    }
    out = opts.out or RESULTS / f"memory-{started:%Y%m%dT%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
    print(f"written to {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
