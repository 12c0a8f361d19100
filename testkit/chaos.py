"""Kill the bot process at random moments of a match and check that nothing is lost.

The bot runs as a real subprocess (``python -m telegram_bot``, long polling) against
the Bot API emulator, which runs here with the simulated people. While they play a
match, the process is killed with SIGKILL (and now and then stopped with SIGTERM) a
few milliseconds after a press, at whatever step it happens to be, and started again.
At the end the match must be finished and recorded once, every hand's result and the
match result must have reached the group exactly once, the outbox must be empty, every
press that was answered as accepted must have taken effect, and no hidden card may
ever have appeared in the group.

Used by ``tests/bot/test_kill.py`` (a few kills) and, for long runs::

    python -m testkit.chaos --kills 100 [--database-url postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import os
import random
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError

from core import Match, Phase, parse_card
from telegram_bot.chat import render
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.db import create_engine, normalize_url, session_factory
from telegram_bot.platform.storage.models import MatchResult, OutboxMessage
from telegram_bot.service.languages import Translators
from testkit.emulator import BotApiEmulator
from testkit.restartable import Restartable
from testkit.simulation import Table, buttons, by_level

__all__ = [
    "BotProcess",
    "ChaosReport",
    "ProcessRunner",
    "bot_process",
    "check_shown",
    "open_match",
    "play_with_kills",
]

#: Without any progress (API call, outbox row, move) for this long, a run has hung.
STALL_SECONDS = 120.0


class BotProcess(Restartable):
    """The bot's process, and what a rig needs to tell its updates handled from merely
    fetched: where this start's API calls begin in the emulator's log, and the file
    where the bot writes its progress (``HOKM_PROGRESS_FILE``; None for a baseline
    checkout, which may not write it)."""

    def __init__(self, *args: Any, progress_path: Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.progress_path = progress_path
        #: Index in the emulator's calls where the running process's start began.
        self.start_mark = 0


def bot_process(
    emu: BotApiEmulator, db_url: str, log_path: Path, bot_dir: Path | None = None, **env: str
) -> BotProcess:
    """The bot (``python -m telegram_bot``, long polling) pointed at the emulator; ready
    once it polls for updates (it has migrated, resumed and drained by then).
    ``bot_dir``: the checkout whose bot runs (default: this one), for a baseline."""
    progress = None if bot_dir is not None else log_path.with_suffix(".progress")
    env = {
        **os.environ,
        "BOT_TOKEN": emu.token,
        "TELEGRAM_API_URL": emu.base_url.removesuffix("/bot"),
        "DATABASE_URL": db_url,
        "HOKM_RATE_LIMIT": "0",
        "HOKM_COMPUTER_DELAY": "0",
        "HOKM_HAND_PAUSE": "0",
        "HOKM_THINK_SECONDS": "0.05",
        "PYTHONUNBUFFERED": "1",
        **({"HOKM_PROGRESS_FILE": str(progress)} if progress else {}),
        **env,
    }

    def polling(proc: Restartable):
        mark = emu.mark()
        assert isinstance(proc, BotProcess)
        proc.start_mark = mark
        return lambda: any(c.method == "getUpdates" for c in emu.calls[mark:])

    return BotProcess(
        "telegram_bot", [], env, log_path, polling, cwd=bot_dir, progress_path=progress
    )


@dataclass
class ChaosReport:
    kills: int = 0
    terminations: int = 0
    presses: int = 0
    accepted: int = 0
    hands: int = 0
    group_messages: int = 0
    #: Checks of the table and the hands against the stored game, and the failed ones.
    shown_checks: int = 0
    wrong_shown: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.kills} SIGKILLs, {self.terminations} SIGTERMs, {self.presses} presses "
            f"({self.accepted} answered as accepted), {self.hands} hands, "
            f"{self.group_messages} group messages, {self.shown_checks} checks of the "
            f"table and hands ({self.wrong_shown} wrong); problems: {len(self.problems)}"
        )


class ProcessRunner:
    """What :class:`~testkit.simulation.Table` needs of a runner, for a bot that
    lives in another process: its database, and a wait for it to be done."""

    def __init__(self, emu: BotApiEmulator, bot: BotProcess, db_url: str, chat_id: int) -> None:
        self.emu = emu
        self.bot = bot
        #: (start mark, calls scanned, highest update id fetched) of the running process.
        self._fetched = (-1, 0, 0)
        self.engine = create_engine(db_url)
        self.service = SimpleNamespace(sessions=session_factory(self.engine))
        self.chat_id = chat_id
        self.restarting = 0

    async def outbox_rows(self) -> int:
        """Decided messages not sent yet (0 for a baseline bot that has no outbox)."""
        async with self.service.sessions() as s:
            try:
                return await s.scalar(select(func.count()).select_from(OutboxMessage)) or 0
            except DBAPIError:
                return 0

    async def _state(self) -> tuple[int, int, bool]:
        """(outbox rows, move, waiting for a person) from the database."""
        rows = await self.outbox_rows()
        async with self.service.sessions() as s:
            game = await repo.get_active_game(s, self.chat_id)
        if game is None or game.status != "playing" or game.state is None:
            return rows, game.move if game else -1, True
        match = Match.from_json(game.state)
        info = game.seats[match.order[match.turn]] if match.turn is not None else {}
        human = bool(info.get("user_id")) and not info.get("away")
        return rows, game.move, human

    def _fetched_upto(self) -> int:
        """The highest update id the running process has fetched (0: none yet). An
        update a killed process fetched and confirmed never reaches the next one, so
        only this start's getUpdates count."""
        mark, scanned, top = self._fetched
        if mark != self.bot.start_mark:
            mark, scanned, top = self.bot.start_mark, self.bot.start_mark, 0
        calls = self.emu.calls
        end = len(calls)
        # Calls still in flight are scanned again next time.
        while scanned < end and calls[scanned].ok is not None:
            c = calls[scanned]
            if c.method == "getUpdates" and c.ok and c.result:
                top = max(top, c.result[-1]["update_id"])
            scanned += 1
        self._fetched = (mark, scanned, top)
        return top

    def unhandled(self) -> bool:
        """Whether the running process has fetched an update it has not finished
        handling (from its progress file; False for a bot that writes none)."""
        path = self.bot.progress_path
        if path is None:
            return False
        fetched = self._fetched_upto()
        if not fetched:
            return False
        try:
            pid, upto = path.read_text().split()
        except (OSError, ValueError):
            return True
        return int(pid) != self.bot.pid or int(upto) < fetched

    async def settle(self, quiet: float = 0.2) -> None:
        """Until the bot is up, has handled every update, sent every decided message and
        waits for a person, with no API call for ``quiet`` seconds. Fails only when
        nothing at all has changed for STALL_SECONDS."""
        loop = asyncio.get_running_loop()
        last_progress = loop.time()
        last_seen: tuple[Any, ...] = ()
        quiet_since = loop.time()
        while True:
            calls = [c for c in self.emu.calls if c.method != "getUpdates"]
            in_flight = any(c.ok is None for c in calls[-50:])
            rows, move, human = await self._state()
            unhandled = self.unhandled()
            seen = (len(calls), rows, move, self.bot.starts, unhandled)
            now = loop.time()
            if seen != last_seen:
                last_seen, last_progress, quiet_since = seen, now, now
            busy = (
                self.restarting
                or not self.bot.ready
                or in_flight
                or rows
                or not human
                or self.emu.world.updates.undelivered
                or unhandled
            )
            if not busy and now - quiet_since >= quiet:
                return
            if now - last_progress > STALL_SECONDS:
                raise AssertionError(
                    f"no progress for {STALL_SECONDS:.0f} s: outbox {rows}, move {move}, "
                    f"waiting for a person {human}, undelivered "
                    f"{self.emu.world.updates.undelivered}, unhandled {unhandled}; "
                    f"log: {self.bot.log_path}"
                )
            await asyncio.sleep(0.02)

    async def kill_soon(self, rng: random.Random, report: ChaosReport, sig: int) -> None:
        """Stop the bot once it has made a few more API calls (0 to 4: before or after
        answering, between the table edit and the hands, with a result in flight), or
        when it has gone quiet; then start it again."""
        self.restarting += 1
        try:
            calls = self.emu.calls
            start = len(calls)
            wanted = rng.randint(0, 4)
            loop = asyncio.get_running_loop()
            last, last_change = start, loop.time()
            while True:
                made = sum(1 for c in calls[start:] if c.method != "getUpdates")
                if made >= wanted or loop.time() - last_change > 0.2:
                    break
                if len(calls) != last:
                    last, last_change = len(calls), loop.time()
                await asyncio.sleep(0.001)
            if sig == signal.SIGKILL:
                report.kills += 1
            else:
                report.terminations += 1
            await self.bot.restart(sig)
        finally:
            self.restarting -= 1

    async def close(self) -> None:
        await self.engine.dispose()


