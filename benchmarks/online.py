"""Online tables of strangers (/online): matching, Bot API calls and CPU per card.

The real bot in its own processes against the Bot API emulator, on PostgreSQL:
``--mode one`` (one process: long polling, the Mini App on a loopback port) or
``--mode cluster`` (the webhook ingress, which serves the Mini App, and ``--workers``
workers: :func:`testkit.restartable.cluster`), or ``--mode both`` one after the other
in the same run. ``4 x --tables`` people, all Persian-speaking newcomers, send /online
over ``--spread`` seconds and press "4 players"; the bots' own matching loops seat
them (``HOKM_ONLINE_INTERVAL``, 1 s by default, as in production). At each table three
people have the Mini App page open (its event stream read, as
:mod:`benchmarks.webpages` does) and play through the page's API once their page
shows the move; the fourth (the fourth seat) never opens it and plays from the hand
message's buttons once the hand message offers the card. Everyone thinks ``--think``
seconds (on average) before each action and plays the lowest legal card. Each table
plays ``--cards`` cards of its first hand, then stops: 24 by default (the deal, the
trump call and six tricks), to keep a run of both modes near 3 minutes on 2 cores;
``--cards 52`` plays the whole first hand (it ends at seven tricks), its result too.

Reported per mode:

- matching time, p50 and p99: from the press of "4 players" to the bot's call that
  sends "A table is ready" (the emulator's clock for both), and, as parts of it, the
  press's answer (the person queued) and the creation of their game (seated; the rest
  is the outbox delivering);
- Bot API calls per card: the emulator's count of sendMessage, edits and deletes from
  the first card to the end (everything the bot sent meanwhile, turn reminders and
  the end-of-hand messages too), and of all methods;
- the busiest second of calls that count against Telegram's flood limits (30 a second
  per bot) and the busiest chat's busiest minute (20 a minute per chat) and second;
  and the tables one bot token holds at a card every 3 s within the shared limiter's
  22 calls a second (22 x 3 / chat calls per card, as :mod:`benchmarks.webpages`);
- CPU per card, over the play: every bot process (with its children), the PostgreSQL
  backends of this run's database, and this process (the emulator and the people);
- the load average (1 min) before, at its highest during and after the play.

Client-side pacing (``HOKM_RATE_LIMIT``) is off by default, so the counts are what the
bot asks for; ``--limiter`` turns it on and makes the emulator refuse calls beyond
Telegram's limits (the refusals are reported).

    .venv/bin/python -m benchmarks.online --mode both --tables 50
    .venv/bin/python -m benchmarks.online --mode cluster --tables 50 --limiter
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import select, text

from core import ChooseTrump, Match, PlayCard
from core.actions import action_to_dict
from telegram_bot.chat.i18n import get_translator
from telegram_bot.platform.storage.db import create_engine, migrate, normalize_url, session_factory
from telegram_bot.platform.storage.models import Game
from telegram_bot.service.online_seats import ONLINE_CHAT_BASE
from telegram_bot.service.online_tables import SEATED
from testkit.emulator import BotApiEmulator
from testkit.emulator.limits import COUNTED_METHODS
from testkit.emulator.models import SimulationError
from testkit.restartable import Restartable, cluster, run_stopping_on_sigterm
from testkit.simulation import buttons, lowest_card
from testkit.webapp import init_data

from . import procstat
from .botprocess import fresh_database

TOKEN = "424242:ONLINE-BENCH"
CHAT_METHODS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")
DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/postgres"
WEBAPP_URL = "https://hokm.example/"
#: Telegram's limits (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this).
PER_BOT_SECOND, PER_CHAT_MINUTE = 30, 20
#: The shared limiter's budget of messages and edits a second (docs/performance.md).
LIMITER_RATE = 22


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _auth(user_id: int) -> dict[str, str]:
    return {"Authorization": "tma " + init_data(TOKEN, user_id, "P")}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _busiest(times: list[float], window: float) -> int:
    """The most of ``times`` within one ``window`` of seconds."""
    times = sorted(times)
    most = first = 0
    for last, t in enumerate(times):
        while times[first] <= t - window:
            first += 1
        most = max(most, last - first + 1)
    return most


class Page:
    """One seat's open page: its event stream, and the newest move it has shown."""

    def __init__(self, http: aiohttp.ClientSession, base: str, game_id: str, user: int):
        self.http, self.base, self.game_id, self.user = http, base, game_id, user
        self.move = -1
        self.reconnects = 0
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        """Read the stream; when it ends or fails, open it again from the last move
        seen after the 2 s it asks for (``retry:``), as a browser's EventSource does."""
        url = f"{self.base}/api/game/{self.game_id}/events"
        while True:
            headers = _auth(self.user)
            if self.move >= 0:
                headers["Last-Event-ID"] = str(self.move)
            try:
                async with self.http.get(url, headers=headers, timeout=None) as resp:
                    async for raw in resp.content:
                        if raw.startswith(b"id: "):
                            self.move = max(self.move, int(raw[4:]))
                            self.changed.set()
            except (aiohttp.ClientError, ValueError):
                pass
            self.reconnects += 1
            await asyncio.sleep(2.0)

    async def shows(self, move: int) -> None:
        while self.move < move:
            self.changed.clear()
            await self.changed.wait()


