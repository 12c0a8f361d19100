"""Many tables on several worker processes, with a worker killed while they play.

Starts the webhook ingress and ``workers`` workers of :mod:`telegram_bot.cluster` as
real processes on one PostgreSQL database, against the Bot API emulator (which runs
here, with the simulated people). Every table's updates reach whichever worker claims
them first. While the tables play, a worker is SIGKILLed every ``kill_every`` presses
and started again. Counted and checked at the end: plays lost or applied twice, lobby
fields and message ids lost, presses never answered (double taps included), timers
that fired twice, tables stalled past their timer + 5 s, and "message is not modified"
edits per 100 plays.

Used by ``tests/bot/test_cluster.py`` and, for long runs::

    python -m telegram_bot.fleet --tables 200 --minutes 10 --kill-every-seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import func, select

from core import Match, PlayCard

from .cluster import free_port
from .emulator import BotApiEmulator
from .simulation import Table, by_level
from .storage import repo
from .storage.db import create_engine, normalize_url, session_factory
from .storage.models import Game, InboxUpdate, OutboxMessage

__all__ = ["FleetReport", "run_fleet"]

STALL_SECONDS = 120.0


class Proc:
    """One process of the cluster, restartable; ready when its log says so."""

    def __init__(self, role: str, env: dict[str, str], log_path: Path, ready: str) -> None:
        self.role, self.env, self.log_path, self.ready_line = role, env, log_path, ready
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "telegram_bot.cluster",
                self.role,
                env=self.env,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
            )
        while True:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                if self.ready_line.encode() in log.read():
                    return
            if self.proc.returncode is not None:
                raise RuntimeError(f"{self.role} exited; see {self.log_path}")
            await asyncio.sleep(0.02)

    async def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(sig)
            await self.proc.wait()


@dataclass
class FleetReport:
    tables: int = 0
    finished: int = 0
    kills: int = 0
    plays: int = 0
    presses: int = 0
    unanswered: int = 0
    double_taps: int = 0
    lost_plays: int = 0
    lost_fields: int = 0
    timeouts: int = 0
    late_timers: int = 0
    not_modified: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        per100 = 100 * self.not_modified / max(self.plays, 1)
        return (
            f"{self.tables} tables ({self.finished} finished), {self.kills} worker kills, "
            f"{self.plays} plays, {self.presses} presses ({self.double_taps} double taps): "
            f"{self.unanswered} unanswered, {self.lost_plays} lost or doubled plays, "
            f"{self.lost_fields} lost lobby fields or message ids, {self.timeouts} timeouts "
            f"({self.late_timers} later than timer + 5 s), {self.not_modified} 'not modified' "
            f"({per100:.2f} per 100 plays)"
        )


class _Runner:
    """What :class:`~telegram_bot.simulation.Table` needs of a runner, per table."""

    def __init__(self, fleet: _Fleet, chats: list[int]) -> None:
        self.fleet = fleet
        self.service = SimpleNamespace(sessions=fleet.sessions)
        self.chats = chats

    async def settle(self) -> None:
        await self.fleet.settle(self.chats)


class _Fleet:
    def __init__(self, emu: BotApiEmulator, db_url: str, sessions: Any) -> None:
        self.emu, self.db_url, self.sessions = emu, db_url, sessions
        self.restarting = 0

    async def settle(self, chats: list[int]) -> None:
        """Until this table waits for a person and everything about it is delivered."""
        loop = asyncio.get_running_loop()
        last, changed = None, loop.time()
        while True:
            async with self.sessions() as s:
                inbox = await s.scalar(select(func.count()).select_from(InboxUpdate)) or 0
                outbox = await s.scalar(
                    select(func.count())
                    .select_from(OutboxMessage)
                    .where(OutboxMessage.chat_id.in_(chats))
                )
                game = await repo.get_active_game(s, chats[0])
            waiting = True
            if game is not None and game.status == "playing":
                match = Match.from_json(game.state)
                info = game.seats[match.order[match.turn]]
                waiting = bool(info.get("user_id")) and not info.get("away")
            undelivered = self.emu.world.updates.undelivered
            if not (inbox or outbox or undelivered or self.restarting) and waiting:
                return
            state = (inbox, outbox, undelivered, game.move if game else None, len(self.emu.calls))
            if state != last:
                last, changed = state, loop.time()
            elif loop.time() - changed > STALL_SECONDS:
                raise AssertionError(f"no progress for {STALL_SECONDS:.0f} s: {state}")
            await asyncio.sleep(0.02)


async def run_fleet(
    emu: BotApiEmulator,
    db_url: str,
    *,
    tables: int = 3,
    workers: int = 3,
    kill_every: int = 25,
    seconds: float | None = None,
    timer: int = 4,
    seed: int = 0,
    log_dir: Path | None = None,
) -> FleetReport:
    """Play ``tables`` 1-point matches (2 people, 2 computers; on the first table one
    person lets the clock run out once a hand) until all finish (or ``seconds`` pass,
    then stop starting new ones); ``db_url``: an empty PostgreSQL database."""
    rng = random.Random(seed)
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="hokm-fleet-"))
    url = normalize_url(db_url)
    port = free_port()
    env = {
        **os.environ,
        "BOT_TOKEN": emu.token,
        "TELEGRAM_API_URL": emu.base_url.removesuffix("/bot"),
        "DATABASE_URL": url,
        "WEBHOOK_URL": f"http://127.0.0.1:{port}",
        "WEBHOOK_LISTEN": "127.0.0.1",
        "WEBHOOK_PORT": str(port),
        "WEBHOOK_SECRET": "fleet-secret",
        "HOKM_RATE_LIMIT": "0",
        "HOKM_COMPUTER_DELAY": "0.2",
        "HOKM_HAND_PAUSE": "0",
        "HOKM_THINK_SECONDS": "0.05",
        "HOKM_THINK_PROCESSES": "0",
        "HOKM_DEAL_SEED": str(seed),
        "PYTHONUNBUFFERED": "1",
        "HOKM_DEBUG": "1",
    }
    engine = create_engine(url)
    sessions = session_factory(engine)
    fleet = _Fleet(emu, url, sessions)
    report = FleetReport(tables=tables)
    ingress = Proc("ingress", env, log_dir / "ingress.log", "ingress listening")
    procs = [Proc("worker", env, log_dir / f"worker{i}.log", "worker ready") for i in range(workers)]
    await ingress.start()
    await asyncio.gather(*(p.start() for p in procs))
    presses = 0
    started = time.monotonic()

    async def maybe_kill() -> None:
        nonlocal presses
        presses += 1
        if kill_every and presses % kill_every == 0:
            victim = rng.choice(procs)
            fleet.restarting += 1
            try:
                await victim.stop(signal.SIGKILL)
                report.kills += 1
                await victim.start()
            finally:
                fleet.restarting -= 1

    async def one_table(i: int) -> None:
        people = [emu.add_user(f"T{i}P{j}", language_code="en") for j in range(2)]
        group = emu.add_group(f"Fleet {i}", members=people, admins=people[:1])
        runner = _Runner(fleet, [group.id] + [p.id for p in people])
        table = Table(emu, runner, group, people)
        for p in people:
            await emu.send_message(p, p.private_chat_id, "/start")
        async with sessions.begin() as s:
            await repo.get_or_create_chat(s, group.id, "supergroup", group.title)
            await repo.update_chat_settings(
                s, group.id, {"target": 1, "timer": timer if i == 0 else 0, "players": 4}
            )
        await emu.send_message(people[0], group.id, "/newgame")
        await runner.settle()
        game = await table.game()
        lobby = game.table_message_id
        await _answered(emu, runner, report, people[1], group.id, lobby, f"j:{game.id}")
        await _answered(emu, runner, report, people[0], group.id, lobby, f"s:{game.id}")
        game = await table.game()
        if sorted(u for u in game.user_ids()) != sorted(p.id for p in people):
            report.lost_fields += 1
        strategies = {p.id: by_level("normal", seed=p.id) for p in people}
        idle_hand = -1
        while True:
            await runner.settle()
            game = await table.game()
            if game is None or game.status != "playing":
                break
            if not game.table_message_id or len(game.private_messages or {}) != 2:
                report.lost_fields += 1
            match = Match.from_json(game.state)
            if i == 0 and match.hand_no != idle_hand and match.phase.name == "PLAY":
                # Let the clock run out once this hand (a worker may die meanwhile).
                idle_hand = match.hand_no
                await _wait_timeout(fleet, runner, report, game)
                continue
            await maybe_kill()
            await _play(emu, runner, table, strategies, report, rng)
            if seconds is not None and time.monotonic() - started > seconds:
                break
        game = await table.game()
        if game is not None and game.status == "finished":
            report.finished += 1

    try:
        await asyncio.gather(*(one_table(i) for i in range(tables)))
        report.not_modified = sum(
            1 for c in emu.calls if c.description and "not modified" in c.description
        )
        async with sessions() as s:
            left = await s.scalar(select(func.count()).select_from(OutboxMessage))
        if left:
            report.problems.append(f"{left} decided messages never sent")
    finally:
        await asyncio.gather(*(p.stop() for p in procs))
        await ingress.stop()
        await engine.dispose()
    return report


async def _answered(emu, runner, report, user, chat_id, message_id, data) -> None:
    """Press until the bot has answered (a press taken by a dying worker comes back
    after its lease; one swallowed before the inbox is pressed again)."""
    while True:
        handle = await emu.press(user, chat_id, message_id, data)
        report.presses += 1
        await runner.settle()
        while handle.answer is None and runner.fleet.restarting:
            await asyncio.sleep(0.05)
        await _until_answered(handle)
        if handle.answer is not None:
            return


async def _until_answered(handle, quiet: float = 12.0) -> None:
    # A claimed update whose worker died is handled again once its lease expires.
    from .cluster import LEASE_SECONDS

    loop = asyncio.get_running_loop()
    end = loop.time() + LEASE_SECONDS + quiet
    while handle.answer is None and loop.time() < end:
        await asyncio.sleep(0.05)


async def _play(emu, runner, table, strategies, report: FleetReport, rng) -> None:
    """One person's card (sometimes tapped twice at once); an accepted play must show."""
    game = await table.game()
    match = Match.from_json(game.state)
    seat = match.turn
    uid = game.seats[match.order[seat]]["user_id"]
    user = table.users[uid]
    action = strategies[uid](match.view(seat))
    message = table.hand_message(game, user)
    if not isinstance(action, PlayCard):
        await table.step(strategies)
        report.presses += 1
        return
    data = f"p:{game.id}:{match.hand_no}:{action.card.ascii}"
    taps = 2 if rng.random() < 0.3 else 1
    report.double_taps += taps == 2
    handles = await asyncio.gather(
        *(emu.press(user, user.private_chat_id, message.message_id, data) for _ in range(taps))
    )
    report.presses += taps
    await runner.settle()
    for h in handles:
        await _until_answered(h)
        if h.answer is None:
            report.unanswered += 1
    after = await table.game()
    now = Match.from_json(after.state)
    accepted = [h for h in handles if h.answer is not None and not h.answer.show_alert]
    if len(accepted) > 1:
        report.lost_plays += 1  # the same card applied twice
    if accepted:
        report.plays += 1
        if now.hand_no == match.hand_no and action.card in now.hand_of(seat):
            report.lost_plays += 1