async def play_with_kills(
    emu: BotApiEmulator,
    db_url: str,
    *,
    kills: int,
    people: int = 2,
    target: int = 1,
    seed: int = 0,
    log_dir: Path | None = None,
    bot_dir: Path | None = None,
    sigterm_share: float = 0.2,
    kill_every: int = 3,
) -> ChaosReport:
    """One match of ``people`` (the other seats computers) with about ``kills`` restarts
    spread over it; returns what was checked. ``db_url`` must be an empty database.
    ``sigterm_share`` of the restarts are graceful stops (SIGTERM), the rest SIGKILLs;
    one comes after every ``kill_every``-th press (and after half of those that may
    end a hand) until ``kills`` are done."""
    rng = random.Random(seed)
    report = ChaosReport()
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="hokm-chaos-"))
    bot = bot_process(
        emu, normalize_url(db_url), log_dir / "bot.log", bot_dir, HOKM_DEAL_SEED=str(seed)
    )
    users = [emu.add_user(f"P{i}", language_code="en") for i in range(people)]
    group = emu.add_group("Chaos", members=users, admins=users[:1])
    runner = ProcessRunner(emu, bot, normalize_url(db_url), group.id)
    table = Table(emu, runner, group, users)
    await bot.start()
    kill_tasks: list[asyncio.Task[None]] = []
    try:
        for u in users:
            await emu.send_message(u, u.private_chat_id, "/start")
        await runner.settle()
        # The lobby, with a kill right after /newgame: the lobby message must appear.
        owner = users[0]
        while (game := await table.game()) is None or game.status != "lobby":
            if kills:
                kill_tasks.append(
                    asyncio.create_task(runner.kill_soon(rng, report, signal.SIGKILL))
                )
            await emu.send_message(owner, group.id, "/newgame")
            await runner.settle()
        lobby = await _lobby_message(runner, game.id)
        if lobby is None:
            report.problems.append("the lobby was never posted: the group is stuck")
            return report
        for option in ("timer=0", f"target={target}"):
            await _press_until(runner, table, owner, group.id, lobby, f"o:{game.id}::{option}")
        for u in users[1:]:
            await _press_until(runner, table, u, group.id, lobby, f"j:{game.id}")
        await _press_until(runner, table, owner, group.id, lobby, f"s:{game.id}")
        # Everything the bot posts in the group from here on is a hand or match result.
        watermark = max(m.message_id for m in emu.chat_log(group.id))

        strategies = {u.id: by_level("normal", seed=u.id) for u in users}
        step = 0
        while True:
            game = await table.game()
            if game is None or game.status != "playing":
                break
            step += 1
            # Every kill_every-th press, and half of the presses that may end a hand.
            near_end = max(Match.from_json(game.state).tricks_won) >= 6
            chance = step % kill_every == 0 or (near_end and rng.random() < 0.5)
            if report.kills + report.terminations < kills and chance:
                sig = signal.SIGTERM if rng.random() < sigterm_share else signal.SIGKILL
                kill_tasks.append(asyncio.create_task(runner.kill_soon(rng, report, sig)))
            await _checked_step(runner, table, strategies, report)
        await runner.settle()
        await _final_checks(runner, table, group.id, watermark, report)
    finally:
        await asyncio.gather(*kill_tasks, return_exceptions=True)
        await bot.stop()
        await runner.close()
    return report


