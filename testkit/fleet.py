"""Many tables on several worker processes, with workers killed while they play.

Starts the webhook ingress and ``workers`` workers of :mod:`telegram_bot.runtime.cluster` as
real processes on one PostgreSQL database, against the Bot API emulator (which runs
here, with the simulated people). Every table's updates reach whichever worker claims
them first. While the tables play (1-point matches, 2 people and 2 computers each, a
new match as soon as one ends), a random worker is SIGKILLed every ``kill_every``
presses or every ``kill_every_seconds`` and started again. Counted at the end: plays
lost or applied twice, lobby fields and message ids lost, presses never answered
(double taps included), turn timers that fired twice, late or never, turns whose clock
(a person's timer, or the computers' due time) ran more than 5 s past with nobody
moving, and "message is not modified" edits per 100 plays; with the CPU time of this
process (people and emulator) and of the bot's processes, so a slow run shows where
the time went.

The people cost little: one loop (:class:`_Watcher`) asks the database, for all
tables at once, which chats still have updates or messages on their way and which
games wait for a person, and each table waits on it.

Used by ``tests/bot/test_cluster.py`` and, for long runs::

    python -m testkit.fleet --tables 200 --minutes 10 --kill-every-seconds 30 \\
        --database-url postgresql://…
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select, text

from core import Match, PlayCard
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.db import create_engine, migrate, normalize_url, session_factory
from telegram_bot.platform.storage.models import Game
from telegram_bot.runtime.cluster import LEASE_SECONDS, free_port
from testkit.emulator import BotApiEmulator, SimulationError
from testkit.emulator.limits import COUNTED_METHODS
from testkit.restartable import Restartable, cluster, cluster_env, run_stopping_on_sigterm
from testkit.simulation import Table, lowest_card

__all__ = ["FleetReport", "run_fleet"]

#: A table whose state has not changed at all for this long is stuck.
STALL_SECONDS = 300.0
#: A turn's clock may run this far past before the table counts as stalled.
LATE_SECONDS = 5.0
#: An idle person's timer not fired this long after its deadline never will.
MISSED_SECONDS = 60.0
#: A stalled turn counts as a kill's if the kill came this long before its clock or later.
KILL_WINDOW = 15.0
#: A hold-up of this process's loop that makes the emulator take a backlog at once.
STALL_LAG = 0.3
#: Times in a row a person may find their hand message gone before it is a problem.
MISSING_HAND_RETRIES = 20


@dataclass
class FleetReport:
    tables: int = 0
    workers: int = 0
    seconds: float = 0.0
    matches: int = 0
    finished: int = 0
    kills: int = 0
    plays: int = 0
    presses: int = 0
    double_taps: int = 0
    unanswered: int = 0
    #: Plays answered as accepted that did not take effect.
    lost_plays: int = 0
    #: Cards applied twice (both taps of a double tap accepted).
    doubled_plays: int = 0
    lost_fields: int = 0
    #: Idle people whose turn timer fired (once, as it must).
    timeouts: int = 0
    timers_twice: int = 0
    timers_missed: int = 0
    late_timers: int = 0
    #: Turns whose clock ran more than LATE_SECONDS past with nobody moving.
    stalls: int = 0
    #: Of those, with a worker killed from KILL_WINDOW s before their clock to the end.
    stalls_after_kills: int = 0
    most_late: float = 0.0
    #: Turns taken over from a killed worker (the workers' logs): computers' turns,
    #: with the seconds from the kill to the takeover, and timers (at their deadline).
    takeover_delays: list[float] = field(default_factory=list)
    takeover_timers: int = 0
    #: Turns taken over from a live worker that was late with them.
    takeovers_late: int = 0
    not_modified: int = 0
    #: Of those, repeats of an edit made before a kill (by the killed worker).
    not_modified_after_kills: int = 0
    #: Plays not pressed because the hand message was posted anew (a turn ping) after
    #: the table settled: pressed on the new message instead.
    reposted_hands: int = 0
    #: Calls refused by the emulator's flood limits (None: limits not enforced).
    flood_refusals: int | None = None
    #: Those refusals by kind ("global": 30/s, "group": 20/min).
    refusal_kinds: dict[str, int] = field(default_factory=dict)
    #: The most sends and edits that reached the emulator within one second.
    busiest_second: int = 0
    #: Refusals within a second after this process's loop was held up STALL_LAG or more.
    refusals_after_stalls: int = 0
    #: Grants the workers gave up as too old to use (starved between grant and call).
    stale_grants: int = 0
    cpu_people: float = 0.0
    cpu_bots: float = 0.0
    #: Press to settled table, seconds (p50, p99).
    cycle: tuple[float, float] = (0.0, 0.0)
    #: This process's event loop: how late a 0.1 s sleep woke up (p50, p99, max).
    lag: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: What to look at for a problem (printed after the summary).
    details: list[str] = field(default_factory=list)

    def summary(self) -> str:
        per100 = 100 * self.not_modified / max(self.plays, 1)
        load = (
            f"{sum(self.load) / len(self.load):.1f} mean, {max(self.load):.1f} max"
            if self.load
            else "n/a"
        )
        flood = (
            ""
            if self.flood_refusals is None
            else f"\n  {self.flood_refusals} calls refused by the flood limits "
            f"{self.refusal_kinds}, {self.refusals_after_stalls} of them within a second "
            f"after this process's loop (the emulator's) was held up {STALL_LAG * 1000:.0f} ms "
            f"or more; at most {self.busiest_second} sends and edits reached "
            f"the emulator within one second; {self.stale_grants} grants given up as too "
            "old to use"
        )
        delays = self.takeover_delays
        takeovers = (
            f"\n  {len(delays)} computers' turns of killed workers taken over, "
            f"{_pct(delays, 0.5) if delays else 0:.1f} s after the kill (p50), "
            f"{max(delays, default=0):.1f} s at most; {self.takeover_timers} timers of "
            f"killed workers fired by another; {self.takeovers_late} turns of live but late "
            "workers taken over"
        )
        return (
            f"{self.tables} tables, {self.workers} workers, {self.seconds:.0f} s: "
            f"{self.matches} matches started, {self.finished} finished; "
            f"{self.kills} worker kills\n"
            f"  {self.plays} plays, {self.presses} presses ({self.double_taps} double taps)\n"
            f"  {self.lost_plays} plays lost, {self.doubled_plays} plays applied twice\n"
            f"  {self.lost_fields} lobby fields or message ids lost\n"
            f"  {self.unanswered} presses unanswered (double taps included); "
            f"{self.reposted_hands} plays pressed on a hand posted anew (a turn ping) after "
            "the table settled\n"
            f"  {self.timeouts} turn timers fired for an idle person: {self.timers_twice} "
            f"fired twice, {self.timers_missed} never fired, {self.late_timers} later than "
            f"timer + {LATE_SECONDS:.0f} s\n"
            f"  {self.stalls} turns stalled past their clock + {LATE_SECONDS:.0f} s "
            f"(most: {self.most_late:.1f} s past; {self.stalls_after_kills} with a worker "
            f"killed from {KILL_WINDOW:.0f} s before their clock on){takeovers}\n"
            f"  {self.not_modified} 'message is not modified' edits ({per100:.2f} per 100 "
            f"plays), {self.not_modified_after_kills} of them repeating an edit made before "
            f"a kill (sent by the killed worker, not yet recorded){flood}\n"
            f"  press to settled table: p50 {self.cycle[0]:.2f} s, p99 {self.cycle[1]:.2f} s; "
            f"this process's loop lag p50 {self.lag[0] * 1000:.0f} ms, p99 "
            f"{self.lag[1] * 1000:.0f} ms, max {self.lag[2] * 1000:.0f} ms\n"
            f"  CPU: people and emulator {self.cpu_people:.0f} s, bot processes "
            f"{self.cpu_bots:.0f} s; load average (1 min) {load}, "
            f"{os.cpu_count()} cores"
        )


class Stuck(AssertionError):
    pass


@dataclass
class _Wait:
    chats: set[int]
    group: int
    done: asyncio.Future[None]
    state: Any = None
    changed: float = 0.0


_INBOX_CHATS = """
SELECT DISTINCT COALESCE(
    CAST(payload AS jsonb) #>> '{callback_query,message,chat,id}',
    CAST(payload AS jsonb) #>> '{message,chat,id}')
FROM inbox
"""
_OUTBOX_CHATS = "SELECT DISTINCT chat_id FROM outbox"
_TURNS = """
SELECT chat_id, status, move, due_at FROM games
WHERE chat_id = ANY(CAST(:chats AS bigint[])) AND status IN ('lobby', 'playing')
"""
_CLOCKS = """
SELECT id, move, COALESCE(due_at, deadline) AS clock, now() AS now FROM games
WHERE status = 'playing' AND COALESCE(due_at, deadline) IS NOT NULL
"""


class _Watcher:
    """One loop for every table: a table is settled when none of its chats has an
    update at the emulator or in the inbox, or a message in the outbox, and its game
    waits for a person (or is not playing). It also watches every game's clock."""

    def __init__(self, emu: BotApiEmulator, engine: Any) -> None:
        self.emu, self.engine = emu, engine
        self._waits: list[_Wait] = []
        self._wake = asyncio.Event()
        #: (game, move) -> (how far past its clock the turn was last seen, the clock).
        self.late: dict[tuple[str, int], tuple[float, datetime]] = {}
        self._last_clocks = 0.0

    async def settled(self, chats: list[int]) -> None:
        loop = asyncio.get_running_loop()
        wait = _Wait(set(chats), chats[0], loop.create_future(), changed=loop.time())
        self._waits.append(wait)
        self._wake.set()
        await wait.done

    async def drained(self) -> None:
        """Until no update and no message is on its way anywhere."""
        loop = asyncio.get_running_loop()
        seen, changed = None, loop.time()
        while True:
            busy, _ = await self.busy_chats([])
            if not busy:
                return
            if busy != seen:
                seen, changed = busy, loop.time()
            elif loop.time() - changed > STALL_SECONDS:
                raise Stuck(f"chats {sorted(busy)[:10]} kept work for {STALL_SECONDS:.0f} s")
            await asyncio.sleep(0.1)

    async def busy_chats(self, games: list[int]) -> tuple[set[int], dict[int, Any]]:
        """Chats with work on its way, and the active games of ``games`` (group chats).
        Asked in this order, so that work a game's state needs is seen: the emulator's
        queue, the inbox, the games, the outbox."""
        busy = set()
        for update in self.emu.world.updates.peek(1 << 30):
            body = update.get("callback_query", {}).get("message") or update.get("message")
            if body:
                busy.add(int(body["chat"]["id"]))
        async with self.engine.connect() as conn:
            for (chat,) in await conn.execute(text(_INBOX_CHATS)):
                if chat is not None:
                    busy.add(int(chat))
            turns = {}
            if games:
                for row in await conn.execute(text(_TURNS), {"chats": games}):
                    turns[row.chat_id] = row
            busy.update(chat for (chat,) in await conn.execute(text(_OUTBOX_CHATS)))
        return busy, turns

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._waits:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 0.5)
            if loop.time() - self._last_clocks >= 0.5:
                self._last_clocks = loop.time()
                await self._watch_clocks()
            waits, self._waits = self._waits, []
            if not waits:
                continue
            busy, turns = await self.busy_chats(sorted({w.group for w in waits}))
            now = loop.time()
            for w in waits:
                turn = turns.get(w.group)
                person = turn is None or turn.status != "playing" or turn.due_at is None
                mine = w.chats & busy
                if person and not mine:
                    w.done.set_result(None)
                    continue
                state = (frozenset(mine), None if turn is None else tuple(turn))
                if state != w.state:
                    w.state, w.changed = state, now
                elif now - w.changed > STALL_SECONDS:
                    w.done.set_exception(Stuck(f"no change for {STALL_SECONDS:.0f} s: {state}"))
                    continue
                self._waits.append(w)
            await asyncio.sleep(0.03)

    async def _watch_clocks(self) -> None:
        async with self.engine.connect() as conn:
            rows = (await conn.execute(text(_CLOCKS))).all()
        for game_id, move, clock, now in rows:
            past = (now - clock).total_seconds()
            if past > LATE_SECONDS:
                self.late[(game_id, move)] = (past, clock)