async def _wait_timeout(fleet, runner, report: FleetReport, game: Game) -> None:
    """Nobody plays: the turn timer must fire once, by the deadline + 5 s."""
    deadline = game.deadline
    if deadline is None:
        return
    move = game.move
    before = sum(int(x.get("timeouts", 0)) for x in game.seats)
    while True:
        async with fleet.sessions() as s:
            now_game = await repo.get_game(s, game.id)
        if now_game.move != move:
            break
        await asyncio.sleep(0.05)
    from .storage.models import utcnow

    late = (utcnow() - deadline).total_seconds()
    report.timeouts += 1
    if late > 5:
        report.late_timers += 1
        report.problems.append(f"a timer fired {late:.1f} s after its deadline")
    await runner.settle()
    async with fleet.sessions() as s:
        after = await repo.get_game(s, game.id)
    fired = sum(int(x.get("timeouts", 0)) for x in after.seats) - before
    if fired != 1:
        report.problems.append(f"a timer fired {fired} times")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--kill-every", type=int, default=100, help="presses between kills")
    parser.add_argument("--database-url", required=True, help="an empty PostgreSQL database")
    args = parser.parse_args(argv)

    async def run() -> FleetReport:
        async with BotApiEmulator(bot_username="HokmFleetBot", bot_name="Hokm") as emu:
            return await run_fleet(
                emu,
                args.database_url,
                tables=args.tables,
                workers=args.workers,
                kill_every=args.kill_every,
                seconds=args.minutes * 60,
            )

    report = asyncio.run(run())
    print(report.summary())
    for p in report.problems[:20]:
        print("  problem:", p)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 1 if report.problems or report.unanswered or report.lost_plays else 0


if __name__ == "__main__":
    sys.exit(main())