async def open_match(
    runner: ProcessRunner, table: Table, users: list[Any], options: list[str]
) -> Any:
    """/newgame by ``users[0]`` in the table's group, the lobby ``options`` set
    (``"target=1"``, ...), the others joined, the match started; the computers fill
    the free seats. Returns the game."""
    emu, chat_id = runner.emu, table.chat.id
    for u in users:
        await emu.send_message(u, u.private_chat_id, "/start")
    await runner.settle()
    await emu.send_message(users[0], chat_id, "/newgame")
    await runner.settle()
    game = await table.game()
    assert game is not None, "/newgame opened no game"
    lobby = await _lobby_message(runner, game.id)
    assert lobby is not None, "the lobby was never posted"
    for option in options:
        await _press_until(runner, table, users[0], chat_id, lobby, f"o:{game.id}::{option}")
    for u in users[1:]:
        await _press_until(runner, table, u, chat_id, lobby, f"j:{game.id}")
    await _press_until(runner, table, users[0], chat_id, lobby, f"s:{game.id}")
    return await table.game()


async def _lobby_message(runner: ProcessRunner, game_id: str) -> int | None:
    await runner.settle()
    async with runner.service.sessions() as s:
        game = await repo.get_game(s, game_id)
    return None if game is None else game.table_message_id