class Run:
    """One mode's bots, people and tables."""

    def __init__(self, emu: BotApiEmulator, url: str, args: argparse.Namespace, log_dir: Path):
        self.emu, self.url, self.args, self.log_dir = emu, url, args, log_dir
        self.port = _free_port()
        self.procs: list[Restartable] = []
        self.engine = create_engine(url, pool_size=5, max_overflow=0, pool_timeout=600)
        self.sessions = session_factory(self.engine)
        self.cards = 0
        self.problems: list[str] = []
        self.seated_text = get_translator("fa")(SEATED).split("{")[0]

    def env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HOKM_", "DATABASE_URL"))}
        base.pop("PYTHONPATH", None)
        hook = _free_port()
        env = {
            **base,
            "BOT_TOKEN": self.emu.token,
            "TELEGRAM_API_URL": self.emu.base_url.removesuffix("/bot"),
            "DATABASE_URL": self.url,
            "HOKM_RATE_LIMIT": "1" if self.args.limiter else "0",
            "HOKM_THINK_PROCESSES": "0",
            "HOKM_ONLINE_WAIT": "600",  # nobody is offered the computers
            "HOKM_WEBAPP_URL": WEBAPP_URL,
            "HOKM_WEBAPP_LISTEN": "127.0.0.1",
            "HOKM_WEBAPP_PORT": str(self.port),
            "PYTHONUNBUFFERED": "1",
        }
        if self.args.mode_now == "cluster":
            env.update(
                {
                    "WEBHOOK_URL": f"http://127.0.0.1:{hook}",
                    "WEBHOOK_LISTEN": "127.0.0.1",
                    "WEBHOOK_PORT": str(hook),
                    "WEBHOOK_SECRET": "online-bench",
                    # The ingress serves the Mini App; only the workers match.
                }
            )
        return env

    async def start(self) -> None:
        env = self.env()
        if self.args.mode_now == "cluster":
            ingress, workers = cluster(env, self.log_dir, self.args.workers)
            self.procs = [ingress, *workers]
            await ingress.start()
            await asyncio.gather(*(w.start() for w in workers))
        else:
            polls = self.emu.count_calls("getUpdates")

            def ready(_proc: Restartable):
                return lambda: self.emu.count_calls("getUpdates") > polls

            one = Restartable("telegram_bot", [], env, self.log_dir / "one.log", ready)
            self.procs = [one]
            await one.start()
        while not _listening(self.port):  # the Mini App is up
            if not all(p.alive() for p in self.procs):
                raise RuntimeError(f"a bot process exited; see {self.log_dir}")
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        await asyncio.gather(*(p.stop() for p in self.procs))
        await self.engine.dispose()

    # ------------------------------------------------------------------ matching

    async def join(
        self, user: Any, delay: float, pressed: dict[int, float], queued: dict[int, float]
    ) -> None:
        await asyncio.sleep(delay)
        await self.emu.send_message(user, user.private_chat_id, "/online")

        def menu() -> Any:
            for m in self.emu.chat_log(user.private_chat_id):
                if m.from_bot and any(b.get("callback_data") == "q:::4" for b in buttons(m)):
                    return m
            return None

        await self.emu.wait_until(lambda: menu() is not None, timeout=120)
        pressed[user.id] = time.time()
        handle = await self.emu.press(user, user.private_chat_id, menu().message_id, "q:::4")
        await handle.wait_answer(timeout=120)
        queued[user.id] = time.time() - pressed[user.id]  # the press answered: queued

    def seated_at(self, user: Any, after: float) -> float | None:
        for call in self.emu.calls_to("sendMessage", user.private_chat_id):
            if call.time >= after and self.seated_text in str(call.params.get("text", "")):
                return call.time
        return None

    async def games(self) -> list[Game]:
        async with self.sessions() as s:
            return list(
                (
                    await s.scalars(
                        select(Game).where(
                            Game.chat_id <= ONLINE_CHAT_BASE, Game.status == "playing"
                        )
                    )
                ).all()
            )

    # ---------------------------------------------------------------------- play

    async def game(self, game_id: str) -> Game:
        async with self.sessions() as s:
            return await s.get(Game, game_id)

    async def table(self, game: Game, pages: dict[int, Page], people: dict[int, Any]) -> None:
        """Play the table's cards: the page people through the API, the other from the
        hand message's buttons."""
        rng = random.Random(game.id)
        played = 0
        http = next(iter(pages.values())).http
        base = f"http://127.0.0.1:{self.port}"
        while played < self.args.cards:
            game = await self.game(game.id)
            if game.status != "playing":
                return
            match = Match.from_json(game.state)
            if match.hand_no > 1:  # the first hand is over
                return
            uid = game.seats[match.order[match.turn]].get("user_id")
            if uid is None:  # a computer's turn (a seat forfeited): let it play
                await asyncio.sleep(0.1)
                continue
            action = lowest_card(match.view(match.turn))
            if uid in pages:
                await pages[uid].shows(game.move)
                await asyncio.sleep(rng.uniform(0.5, 1.5) * self.args.think)
                body = {"move": game.move, "action": action_to_dict(action)}
                async with http.post(
                    f"{base}/api/game/{game.id}/play", headers=_auth(uid), json=body
                ) as r:
                    if r.status != 200:
                        self.problems.append(f"page play {r.status}: {await r.text()}")
                        await asyncio.sleep(0.5)
                        continue
            else:
                user = people[uid]
                if isinstance(action, PlayCard):
                    data = f"p:{game.id}:{match.hand_no}:{action.card.ascii}"
                elif isinstance(action, ChooseTrump):
                    data = f"t:{game.id}:{game.move}:{action.suit.letter}"
                else:
                    raise RuntimeError(f"no button for {action!r}")
                mid = await self.offered(user, data)
                if mid is None:
                    self.problems.append(f"{data}: never offered on the hand message")
                    return
                await asyncio.sleep(rng.uniform(0.5, 1.5) * self.args.think)
                # Meanwhile the message may have been posted anew (the trump call).
                mid = await self.offered(user, data)
                if mid is None:
                    self.problems.append(f"{data}: no longer offered")
                    return
                try:
                    handle = await self.emu.press(user, user.private_chat_id, mid, data)
                except SimulationError:  # deleted between the look and the press
                    continue
                await handle.wait_answer(timeout=120)  # answered once the move is stored
            if isinstance(action, PlayCard):
                played += 1
                self.cards += 1

    async def offered(self, user: Any, data: str) -> int | None:
        """The hand message once it offers the button ``data`` (read from the emulator's
        chat, not the database: a trump call posts new hand messages), None if none
        does within 120 s."""
        give_up = time.monotonic() + 120
        while time.monotonic() < give_up:
            for message in reversed(self.emu.chat_log(user.private_chat_id, include_deleted=False)):
                if message.from_bot and any(
                    b.get("callback_data") == data for b in buttons(message)
                ):
                    return message.message_id
            await asyncio.sleep(0.05)
        return None

    async def backend_cpu(self) -> dict[int, float]:
        async with self.engine.connect() as conn:
            pids = (
                await conn.scalars(
                    text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
                )
            ).all()
        return {pid: procstat.cpu_seconds(pid) for pid in pids}

    def bot_cpu(self) -> float:
        total = 0.0
        for p in self.procs:
            if p.pid is not None:
                s = procstat.sample(p.pid)
                total += s.cpu + s.children_cpu
        return total

    async def quiet(self, seconds: float = 2.0) -> None:
        """Until the bot has made no call for ``seconds`` (everything decided is sent)."""
        while True:
            last = self.emu.calls[-1].time if self.emu.calls else 0.0
            if self.emu.server.inflight == 0 and time.time() - last >= seconds:
                return
            await asyncio.sleep(0.1)