class _FleetTable(Table):
    """A simulated table whose game is read in one query (the newest of its chat)."""

    async def game(self) -> Game | None:
        async with self.runner.service.sessions() as s:
            return await s.scalar(
                select(Game)
                .where(Game.chat_id == self.chat.id)
                .order_by(Game.created_at.desc())
                .limit(1)
            )


class _Runner:
    """What :class:`~testkit.simulation.Table` needs of a runner, per table."""

    def __init__(self, fleet: _Fleet, chats: list[int]) -> None:
        self.fleet = fleet
        self.service = SimpleNamespace(sessions=fleet.sessions)
        self.chats = chats

    async def settle(self) -> None:
        await self.fleet.watcher.settled(self.chats)


@dataclass
class _Fleet:
    emu: BotApiEmulator
    sessions: Any
    watcher: _Watcher
    report: FleetReport
    rng: random.Random
    workers: list[Restartable]
    kill_every: int
    ends_at: float | None
    level: str = "normal"
    think: float = 0.0
    cycles: list[float] = field(default_factory=list)
    #: When each kill happened (wall clock, as the emulator's calls).
    kill_times: list[float] = field(default_factory=list)
    #: The client ports of the killed workers' connections -> when they were killed:
    #: the emulator's calls from them were made by a worker that died afterwards.
    killed_ports: dict[int, float] = field(default_factory=dict)
    presses_since_kill: int = 0
    killing: bool = False
    #: (game, person) -> times in a row their hand message was found gone.
    missing_hands: dict[tuple[str, int], int] = field(default_factory=dict)

    def time_up(self) -> bool:
        return self.ends_at is not None and time.monotonic() >= self.ends_at

    async def kill_one(self) -> None:
        """SIGKILL a random worker and start it again."""
        if self.killing:
            return
        self.killing = True
        try:
            victim = self.rng.choice(self.workers)
            ports = victim.local_ports()
            self.kill_times.append(time.time())
            self.killed_ports.update(dict.fromkeys(ports, self.kill_times[-1]))
            await victim.restart(signal.SIGKILL)
            self.report.kills += 1
        finally:
            self.killing = False

    def since_kill(self, when: float) -> float | None:
        """Seconds from the last kill before ``when`` (wall clock), None if none."""
        before = [k for k in self.kill_times if k <= when]
        return when - before[-1] if before else None

    async def pressed(self) -> None:
        self.presses_since_kill += 1
        if self.kill_every and self.presses_since_kill >= self.kill_every:
            self.presses_since_kill = 0
            await self.kill_one()