async def _press_until(runner, table, user, chat_id, message_id, data) -> None:
    """Press until the bot has answered (a kill may swallow a press)."""
    while True:
        handle = await runner.emu.press(user, chat_id, message_id, data)
        await runner.settle()
        if handle.answer is not None:
            return


async def check_shown(runner: ProcessRunner, table: Table, game: Any) -> list[str]:
    """What the chats show against the stored game (the bot settled: nothing left to
    send, a person on turn): the table message is the stored state's, and every
    person's hand message holds exactly their cards and says "Your turn" only on
    their turn. (A hand message may lag on the trick and on whose turn it is when it
    is not its player's: edited then, every card would cost a call per person.)"""
    if game is None or game.status != "playing" or game.state is None:
        return []
    match = Match.from_json(game.state)
    problems: list[str] = []
    table_msg = next(
        (
            m
            for m in runner.emu.chat_log(table.chat.id, include_deleted=False)
            if m.message_id == game.table_message_id
        ),
        None,
    )
    translators = Translators(runner.service.sessions, shared=True)  # reads the database
    wanted = render.table_text(game, match, await translators.chat(game.chat_id))
    if table_msg is None or _plain(table_msg.text) != _plain(wanted):
        shown = None if table_msg is None else table_msg.text
        problems.append(f"move {game.move}: the table shows {shown!r}, stored {wanted!r}")
    if match.phase is not Phase.PLAY:
        return problems
    for seat in range(match.n):
        uid = game.seats[match.order[seat]].get("user_id")
        if not uid:
            continue
        user = table.users[uid]
        try:
            message = table.hand_message(game, user)
        except (AssertionError, StopIteration):
            problems.append(f"move {game.move}: {user.first_name} has no hand message")
            continue
        cards = {
            parse_card(b["callback_data"].rsplit(":", 1)[1])
            for b in buttons(message)
            if str(b.get("callback_data", "")).startswith("p:")
        }
        if cards != set(match.hand_of(seat)):
            problems.append(
                f"move {game.move}: {user.first_name}'s hand shows "
                f"{sorted(map(str, cards))}, stored {sorted(map(str, match.hand_of(seat)))}"
            )
        says_turn = "Your turn" in (message.text or "")
        if says_turn != (match.turn == seat):
            problems.append(
                f"move {game.move}: {user.first_name}'s hand says your turn {says_turn}, "
                f"turn is seat {match.turn}, theirs {seat}"
            )
    return problems


def _plain(text: str | None) -> str:
    """A message's text as shown (the emulator keeps the entities' text)."""
    return re.sub(r"<[^>]+>", "", html.unescape(text or "")).strip()