async def _sample_load(peak: list[float]) -> None:
    while True:
        peak.append(os.getloadavg()[0])
        await asyncio.sleep(2)


async def run_mode(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    args.mode_now = mode
    with tempfile.TemporaryDirectory(prefix="hokm-online-") as tmp:
        async with fresh_database(args.db, Path(tmp)) as db_url:
            url = normalize_url(db_url)
            await migrate(url)  # before the processes, which would each try at once
            async with BotApiEmulator(token=TOKEN, bot_username="HokmOnlineBench") as emu:
                if args.limiter:
                    emu.enforce_limits()
                run = Run(emu, url, args, Path(tmp))
                await run.start()
                try:
                    return await _measure(run, emu, args, mode)
                finally:
                    await run.stop()


async def _measure(run: Run, emu: BotApiEmulator, args: argparse.Namespace, mode: str):
    n = 4 * args.tables
    people = [emu.add_user(f"P{i}", language_code="fa", started=True) for i in range(n)]
    by_id = {p.id: p for p in people}
    pressed: dict[int, float] = {}
    queued: dict[int, float] = {}
    rng = random.Random(args.seed)
    t_join = time.time()
    await asyncio.gather(
        *(run.join(p, rng.uniform(0, args.spread), pressed, queued) for p in people)
    )
    await emu.wait_until(
        lambda: all(run.seated_at(p, pressed[p.id]) is not None for p in people), timeout=120
    )
    matching = [run.seated_at(p, pressed[p.id]) - pressed[p.id] for p in people]  # type: ignore[operator]
    games = await run.games()
    if len(games) != args.tables:
        run.problems.append(f"{len(games)} tables made for {n} people")
    # Every hand message sent and bound in its game.
    for _ in range(2400):
        games = await run.games()
        if all(str(uid) in (g.private_messages or {}) for g in games for uid in g.user_ids()):
            break
        await asyncio.sleep(0.05)
    setup_s = time.time() - t_join
    # When each person's game was created (the matching round's transaction), on the
    # bot's clock (this machine's): the rest of the matching time is delivery.
    created = [g.created_at.timestamp() - pressed[int(uid)] for g in games for uid in g.user_ids()]

    conn = aiohttp.TCPConnector(limit=0)
    load_peak: list[float] = []
    async with aiohttp.ClientSession(connector=conn) as http:
        base = f"http://127.0.0.1:{run.port}"
        pages: dict[str, dict[int, Page]] = {}
        for g in games:
            seated = [int(x["user_id"]) for x in g.seats]
            # Seats 0-2 have the page open; the fourth plays from the hand message.
            pages[g.id] = {uid: Page(http, base, g.id, uid) for uid in seated[:3]}
        for ps in pages.values():
            for p in ps.values():
                await p.shows(0)
        await run.quiet(1.0)

        mark = emu.mark()
        load0 = os.getloadavg()[0]
        sampler = asyncio.create_task(_sample_load(load_peak))
        bots0, backends0, me0 = run.bot_cpu(), await run.backend_cpu(), time.process_time()
        t0 = time.time()
        await asyncio.gather(*(run.table(g, pages[g.id], by_id) for g in games))
        play_s = time.time() - t0
        await run.quiet(2.0)
        bots1, backends1, me1 = run.bot_cpu(), await run.backend_cpu(), time.process_time()
        sampler.cancel()
        await asyncio.gather(sampler, return_exceptions=True)
        for ps in pages.values():
            for p in ps.values():
                p.task.cancel()
        await asyncio.gather(
            *(p.task for ps in pages.values() for p in ps.values()), return_exceptions=True
        )
    load1 = os.getloadavg()[0]

    calls = emu.calls[mark:]
    cards = max(run.cards, 1)
    if args.dump:
        with open(f"{args.dump}.{mode}.jsonl", "w") as out:
            for i, c in enumerate(emu.calls):
                row = {
                    "play": i >= mark,
                    "t": round(c.time, 3),
                    "method": c.method,
                    "chat": c.chat_id,
                    "message": c.params.get("message_id"),
                    "text": str(c.params.get("text", ""))[:80],
                    "ok": c.ok,
                }
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    chat_calls = [c for c in calls if c.method in CHAT_METHODS]
    counted = [c for c in calls if c.method.lower() in COUNTED_METHODS]
    per_chat: dict[Any, list[float]] = defaultdict(list)
    for c in counted:
        per_chat[c.chat_id].append(c.time)
    backend_cpu = sum(
        cpu - backends0.get(pid, 0.0)
        for pid, cpu in backends1.items()
        if cpu >= backends0.get(pid, 0.0)
    )
    bots_cpu = bots1 - bots0
    me_cpu = me1 - me0
    methods = Counter(c.method for c in calls)
    return {
        "mode": mode if mode == "one" else f"cluster ({args.workers} workers + ingress)",
        "tables": len(games),
        "people": n,
        "pages_open": sum(len(ps) for ps in pages.values()),
        "setup_s": round(setup_s, 1),
        "matching_s_p50": round(_pct(matching, 0.5) or 0, 2),
        "matching_s_p99": round(_pct(matching, 0.99) or 0, 2),
        "matching_s_max": round(max(matching), 2),
        "press_answered_s_p50": round(_pct(list(queued.values()), 0.5) or 0, 2),
        "press_answered_s_p99": round(_pct(list(queued.values()), 0.99) or 0, 2),
        "game_created_s_p50": round(_pct(created, 0.5) or 0, 2),
        "game_created_s_p99": round(_pct(created, 0.99) or 0, 2),
        "cards": run.cards,
        "play_s": round(play_s, 1),
        "cards_per_s": round(run.cards / play_s, 1),
        "chat_calls_per_card": round(len(chat_calls) / cards, 2),
        "all_calls_per_card": round(len(calls) / cards, 2),
        "calls_by_method": dict(methods.most_common()),
        "tables_per_token_at_3s": int(LIMITER_RATE * 3 * cards / max(len(chat_calls), 1)),
        "busiest_second_calls": _busiest([c.time for c in counted], 1.0),
        "telegram_per_bot_second": PER_BOT_SECOND,
        "busiest_chat_minute_calls": max((_busiest(t, 60.0) for t in per_chat.values()), default=0),
        "busiest_chat_second_calls": max((_busiest(t, 1.0) for t in per_chat.values()), default=0),
        "telegram_per_chat_minute": PER_CHAT_MINUTE,
        "refused_by_limits": emu.rate_violations if args.limiter else None,
        "cpu_ms_per_card_bots": round(1000 * bots_cpu / cards, 2),
        "cpu_ms_per_card_postgres_backends": round(1000 * backend_cpu / cards, 2),
        "cpu_ms_per_card_driver": round(1000 * me_cpu / cards, 2),
        "cpu_ms_per_card_all": round(1000 * (bots_cpu + backend_cpu + me_cpu) / cards, 2),
        "load_average_1m": {
            "before": round(load0, 2),
            "peak": round(max(load_peak, default=load0), 2),
            "after": round(load1, 2),
        },
        "page_reconnects": sum(p.reconnects for ps in pages.values() for p in ps.values()),
        "problems": run.problems[:10],
        "problem_count": len(run.problems),
    }


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    modes = ["one", "cluster"] if args.mode == "both" else [args.mode]
    results = []
    for mode in modes:
        result = await run_mode(args, mode)
        print(json.dumps(result, indent=2, ensure_ascii=False), flush=True)
        results.append(result)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["one", "cluster", "both"], default="both")
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--cards", type=int, default=24, help="cards per table (52: a hand)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds before a move")
    parser.add_argument("--spread", type=float, default=10.0, help="seconds over which people join")
    parser.add_argument("--limiter", action="store_true", help="HOKM_RATE_LIMIT=1, limits enforced")
    parser.add_argument("--db", default=DEFAULT_DB, help="a PostgreSQL server's database URL")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dump", help='write every call ("play": from the first card) to DUMP.<mode>.jsonl'
    )
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        run_stopping_on_sigterm(main_async(args))


if __name__ == "__main__":
    main()