async def run_fleet(
    emu: BotApiEmulator,
    db_url: str,
    *,
    tables: int = 3,
    workers: int = 3,
    kill_every: int = 0,
    kill_every_seconds: float = 0.0,
    seconds: float | None = None,
    timer: int = 4,
    timer_tables: int = 1,
    rate_limit: bool = False,
    level: str = "normal",
    think: float = 0.0,
    debug: bool = True,
    progress_every: float = 0.0,
    seed: int = 0,
    log_dir: Path | None = None,
) -> FleetReport:
    """Play ``tables`` tables; without ``seconds`` one match each, with it new matches
    until that many seconds have passed. The first ``timer_tables`` tables have a turn
    timer of ``timer`` seconds and let it run out once a hand. ``rate_limit``: the
    workers pace themselves (the shared limit) and the emulator enforces Telegram's
    flood limits. ``level``: the computers'. ``think``: a person's mean seconds before
    a card (0: at once). ``db_url``: an empty PostgreSQL database."""
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="hokm-fleet-"))
    url = normalize_url(db_url)
    port = free_port()
    env = {
        **cluster_env(emu.base_url, emu.token, url, port, "fleet-secret"),
        "HOKM_RATE_LIMIT": "1" if rate_limit else "0",
        "HOKM_COMPUTER_DELAY": "0.2",
        "HOKM_HAND_PAUSE": "0",
        "HOKM_THINK_SECONDS": "0.05",
        "HOKM_DEAL_SEED": str(seed),
    }
    if debug:
        env["HOKM_DEBUG"] = "1"
    if rate_limit:
        emu.enforce_limits()
    await migrate(url)  # before the processes, which would each try at once
    # Few connections (three workers, the ingress and this share the server's 100);
    # the tables wait their turn for one.
    engine = create_engine(url, pool_size=8, max_overflow=0, pool_timeout=600)
    sessions = session_factory(engine)
    report = FleetReport(tables=tables, workers=workers)
    watcher = _Watcher(emu, engine)
    ingress, procs = cluster(env, log_dir, workers)
    fleet = _Fleet(
        emu,
        sessions,
        watcher,
        report,
        random.Random(seed),
        procs,
        kill_every,
        None if seconds is None else time.monotonic() + seconds,
        level,
        think,
    )
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    await ingress.start()
    await asyncio.gather(*(p.start() for p in procs))
    lags: list[float] = []
    #: (when, how long) this process's loop (the emulator's) was held up.
    loop_stalls: list[tuple[float, float]] = []
    helpers = [
        asyncio.create_task(watcher.run(), name="watcher"),
        asyncio.create_task(_measure_lag(lags, loop_stalls), name="lag"),
        asyncio.create_task(_sample_load(report.load), name="load"),
    ]
    if progress_every:
        helpers.append(asyncio.create_task(_progress(report, started, progress_every)))
    killer = (
        asyncio.create_task(_kill_every(fleet, kill_every_seconds), name="killer")
        if kill_every_seconds
        else None
    )
    try:
        # Groups do not all open their tables in the same second: a long run spreads
        # the first /newgame of each over its first minute.
        spread = 0.0 if seconds is None else min(60.0, seconds / 10)
        await asyncio.gather(
            *(
                _one_table(fleet, i, timer if i < timer_tables else 0, i * spread / tables)
                for i in range(tables)
            )
        )
        if killer is not None:
            killer.cancel()
            await asyncio.gather(killer, return_exceptions=True)
        while fleet.killing:  # a kill in progress ends with the worker started again
            await asyncio.sleep(0.05)
        # Everything decided is delivered before counting.
        try:
            await watcher.drained()
        except Stuck as exc:
            report.problems.append(f"never delivered everything: {exc}")
        report.seconds = time.monotonic() - started
        report.not_modified, report.not_modified_after_kills, wasted = _not_modified(
            emu.calls, fleet.kill_times, fleet.killed_ports
        )
        report.details.extend(wasted)
        if rate_limit:
            report.flood_refusals = emu.rate_violations
            kinds = Counter(v.kind for v in emu.rate_violation_log)
            report.refusal_kinds = dict(kinds)
            report.busiest_second = _busiest_second(emu.calls)
            # A refusal just after this process's loop was held up: the emulator took
            # the calls that came meanwhile all at once (Telegram counts them as they
            # arrive).
            report.refusals_after_stalls = sum(
                1
                for v in emu.rate_violation_log
                if any(-0.2 <= v.time - at <= 1.0 for at, _ in loop_stalls)
            )
        late = list(watcher.late.values())
        report.stalls = len(late)
        report.most_late = max((past for past, _ in late), default=0.0)
        # A dead worker's turns wait for the others' clocks (3 s after their due time).
        report.stalls_after_kills = sum(
            1
            for past, clock in late
            if any(-KILL_WINDOW <= k - clock.timestamp() <= past for k in fleet.kill_times)
        )
        _takeovers(report, log_dir, fleet.kill_times)
        if fleet.cycles:
            report.cycle = (_pct(fleet.cycles, 0.5), _pct(fleet.cycles, 0.99))
        if lags:
            report.lag = (_pct(lags, 0.5), _pct(lags, 0.99), max(lags))
    finally:
        for task in helpers:
            task.cancel()
        if killer is not None:
            killer.cancel()
        await asyncio.gather(*helpers, *([killer] if killer else []), return_exceptions=True)
        await asyncio.gather(*(p.stop() for p in procs))
        await ingress.stop()
        await engine.dispose()
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    report.cpu_people = (cpu_after.ru_utime + cpu_after.ru_stime) - (
        cpu_before.ru_utime + cpu_before.ru_stime
    )
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # every bot process, killed too
    report.cpu_bots = children.ru_utime + children.ru_stime
    return report


