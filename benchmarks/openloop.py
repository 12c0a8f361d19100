"""Press→answer at a fixed offered rate (open loop), this checkout against an older
commit, in the same run.

    python -m benchmarks.openloop --baseline-ref bcd0d71 --rates 10,20 --rounds 2
    python -m benchmarks.openloop --baseline-ref bcd0d71 --db postgresql://postgres@127.0.0.1:5432/postgres

Unlike :mod:`benchmarks.loadtest` (people who press when their turn shows, so the
offered load follows the bot's speed), here updates are sent at a fixed rate whatever
the bot answers (Poisson arrivals by default, or a fixed interval): a slow answer does
not slow the next press down. Each update is one of

- ``play``: a card by a person whose hand message says it is their turn (a legal one,
  read from the message: the led suit is followed); a person already pressed for that
  state is not pressed again, so plays are rarely double taps;
- ``out-of-turn``: a card of the current hand by a person whose turn it is not (at a
  table of one person and three computers: while the computers are on turn);
- ``stale``: a button of an earlier hand's message, or the lobby's Join button under a
  match already running;
- ``lobby``: a stranger joining or leaving a lobby that never starts, and the steps that
  open the next match at a table whose match is over (/newgame, joins, start; one at a
  time, each sent once the one before is answered);
- ``command``: /help in a private chat, /score or /newgame in a group where a match runs.

A kind that cannot be made at that moment (nobody on turn) is replaced by the next one
in that order that can, so the offered rate holds. Tables: ``--people-tables`` of four
people and ``--computer-tables`` of one person and three computers (``--level``).
The bots run with the production pauses (computers wait ``HOKM_COMPUTER_DELAY`` 1 s,
2 s after a hand, rate limiter on) unless ``--no-pauses``.

Press→answer is the time from the update's being queued at the emulator to the
emulator's receiving answerCallbackQuery for it, both in this process. A press not
answered ``--grace`` seconds after the measured window ends counts as never answered.
Bots alternate, round by round (``--rounds``) and rate by rate, so both see the same
machine load; the 1-minute load average is printed before and after each phase. JSON
results go to benchmarks/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from testkit.emulator import BotApiEmulator, MessageRecord, SimUser
from testkit.emulator.models import SimulationError
from testkit.restartable import run_stopping_on_sigterm

from . import procstat
from .botprocess import ROOT, BotProcess, checkout, fresh_database, hokm_bot
from .people import SUIT_LETTERS, percentile

TOKEN = "424242:BENCH-TOKEN"
RESULTS = ROOT / "benchmarks" / "results"
KINDS = ("play", "out-of-turn", "stale", "lobby", "command")
DEFAULT_MIX = "play=40,out-of-turn=20,stale=15,lobby=15,command=10"


def _datas(record: MessageRecord) -> list[str]:
    return [str(b["callback_data"]) for b in record.buttons if b.get("callback_data")]


def _led_suit(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("On the table:"):
            for ch in line:
                if ch in SUIT_LETTERS:
                    return SUIT_LETTERS[ch]
    return None


@dataclass
class Press:
    kind: str
    queued: float
    answered: float | None = None
    alert: bool = False
    text: str | None = None
    #: a lobby step: the table waiting for its answer
    table: Any = None
    #: a play: its table, and when the next turn showed after it was accepted
    played_at: Any = None
    turn_shown: float | None = None


@dataclass
class Phase:
    """What one phase (one bot, one rate) measured."""

    presses: dict[str, Press] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    recording: bool = False
    late_sends: int = 0
    max_send_lag: float = 0.0


class Table:
    """A group with a match (or a lobby), as its people see it."""

    def __init__(self, emu: BotApiEmulator, name: str, people: int, settings: dict[str, str]):
        self.emu = emu
        self.name = name
        self.users = [emu.add_user(f"{name}-{k}", language_code="en") for k in range(people)]
        self.group = emu.add_group(name, members=self.users, admins=self.users[:1])
        self.settings = settings
        self.lobby_mid: int | None = None
        self.game: str | None = None
        self.state = "new"  # new | lobby | playing | over
        self.hands: dict[int, MessageRecord] = {}
        self.pressed: dict[int, Any] = {}  # uid -> the hand version pressed for
        self.old: list[tuple[int, int, str]] = []  # (uid, message id, data) of earlier hands
        self.steps: list[tuple[SimUser, str]] = []
        self.step_pending = False
        #: accepted plays waiting for the next turn to show in a hand message
        self.awaiting: list[Press] = []

    def lobby_steps(self) -> list[tuple[SimUser, str]]:
        owner = self.users[0]
        steps = [(u, f"j:{self.game}") for u in self.users[1:]]
        steps += [(owner, f"o:{self.game}::{k}={v}") for k, v in self.settings.items()]
        return [*steps, (owner, f"s:{self.game}")]

    def on_message(self, kind: str, record: MessageRecord) -> None:
        if not record.from_bot:
            return
        if record.chat.id == self.group.id:
            datas = _datas(record)
            joins = [d for d in datas if d.startswith("j:")]
            if kind == "message" and joins and self.state in ("new", "over"):
                self.lobby_mid = record.message_id
                self.game = joins[0].split(":")[1]
                self.state = "lobby"
                self.steps = self.lobby_steps()
            return
        text = record.text
        if text.startswith("Match over"):
            if self.state == "playing":
                self.state = "over"
            self.hands.clear()
            return
        if not text.startswith("Hand"):
            return
        uid = record.chat.id
        cards = [d for d in _datas(record) if d.startswith("p:")]
        before = self.old_cards.get(uid)
        if cards and before and before[1][0].split(":")[2] != cards[0].split(":")[2]:
            # A new hand: the last hand's card buttons are stale from now on.
            self.old.extend((uid, before[0], d) for d in before[1])
            del self.old[:-200]
        if cards:
            self.old_cards[uid] = (record.message_id, cards)
        self.hands[uid] = record
        if self.awaiting and "Your turn" in text:
            now = time.perf_counter()
            for press in self.awaiting:
                press.turn_shown = now
            self.awaiting.clear()
        if self.state == "lobby":
            self.state = "playing"

    old_cards: dict[int, tuple[int, list[str]]]

    def on_turn(self) -> list[tuple[int, MessageRecord]]:
        return [
            (uid, r)
            for uid, r in self.hands.items()
            if ("Your turn" in r.text or any(d[:2] in ("t:", "k:") for d in _datas(r)))
            and self.pressed.get(uid) is not r.current
        ]


class Driver:
    def __init__(self, emu: BotApiEmulator, opts: argparse.Namespace, seed: int) -> None:
        self.emu = emu
        self.opts = opts
        self.rng = random.Random(seed)
        self.phase = Phase()
        self.tables: list[Table] = []
        self.by_chat: dict[int, Table] = {}
        settings = {"target": str(opts.target)}
        for i in range(opts.people_tables):
            self._add(Table(emu, f"P{i}", 4, settings))
        for i in range(opts.computer_tables):
            self._add(Table(emu, f"C{i}", 1, settings | {"level": opts.level}))
        # Lobbies that never start: an owner and three strangers joining and leaving.
        self.lobbies = [Table(emu, f"L{i}", 4, {}) for i in range(opts.lobbies)]
        for t in self.lobbies:
            self.by_chat[t.group.id] = t
        self.joined: dict[tuple[int, int], bool] = {}
        self.mix = opts.mix
        emu.add_listener(self._on_event)

    def _add(self, t: Table) -> None:
        t.old_cards = {}
        self.tables.append(t)
        self.by_chat[t.group.id] = t
        for u in t.users:
            self.by_chat[u.private_chat_id] = t

    def _on_event(self, kind: str, subject: Any) -> None:
        now = time.perf_counter()
        if kind == "callback_answer":
            press = self.phase.presses.get(subject.query_id)
            if press is not None and press.answered is None:
                press.answered = now
                press.alert = bool(subject.show_alert)
                press.text = subject.text
                if press.table is not None:
                    press.table.step_pending = False
                if press.played_at is not None and not press.alert:
                    press.played_at.awaiting.append(press)
            self.emu.world.callback_queries.pop(subject.query_id, None)
            self.emu.world.callback_answers.pop(subject.query_id, None)
        elif kind in ("message", "edit"):
            t = self.by_chat.get(subject.chat.id)
            if t is not None:
                t.on_message(kind, subject)

    async def _press(
        self,
        kind: str,
        user: SimUser,
        chat: int,
        mid: int,
        data: str,
        table: Any = None,
        played_at: Any = None,
    ) -> bool:
        queued = time.perf_counter()
        try:
            handle = await self.emu.press(user, chat, mid, data)
        except SimulationError:
            return False
        if self.phase.recording or table is not None:
            measured = kind if self.phase.recording else "unmeasured"
            self.phase.presses[handle.id] = Press(
                measured, queued, table=table, played_at=played_at
            )
        return True

    # ------------------------------------------------------------ set-up (closed loop)

    async def setup(self) -> None:
        everyone = [u for t in [*self.tables, *self.lobbies] for u in t.users]
        for u in everyone:
            await self.emu.send_message(u, u, "/start")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.opts.setup_timeout
        # Each owner is seated by /newgame only once the bot may write to them.
        while not all(self.emu.last_message(u) is not None for u in everyone):
            if loop.time() > deadline:
                raise RuntimeError("the bot did not answer /start")
            await asyncio.sleep(0.05)
        for t in [*self.tables, *self.lobbies]:
            await self.emu.send_message(t.users[0], t.group, "/newgame")
        while True:
            for t in self.tables:
                if t.state == "lobby" and not t.step_pending and t.steps:
                    await self._lobby_step(t, "unmeasured")
            if all(t.state == "playing" for t in self.tables) and all(
                t.state == "lobby" for t in self.lobbies
            ):
                return
            if loop.time() > deadline:
                states = {
                    t.name: (t.state, len(t.steps), t.step_pending, len(t.hands))
                    for t in [*self.tables, *self.lobbies]
                }
                steps = [
                    (p.table.name, p.text, p.answered is not None)
                    for p in self.phase.presses.values()
                    if p.table is not None
                ]
                raise RuntimeError(f"set-up not done: {states}; lobby presses: {steps}")
            await asyncio.sleep(0.02)

    async def _lobby_step(self, t: Table, kind: str) -> bool:
        user, data = t.steps.pop(0)
        assert t.lobby_mid is not None
        t.step_pending = True
        if not await self._press(kind, user, t.group.id, t.lobby_mid, data, table=t):
            t.step_pending = False
            return False
        return True

    # ------------------------------------------------------------ the updates

    async def offer(self, kind: str) -> str:
        """Send one update of ``kind``, or of the next kind that can be made."""
        order = KINDS[KINDS.index(kind) :] + KINDS[: KINDS.index(kind)]
        for k in order:
            if await getattr(self, "_" + k.replace("-", "_"))():
                return k
        raise AssertionError("a command can always be sent")

    async def _play(self) -> bool:
        choices = [
            (t, uid, r) for t in self.tables if t.state == "playing" for uid, r in t.on_turn()
        ]
        if not choices:
            return False
        t, uid, record = self.rng.choice(choices)
        datas = _datas(record)
        trumps = [d for d in datas if d.startswith("t:")]
        keep = [d for d in datas if d.startswith("k:")]
        cards = [d for d in datas if d.startswith("p:")]
        led = _led_suit(record.text)
        follow = [d for d in cards if led is not None and d.endswith(led)]
        pool = trumps or keep or follow or cards
        if not pool:
            return False
        t.pressed[uid] = record.current
        user = self.emu.user(uid)
        data = self.rng.choice(pool)
        return await self._press("play", user, uid, record.message_id, data, played_at=t)

    async def _out_of_turn(self) -> bool:
        choices = [
            (t, uid, r)
            for t in self.tables
            if t.state == "playing"
            for uid, r in t.hands.items()
            if "Your turn" not in r.text and any(d.startswith("p:") for d in _datas(r))
        ]
        if not choices:
            return False
        _table, uid, record = self.rng.choice(choices)
        cards = [d for d in _datas(record) if d.startswith("p:")]
        return await self._press(
            "out-of-turn", self.emu.user(uid), uid, record.message_id, self.rng.choice(cards)
        )

    async def _stale(self) -> bool:
        playing = [t for t in self.tables if t.state == "playing"]
        if not playing:
            return False
        t = self.rng.choice(playing)
        if t.old and self.rng.random() < 0.7:
            uid, mid, data = self.rng.choice(t.old)
            user = self.emu.user(uid)
            if await self._press("stale", user, uid, mid, data):
                return True
            current = t.hands.get(uid)  # the old message is gone: its buttons on the new one
            if current is not None and await self._press(
                "stale", user, uid, current.message_id, data
            ):
                return True
        if t.lobby_mid is None or t.game is None:
            return False
        user = self.rng.choice(t.users)
        return await self._press("stale", user, t.group.id, t.lobby_mid, f"j:{t.game}")

    async def _lobby(self) -> bool:
        for t in self.tables:  # a table whose match is over opens the next one
            if t.state == "over":
                t.state = "new"
                await self.emu.send_message(t.users[0], t.group, "/newgame")
                self._count("lobby (/newgame)")
                return True
            if t.state == "lobby" and t.steps and not t.step_pending:
                return await self._lobby_step(t, "lobby")
        if not self.lobbies:
            return False
        t = self.rng.choice(self.lobbies)
        user = self.rng.choice(t.users[1:])
        key = (t.group.id, user.id)
        joined = self.joined.get(key, False)
        self.joined[key] = not joined
        assert t.lobby_mid is not None and t.game is not None
        data = f"{'l' if joined else 'j'}:{t.game}"
        return await self._press("lobby", user, t.group.id, t.lobby_mid, data)

    async def _command(self) -> bool:
        r = self.rng.random()
        t = self.rng.choice(self.tables)
        user = self.rng.choice(t.users)
        if r < 0.4:
            await self.emu.send_message(user, user, "/help")
        elif r < 0.8:
            await self.emu.send_message(user, t.group, "/score")
        else:
            await self.emu.send_message(user, t.group, "/newgame")
        return True

    def _count(self, kind: str) -> None:
        if self.phase.recording:
            self.phase.sent[kind] = self.phase.sent.get(kind, 0) + 1

    async def run(self, rate: float, seconds: float, record: bool) -> None:
        """Offer updates at ``rate`` a second for ``seconds``, whatever the answers."""
        weights = [self.mix.get(k, 0.0) for k in KINDS]
        loop = asyncio.get_running_loop()
        start = loop.time()
        next_at = start
        self.phase.recording = record
        while True:
            gap = self.rng.expovariate(rate) if self.opts.arrivals == "poisson" else 1 / rate
            next_at += gap
            if next_at - start >= seconds:
                break
            delay = next_at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                lag = -delay
                if record:
                    self.phase.max_send_lag = max(self.phase.max_send_lag, lag)
                    if lag > 0.05:
                        self.phase.late_sends += 1
            kind = self.rng.choices(KINDS, weights)[0]
            sent = await self.offer(kind)
            if record:
                self.phase.sent[sent] = self.phase.sent.get(sent, 0) + 1
        self.phase.recording = False


# ------------------------------------------------------------------ one phase


async def _wait_ready(emu: BotApiEmulator, proc: BotProcess, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not any(c.method == "getUpdates" and c.ok is not False for c in emu.calls):
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited:\n{proc.log_tail()}")
        if loop.time() > deadline:
            raise RuntimeError(f"{proc.name} not ready after {timeout}s:\n{proc.log_tail()}")
        await asyncio.sleep(0.05)


def _ms(values: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(values)}
    for q in (50, 95, 99):
        v = percentile(values, q / 100)
        out[f"p{q}"] = None if v is None else round(v * 1000, 1)
    return out


async def run_phase(
    name: str, source: Path, rate: float, seed: int, opts: argparse.Namespace, workdir: Path
) -> dict[str, Any]:
    emu = BotApiEmulator(token=TOKEN, bot_username="HokmBenchBot", bot_name="Hokm")
    await emu.start()
    try:
        async with fresh_database(opts.db, workdir) as db_url:
            extra = {"HOKM_THINK_SECONDS": str(opts.think_seconds)}
            proc = hokm_bot(name, source, api_url=emu.base_url, token=TOKEN, database_url=db_url)
            if not opts.no_pauses:  # botprocess sets them to 0: the production values
                for k in ("HOKM_COMPUTER_DELAY", "HOKM_HAND_PAUSE"):
                    proc.env.pop(k, None)
            if opts.rate_limit:
                proc.env.pop("HOKM_RATE_LIMIT", None)
            proc.env.update(extra)
            probe = workdir / f"probe-{name}-{rate:.0f}-{seed}.json"
            if opts.probe and source == ROOT:
                proc.argv[-1] = "import benchmarks.outbox_probe\n" + proc.argv[-1]
                proc.env["HOKM_PROBE_OUT"] = str(probe)
            await proc.start()
            try:
                await _wait_ready(emu, proc, 120)
                driver = Driver(emu, opts, seed)
                await driver.setup()
                await driver.run(rate, opts.warmup, record=False)
                load_before = procstat.load_average()
                cpu0 = procstat.sample(proc.pid)
                me0 = procstat.cpu_seconds(os.getpid())
                t0 = time.perf_counter()
                await driver.run(rate, opts.duration, record=True)
                elapsed = time.perf_counter() - t0
                cpu1 = procstat.sample(proc.pid)
                me1 = procstat.cpu_seconds(os.getpid())
                load_after = procstat.load_average()
                # Keep the bot busy as before while the last presses are answered.
                pending = [p for p in driver.phase.presses.values() if p.answered is None]
                loop = asyncio.get_running_loop()
                until = loop.time() + opts.grace
                tail = asyncio.create_task(driver.run(rate, opts.grace, record=False))
                while pending and loop.time() < until:
                    await asyncio.sleep(0.1)
                    pending = [p for p in pending if p.answered is None]
                tail.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await tail
            finally:
                code = await proc.stop()
    finally:
        await emu.stop()
    presses = [p for p in driver.phase.presses.values() if p.kind in KINDS]
    horizon = opts.grace
    by_kind: dict[str, Any] = {}
    for kind in ("all", *KINDS):
        chosen = [p for p in presses if kind in ("all", p.kind)]
        if not chosen:
            continue
        ok = [p.answered - p.queued for p in chosen if p.answered is not None]
        ok = [x for x in ok if x <= horizon]
        by_kind[kind] = _ms(ok) | {
            "presses": len(chosen),
            "never_answered": len(chosen) - len(ok),
            "alerts": sum(1 for p in chosen if p.alert),
        }
    accepted = [p for p in presses if p.kind == "play" and p.answered is not None and not p.alert]
    turns: dict[str, Any] = {}
    for group, prefix in (("people tables", "P"), ("computer tables", "C")):
        chosen = [p for p in accepted if p.played_at.name.startswith(prefix)]
        shown = [p.turn_shown - p.queued for p in chosen if p.turn_shown is not None]
        turns[group] = _ms(shown) | {"accepted_plays": len(chosen)}
    return {
        "bot": name,
        "rate": rate,
        "accepted_plays_per_s": round(len(accepted) / elapsed, 2),
        "play_to_next_turn_ms": turns,
        "seed": seed,
        "seconds": round(elapsed, 1),
        "sent": driver.phase.sent,
        "late_sends": driver.phase.late_sends,
        "max_send_lag_ms": round(driver.phase.max_send_lag * 1000, 1),
        "press_answer_ms": by_kind,
        "bot_cpu_share": round((cpu1.cpu - cpu0.cpu) / elapsed, 3),
        "bot_children_cpu_share": round(
            max(0.0, cpu1.children_cpu - cpu0.children_cpu) / elapsed, 3
        ),
        "driver_cpu_share": round((me1 - me0) / elapsed, 3),
        "load_before": load_before,
        "load_after": load_after,
        "exit_code": code,
        "log": str(proc.log_path),
        "outbox_probe": json.loads(probe.read_text()) if probe.exists() else None,
    }


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.0f}"


def _print(r: dict[str, Any]) -> None:
    a = r["press_answer_ms"].get("all", {})
    print(
        f"{r['bot']:<16} {r['rate']:>4.0f}/s  presses {a.get('presses', 0):>4}"
        f"  press→answer p50 {_f(a.get('p50'))} p95 {_f(a.get('p95'))} p99 {_f(a.get('p99'))} ms"
        f"  never answered {a.get('never_answered', 0)}"
        f"  bot CPU {r['bot_cpu_share']:.2f} (+children {r['bot_children_cpu_share']:.2f})"
        f"  driver CPU {r['driver_cpu_share']:.2f}  late sends {r['late_sends']}"
        f"  load {r['load_before'][0]:.2f}→{r['load_after'][0]:.2f}",
        flush=True,
    )
    for key, v in (r.get("outbox_probe") or {}).items():
        print(
            f"{'':<23}outbox probe {key}: n {v['n']}  slot wait p50/p95"
            f" {v['slot_wait_ms']['p50']}/{v['slot_wait_ms']['p95']} ms  call p50/p95"
            f" {v['call_ms']['p50']}/{v['call_ms']['p95']} ms",
            flush=True,
        )
    for group, t in r["play_to_next_turn_ms"].items():
        print(
            f"{'':<23}accepted play→next 'Your turn' shown, {group}: n {t['accepted_plays']}"
            f"  p50 {_f(t['p50'])}  p95 {_f(t['p95'])}  p99 {_f(t['p99'])} ms",
            flush=True,
        )
    print(f"{'':<23}accepted plays/s {r['accepted_plays_per_s']}", flush=True)
    for kind in KINDS:
        k = r["press_answer_ms"].get(kind)
        if k:
            print(
                f"{'':<23}{kind:<12} n {k['presses']:>4}  p50 {_f(k['p50']):>5}"
                f"  p95 {_f(k['p95']):>5}  p99 {_f(k['p99']):>5} ms"
                f"  alerts {k['alerts']:>4}  never {k['never_answered']}",
                flush=True,
            )


async def main_async(opts: argparse.Namespace) -> int:
    started = datetime.now(UTC)
    print(
        f"load average {procstat.load_average()}  cores {os.cpu_count()}  db {opts.db}"
        f"  rates {opts.rates}  tables {opts.people_tables} people + {opts.computer_tables}"
        f" computers ({opts.level}) + {opts.lobbies} lobbies  mix {opts.mix}"
        f"  pauses {'off' if opts.no_pauses else 'production'}"
        f"  rate limiter {'on' if opts.rate_limit else 'off'}",
        flush=True,
    )
    results: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        bots: list[tuple[str, Path]] = [("hokm", ROOT)]
        if opts.baseline_ref:
            bots.append((opts.baseline_ref, stack.enter_context(checkout(opts.baseline_ref))))
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hokm-open-")))
        for round_no in range(opts.rounds):
            for rate in opts.rates:
                seed = opts.seed + round_no * 1000 + int(rate)
                order = bots if round_no % 2 == 0 else bots[::-1]
                for name, source in order:
                    r = await run_phase(name, source, rate, seed, opts, workdir)
                    r["round"] = round_no
                    results.append(r)
                    _print(r)
    print("\nmedian over rounds (press→answer, all presses):")
    for rate in opts.rates:
        for name in [b[0] for b in bots]:
            rs = [r for r in results if r["bot"] == name and r["rate"] == rate]
            for q in ("p50", "p99"):
                vals = [r["press_answer_ms"]["all"][q] for r in rs]
                print(f"  {name:<10} {rate:>4.0f}/s {q}: {' · '.join(_f(v) for v in vals)} ms")
    report = {
        "started": started.isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks.openloop", *sys.argv[1:]]),
        "commit": _head(),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "options": {k: v for k, v in vars(opts).items() if k != "out"},
        "results": results,
    }
    out = opts.out or RESULTS / f"openloop-{started:%Y%m%dT%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"written to {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


def _head() -> str:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


def _mix(text: str) -> dict[str, float]:
    mix = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        if k.strip() not in KINDS:
            raise argparse.ArgumentTypeError(f"unknown kind {k!r} (kinds: {', '.join(KINDS)})")
        mix[k.strip()] = float(v)
    return mix


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.openloop", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--rates", type=lambda s: [float(x) for x in s.split(",")], default=[10, 20])
    p.add_argument("--arrivals", choices=("poisson", "fixed"), default="poisson")
    p.add_argument("--duration", type=float, default=30.0, help="measured seconds per phase")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds offered before measuring")
    p.add_argument("--grace", type=float, default=15.0, help="seconds an answer may take")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--people-tables", type=int, default=4)
    p.add_argument("--computer-tables", type=int, default=2)
    p.add_argument("--lobbies", type=int, default=2)
    p.add_argument("--level", default="hard")
    p.add_argument("--target", type=int, default=1, help="match length in points")
    p.add_argument("--think-seconds", type=float, default=1.0)
    p.add_argument("--mix", type=_mix, default=_mix(DEFAULT_MIX))
    p.add_argument("--no-pauses", action="store_true", help="computer delay, hand pause 0")
    p.add_argument(
        "--rate-limit",
        choices=("on", "off"),
        default="on",
        help="the bot's own flood-limit pacing (production: on)",
    )
    p.add_argument("--db", default="sqlite", help="'sqlite' or a postgresql:// URL of a server")
    p.add_argument("--baseline-ref", help="a commit to measure in the same run (git worktree)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--probe",
        action="store_true",
        help="time where this checkout's outbox calls wait (benchmarks/outbox_probe.py)",
    )
    p.add_argument("--setup-timeout", type=float, default=120.0)
    p.add_argument("--out", type=Path)
    opts = p.parse_args(argv)
    opts.rate_limit = opts.rate_limit == "on"
    return opts


def main(argv: list[str] | None = None) -> int:
    code = run_stopping_on_sigterm(main_async(parse_args(argv)))
    return 143 if code is None else code


if __name__ == "__main__":
    sys.exit(main())