async def _checked_step(runner, table, strategies, report: ChaosReport) -> None:
    """One person's action; if the bot said it was accepted, it must have taken effect.
    Before it, what the chats show is checked against the stored game."""
    await runner.settle()
    before = await table.game()
    shown = await check_shown(runner, table, before)
    report.shown_checks += 1
    if shown:
        report.problems.extend(shown)
        report.wrong_shown += 1
    match = Match.from_json(before.state)
    seat = match.turn
    presses = table.presses
    handles: list[Any] = []
    pressed: list[str] = []
    original = table.press

    async def press(user, message, data):
        pressed.append(data)  # (a strategy may be random: read what was pressed)
        handle = await original(user, message, data)
        handles.append(handle)
        return handle

    table.press = press
    try:
        await table.step(strategies)
    finally:
        del table.press
    report.presses += table.presses - presses
    last = handles[-1] if handles else None
    if last is None or last.answer is None or last.answer.show_alert:
        return  # not answered (killed) or refused: the person will try again
    report.accepted += 1
    after = await table.game()
    if pressed[-1].startswith("p:") and after.status == "playing":
        card = parse_card(pressed[-1].rsplit(":", 1)[1])
        now = Match.from_json(after.state)
        if now.hand_no == match.hand_no and card in now.hand_of(seat):
            report.problems.append(f"an accepted play of {card} was lost")


async def _final_checks(runner, table, chat_id: int, watermark: int, report: ChaosReport) -> None:
    game = await table.game()
    problems = report.problems
    if game is None or game.status != "finished":
        problems.append(f"the match did not finish: {game!r}")
        return
    match = Match.from_json(game.state)
    report.hands = len(match.history)
    async with runner.service.sessions() as s:
        results = await s.scalar(
            select(func.count()).select_from(MatchResult).where(MatchResult.game_id == game.id)
        )
    left = await runner.outbox_rows()
    if results != 1:
        problems.append(f"the match was recorded {results} times")
    if left:
        problems.append(f"{left} decided message(s) were never sent")
    # A table brought back down (reposts.py) leaves its old message deleted: only what
    # is still in the group counts. A deleted result would show as one too few.
    announcements = [
        m.text
        for m in runner.emu.chat_log(chat_id, include_deleted=False)
        if m.from_bot and m.message_id > watermark and m.message_id != game.table_message_id
    ]
    report.group_messages = len(announcements)
    if len(set(announcements)) != len(announcements):
        problems.append("a group message was sent twice")
    if len(announcements) != report.hands + 1:
        listing = "; ".join(
            f"#{m.message_id}{' (deleted)' if m.deleted else ''}: {(m.text or '')[:60]!r}"
            for m in runner.emu.chat_log(chat_id)
            if m.from_bot and m.message_id > watermark and m.message_id != game.table_message_id
        )
        problems.append(
            f"{len(announcements)} results posted for {report.hands} hands and the match: {listing}"
        )
    table.check_group_shows_no_hand(match)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100, help="restarts over the match")
    parser.add_argument("--people", type=int, default=2, choices=(1, 2, 3, 4))
    parser.add_argument("--target", type=int, default=7, choices=(1, 3, 5, 7, 10))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", help="an empty database (default: a new SQLite file)")
    parser.add_argument(
        "--kill-every", type=int, default=3, help="a restart after every N-th press"
    )
    parser.add_argument(
        "--sigterm-share",
        type=float,
        default=0.2,
        help="share of the restarts that are graceful SIGTERMs (0: SIGKILLs only)",
    )
    parser.add_argument(
        "--bot-dir", type=Path, help="run the bot of another checkout (a baseline to compare)"
    )
    args = parser.parse_args(argv)
    if not 0.0 <= args.sigterm_share <= 1.0:
        parser.error("--sigterm-share must be between 0 and 1")
    if args.kill_every < 1:
        parser.error("--kill-every must be at least 1")

    async def run() -> ChaosReport:
        with tempfile.TemporaryDirectory() as tmp:
            url = args.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'chaos.sqlite3'}"
            async with BotApiEmulator(bot_username="HokmChaosBot", bot_name="Hokm") as emu:
                return await play_with_kills(
                    emu,
                    url,
                    kills=args.kills,
                    people=args.people,
                    target=args.target,
                    seed=args.seed,
                    log_dir=Path(tmp),
                    bot_dir=args.bot_dir,
                    sigterm_share=args.sigterm_share,
                    kill_every=args.kill_every,
                )

    started = time.monotonic()
    report = asyncio.run(run())
    print(report.summary())
    for problem in report.problems:
        print("  problem:", problem)
    with contextlib.suppress(OSError):
        print(f"load average {os.getloadavg()[0]:.2f}; {time.monotonic() - started:.0f} s")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