def _takeovers(report: FleetReport, log_dir: Path, kill_times: list[float]) -> None:
    """The workers' takeovers, from their logs ("taking over the computers of game …
    (its worker died)", with the log line's time)."""
    for path in sorted(log_dir.glob("worker*.log")):
        with open(path, errors="replace") as log:
            for line in log:
                if "s old: taking another" in line:
                    report.stale_grants += 1
                    continue
                if "taking over the " not in line:
                    continue
                if "(late)" in line:
                    report.takeovers_late += 1
                    continue
                if "its worker died" not in line:
                    continue
                if "the timer of" in line:
                    report.takeover_timers += 1
                    continue
                try:
                    at = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                except ValueError:
                    continue
                kills = [k for k in kill_times if k <= at]
                if kills:
                    report.takeover_delays.append(at - kills[-1])


def _not_modified(
    calls: list[Any], kill_times: list[float], killed_ports: dict[int, float] | None = None
) -> tuple[int, int, list[str]]:
    """'Message is not modified' edits, how many of them repeat an edit made by a
    worker killed before it (it had sent the edit and not yet recorded it), and for
    the others, the message's calls before them.

    Which worker made the edit is known from its client port (``killed_ports``: the
    ports of each killed worker's connections, with the kill's time); without it, an
    edit repeated across any kill counts as the kill's. A kill lands between two of
    the emulator's calls, but a call a worker sent just before its kill may be taken
    after it (the emulator shares this process's loop), so times alone cannot tell."""
    last_ok: dict[tuple[Any, Any], Any] = {}
    seen: dict[tuple[Any, Any], list[Any]] = {}
    wasted = after_kill = 0
    lines: list[str] = []
    for call in calls:
        key = (call.chat_id, call.params.get("message_id"))
        seen.setdefault(key, []).append(call)
        if call.ok and call.method.lower().startswith("edit"):
            last_ok[key] = call
        elif call.description and "not modified" in call.description:
            wasted += 1
            before = last_ok.get(key)
            peer = getattr(before, "peer", None)
            if before is None:
                kills = False
            elif killed_ports is not None and peer is not None:
                kills = killed_ports.get(peer, float("inf")) <= call.time
            else:
                kills = any(before.time <= k <= call.time for k in kill_times)
            if kills:
                after_kill += 1
                continue
            lines.append(f"  a wasted edit of message {key[1]} in chat {key[0]}; its calls:")
            for c in seen[key][-5:]:
                n = sum(1 for k in kill_times if k <= c.time)
                outcome = "ok" if c.ok else (c.description or "in flight")
                port = getattr(c, "peer", None)
                lines.append(
                    f"    {c.time:.3f} {c.method} from port {port}: {outcome} ({n} kills before)"
                )
    return wasted, after_kill, lines


def _history(emu: BotApiEmulator, chats: list[int], last: int = 12) -> list[str]:
    lines = []
    for chat in chats:
        calls = [c for c in emu.calls if c.chat_id == chat][-last:]
        for c in calls:
            outcome = "ok" if c.ok else (c.description or "in flight")
            mid = c.params.get("message_id")
            result = c.result.get("message_id") if isinstance(c.result, dict) else None
            at = datetime.fromtimestamp(c.time).strftime("%H:%M:%S.%f")[:-3]
            lines.append(f"  {at} {chat} {c.method} message {mid or result}: {outcome}")
    return lines


def _busiest_second(calls: list[Any]) -> int:
    """The most calls counted by flood limits that started within one second."""
    times = sorted(c.time for c in calls if c.method.lower() in COUNTED_METHODS)
    most, first = 0, 0
    for last, t in enumerate(times):
        while times[first] <= t - 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure_lag(lags: list[float], stalls: list[tuple[float, float]]) -> None:
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(0.1)
        lag = max(0.0, loop.time() - before - 0.1)
        lags.append(lag)
        if lag >= STALL_LAG:
            stalls.append((time.time(), lag))


async def _sample_load(load: list[float]) -> None:
    while True:
        load.append(os.getloadavg()[0])
        await asyncio.sleep(10)


async def _progress(report: FleetReport, started: float, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        print(
            f"[{time.monotonic() - started:4.0f} s] {report.matches} matches "
            f"({report.finished} finished), {report.plays} plays, {report.kills} kills, "
            f"{len(report.problems)} problems, load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


async def _kill_every(fleet: _Fleet, seconds: float) -> None:
    """A kill at every multiple of ``seconds`` (a restart takes some of the interval)."""
    loop = asyncio.get_running_loop()
    start, tick = loop.time(), 0
    while True:
        tick += 1
        await asyncio.sleep(max(0.0, start + tick * seconds - loop.time()))
        if fleet.time_up():
            return
        await fleet.kill_one()


async def _one_table(fleet: _Fleet, i: int, timer: int, delay: float) -> None:
    """Matches at one table until the time is up (without a time: one match)."""
    emu, report = fleet.emu, fleet.report
    await asyncio.sleep(delay)
    people = [emu.add_user(f"T{i}P{j}", language_code="en") for j in range(2)]
    group = emu.add_group(f"Fleet {i}", members=people, admins=people[:1])
    runner = _Runner(fleet, [group.id] + [p.id for p in people])
    table = _FleetTable(emu, runner, group, people)
    table.check_hidden = False  # checked by the single-process tests; costly per step here
    try:
        for p in people:
            await emu.send_message(p, p.private_chat_id, "/start")
        # Before /newgame: handled at the same time by another worker, it would not
        # know yet that it may write to its sender, and not seat them.
        await runner.settle()
        async with fleet.sessions.begin() as s:
            await repo.get_or_create_chat(s, group.id, "supergroup", group.title)
            settings = {"target": 1, "timer": timer, "players": 4, "level": fleet.level}
            await repo.update_chat_settings(s, group.id, settings)
        while True:
            await _one_match(fleet, table, runner, people, timer)
            if fleet.ends_at is None or fleet.time_up():
                return
    except Stuck as exc:
        report.problems.append(f"table {i} stuck: {exc}")
    except Exception as exc:  # one table's surprise must not end the others' run
        report.problems.append(f"table {i}: {exc!r}")
        report.details.append(f"table {i}: {exc!r}; the bot's last calls about its chats:")
        report.details.extend(_history(emu, runner.chats))


async def _one_match(fleet: _Fleet, table: _FleetTable, runner: _Runner, people, timer) -> None:
    emu, report = fleet.emu, fleet.report
    group = table.chat
    await emu.send_message(people[0], group.id, "/newgame")
    await runner.settle()
    game = await table.game()
    if game is None or game.status != "lobby":
        report.problems.append(f"/newgame in {group.title} opened no lobby")
        return
    report.matches += 1
    lobby = game.table_message_id
    if lobby is None:
        report.lost_fields += 1
        report.problems.append(f"the lobby of {group.title} has no message id")
        return
    joined = await _answered(fleet, runner, people[1], group.id, lobby, f"j:{game.id}")
    await _answered(fleet, runner, people[0], group.id, lobby, f"s:{game.id}")
    game = await table.game()
    if sorted(game.user_ids()) != sorted(p.id for p in people):
        report.lost_fields += 1
        report.problems.append(
            f"{group.title}: seated {game.user_ids()} of {[p.id for p in people]} "
            f"(the join was answered {joined!r})"
        )
    # People play the lowest legal card: as valid as any, and nearly free to choose.
    strategies = {p.id: lowest_card for p in people}
    idle_hand, lost = -1, False
    while not fleet.time_up():
        await runner.settle()
        game = await table.game()
        if game is None or game.status != "playing":
            break
        if not lost and (not game.table_message_id or len(game.private_messages or {}) != 2):
            lost = True  # counted once a match
            report.lost_fields += 1
            report.problems.append(f"{group.title}: message ids {game.private_messages}")
        match = Match.from_json(game.state)
        if timer and match.hand_no != idle_hand and match.phase.name == "PLAY":
            # Let the clock run out once this hand (a worker may die meanwhile).
            idle_hand = match.hand_no
            await _wait_timeout(fleet, runner, game, match)
            continue
        await _play(fleet, runner, table, strategies)
    game = await table.game()
    if game is not None and game.status == "finished":
        report.finished += 1


async def _answered(fleet: _Fleet, runner, user, chat_id, message_id, data) -> str | None:
    """Press until the bot has answered (one swallowed before the inbox is pressed
    again); the answer's text."""
    while True:
        handle = await fleet.emu.press(user, chat_id, message_id, data)
        fleet.report.presses += 1
        await runner.settle()
        await _until_answered(handle)
        if handle.answer is not None:
            return handle.answer.text


async def _until_answered(handle, quiet: float = 12.0) -> None:
    # A claimed update whose worker died is handled again once its lease expires;
    # an answer sent in the background may still be on its way after settling.
    loop = asyncio.get_running_loop()
    end = loop.time() + LEASE_SECONDS + quiet
    while handle.answer is None and loop.time() < end:
        await asyncio.sleep(0.05)


async def _play(fleet: _Fleet, runner, table, strategies) -> None:
    """One person's card (sometimes tapped twice at once); an accepted play must show."""
    emu, report = fleet.emu, fleet.report
    game = await table.game()
    match = Match.from_json(game.state)
    seat = match.turn
    uid = game.seats[match.order[seat]]["user_id"]
    user = table.users[uid]
    action = strategies[uid](match.view(seat))
    await fleet.pressed()
    if not isinstance(action, PlayCard):
        await table.step(strategies)
        report.presses += 1
        return
    data = f"p:{game.id}:{match.hand_no}:{action.card.ascii}"
    if fleet.think:
        await asyncio.sleep(fleet.rng.uniform(0, 2 * fleet.think))
    taps = 2 if fleet.rng.random() < 0.3 else 1
    mid = (game.private_messages or {}).get(str(uid))
    started = time.monotonic()
    try:
        if mid is None or emu.chat(user.private_chat_id).message(mid) is None:
            raise SimulationError(f"no message {mid} in chat {user.private_chat_id}")
        handles = await asyncio.gather(
            *(emu.press(user, user.private_chat_id, mid, data) for _ in range(taps))
        )
    except SimulationError:
        # The hand was posted anew (a turn ping: deleted and sent again) after the
        # table settled: the person presses the new one. Counted; a hand that stays
        # missing is a problem.
        report.reposted_hands += 1
        fleet.missing_hands[(game.id, uid)] = fleet.missing_hands.get((game.id, uid), 0) + 1
        if fleet.missing_hands[(game.id, uid)] > MISSING_HAND_RETRIES:
            raise
        return
    fleet.missing_hands.pop((game.id, uid), None)
    report.double_taps += taps == 2
    report.presses += taps
    await runner.settle()
    fleet.cycles.append(time.monotonic() - started)
    for h in handles:
        await _until_answered(h)
        if h.answer is None:
            report.unanswered += 1
    accepted = [h for h in handles if h.answer is not None and not h.answer.show_alert]
    if len(accepted) > 1:
        report.doubled_plays += 1
        report.problems.append(f"{action.card} applied twice in game {game.id}")
    if accepted:
        report.plays += 1
        after = Match.from_json((await table.game()).state)
        if after.hand_no == match.hand_no and action.card in after.hand_of(seat):
            report.lost_plays += 1
            report.problems.append(f"{action.card} accepted, not played, in game {game.id}")


async def _wait_timeout(fleet: _Fleet, runner, game: Game, match: Match) -> None:
    """Nobody plays: the turn timer must fire once, by the deadline + 5 s."""
    report = fleet.report
    deadline: datetime | None = game.deadline
    if deadline is None:
        return
    uid = game.seats[match.order[match.turn]]["user_id"]
    before = _timeouts(game.seats, uid)
    query = text("SELECT move, seats, now() AS now FROM games WHERE id = :id")
    while True:
        async with fleet.sessions() as s:
            row = (await s.execute(query, {"id": game.id})).one()
        if row.move != game.move:
            break
        if (row.now - deadline).total_seconds() > MISSED_SECONDS:
            report.timers_missed += 1
            report.problems.append(f"a timer of game {game.id} never fired")
            return
        await asyncio.sleep(0.1)
    late = (row.now - deadline).total_seconds()
    report.timeouts += 1
    if late > LATE_SECONDS:
        report.late_timers += 1
        since = fleet.since_kill(time.time())
        killed = f", {since:.0f} s after a worker was killed" if since is not None else ""
        report.problems.append(f"a timer fired {late:.1f} s after its deadline{killed}")
    seats = row.seats if isinstance(row.seats, list) else json.loads(row.seats)
    fired = _timeouts(seats, uid) - before
    if fired > 1:
        report.timers_twice += 1
        report.problems.append(f"a timer of game {game.id} fired {fired} times")
    elif fired < 1:
        report.problems.append(f"game {game.id} moved on without its timer")
    await runner.settle()


def _timeouts(seats: list[dict[str, Any]], uid: int) -> int:
    return next(int(s.get("timeouts", 0)) for s in seats if s.get("user_id") == uid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--kill-every-seconds", type=float, default=30.0)
    parser.add_argument("--kill-every", type=int, default=0, help="presses between kills")
    parser.add_argument("--timer", type=int, default=60, help="turn timer of the timer tables")
    parser.add_argument("--timer-tables", type=int, default=20)
    parser.add_argument("--level", default="easy", help="the computers' level")
    parser.add_argument("--think", type=float, default=0.0, help="a person's mean seconds a card")
    parser.add_argument(
        "--rate-limit",
        action="store_true",
        help="workers pace themselves (the shared limit); the emulator enforces the limits",
    )
    parser.add_argument("--database-url", required=True, help="an empty PostgreSQL database")
    parser.add_argument("--log-dir", type=Path)
    args = parser.parse_args(argv)
    print(f"$ python -m testkit.fleet {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"load average at the start {os.getloadavg()[0]:.2f}", flush=True)

    async def run() -> FleetReport:
        async with BotApiEmulator(bot_username="HokmFleetBot", bot_name="Hokm") as emu:
            return await run_fleet(
                emu,
                args.database_url,
                tables=args.tables,
                workers=args.workers,
                kill_every=args.kill_every,
                kill_every_seconds=args.kill_every_seconds,
                seconds=args.minutes * 60,
                timer=args.timer,
                timer_tables=args.timer_tables,
                rate_limit=args.rate_limit,
                level=args.level,
                think=args.think,
                debug=False,
                progress_every=30,
                log_dir=args.log_dir,
            )

    report = run_stopping_on_sigterm(run())  # the bot's processes are stopped too
    if report is None:
        return 1
    print(report.summary())
    for p in report.problems[:20]:
        print("  problem:", p)
    if len(report.problems) > 20:
        print(f"  ... {len(report.problems) - 20} more problems")
    for line in report.details[:200]:
        print(line)
    bad = (
        report.unanswered
        or report.lost_plays
        or report.doubled_plays
        or report.lost_fields
        or report.timers_twice
        or report.timers_missed
        or report.late_timers
        or report.stalls
    )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 1 if report.problems or bad else 0


if __name__ == "__main__":
    sys.exit(main())
