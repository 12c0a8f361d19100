"""Simulated people at tables, reading only what Telegram shows them.

A person watches their private hand message; when it says it is their turn they
wait the think time and press a legal card (the led suit is read from the "On the
table" line). The group's owner opens each match (/newgame, settings, start) and a
new one when the last is over. Every press is timed to its answer and, for plays,
to the next edit of the group's table message.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from testkit.emulator import BotApiEmulator, MessageRecord, SimUser

__all__ = [
    "Dispatcher",
    "HokmTable",
    "MinimalTable",
    "Recorder",
    "ShortMatches",
    "percentile",
    "short_matches",
]

SUIT_LETTERS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0-1) by nearest rank, None without values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[rank]


@dataclass
class Recorder:
    """What one group of tables measured while ``recording`` is on."""

    recording: bool = False
    answer: list[float] = field(default_factory=list)
    #: When each of those presses was made (perf_counter), in the same order.
    pressed: list[float] = field(default_factory=list)
    table_edit: list[float] = field(default_factory=list)
    plays: int = 0
    alerts: int = 0


@dataclass
class Press:
    started: float
    recorder: Recorder
    play: bool
    table: Any
    done: asyncio.Future[Any]


class Dispatcher:
    """Routes the emulator's events to the tables and times the presses."""

    def __init__(self, emu: BotApiEmulator) -> None:
        self.emu = emu
        self.by_chat: dict[int, Any] = {}
        self._presses: dict[str, Press] = {}
        self._early: dict[str, tuple[float, Any]] = {}
        emu.add_listener(self._on_event)

    def watch(self, chat_id: int, table: Any) -> None:
        self.by_chat[chat_id] = table

    async def press(
        self, table: Any, user: SimUser, chat_id: int, message_id: int, data: str, play: bool
    ) -> Any:
        """Press a button and wait for the bot's answer (a CallbackAnswer)."""
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        handle = await self.emu.press(user, chat_id, message_id, data)
        press = Press(started, table.recorder, play, table, loop.create_future())
        early = self._early.pop(handle.id, None)
        if early is not None:
            self._answered(press, *early)
        else:
            self._presses[handle.id] = press
        answer = await press.done
        # Keep the emulator's per-query records from growing over a long run.
        self.emu.world.callback_queries.pop(handle.id, None)
        self.emu.world.callback_answers.pop(handle.id, None)
        return answer

    def _on_event(self, kind: str, subject: Any) -> None:
        now = time.perf_counter()
        if kind == "callback_answer":
            press = self._presses.pop(subject.query_id, None)
            if press is None:
                self._early[subject.query_id] = (now, subject)
            else:
                self._answered(press, now, subject)
        elif kind in ("message", "edit"):
            table = self.by_chat.get(subject.chat.id)
            if table is not None:
                table.on_message(kind, subject, now)

    def _answered(self, press: Press, now: float, answer: Any) -> None:
        rec = press.recorder
        if press.play and rec.recording:
            rec.answer.append(now - press.started)
            rec.pressed.append(press.started)
            if answer.show_alert:
                rec.alerts += 1
            else:
                rec.plays += 1
        if press.play and not answer.show_alert:
            press.table.played(press)
        if not press.done.done():
            press.done.set_result(answer)


class _Table:
    """What both kinds of table share: people, a group, timing the table edits."""

    def __init__(
        self, bench: Dispatcher, name: str, people: int, think: float, recorder: Recorder
    ) -> None:
        self.bench = bench
        self.emu = bench.emu
        self.think = think
        self.recorder = recorder
        self.users = [self.emu.add_user(f"{name}-{k}", language_code="en") for k in range(people)]
        self.group = self.emu.add_group(name, members=self.users, admins=self.users[:1])
        bench.watch(self.group.id, self)
        self._await_edit: Press | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._waiters: list[tuple[int, Callable[[MessageRecord], bool], asyncio.Future[Any]]] = []
        self.stopping = False
        #: The first exception of a press task (the benchmark fails with it).
        self.failure: BaseException | None = None
        #: Set once the table plays (its first match started).
        self.ready = asyncio.Event()

    def played(self, press: Press) -> None:
        self._await_edit = press

    def _table_edited(self, now: float) -> None:
        press, self._await_edit = self._await_edit, None
        if press is not None and press.recorder.recording:
            press.recorder.table_edit.append(now - press.started)

    def expect(self, chat_id: int, test: Callable[[MessageRecord], bool]) -> asyncio.Future[Any]:
        """A future for the next bot message or edit in ``chat_id`` passing ``test``."""
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append((chat_id, test, fut))
        return fut

    def _check_waiters(self, record: MessageRecord) -> None:
        if not record.from_bot:
            return
        for item in list(self._waiters):
            chat_id, test, fut = item
            if chat_id == record.chat.id and not fut.done() and test(record):
                fut.set_result(record)
                self._waiters.remove(item)

    def spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None and self.failure is None:
            self.failure = task.exception()

    async def stop(self) -> None:
        self.stopping = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _datas(record: MessageRecord) -> list[str]:
    return [str(b["callback_data"]) for b in record.buttons if b.get("callback_data")]


class HokmTable(_Table):
    """``people`` people; the empty seats are computer players of ``level``."""

    def __init__(
        self,
        bench: Dispatcher,
        name: str,
        people: int,
        think: float,
        recorder: Recorder,
        *,
        seed: int,
        settings: dict[str, str] | None = None,
    ) -> None:
        super().__init__(bench, name, people, think, recorder)
        self.settings = settings or {}
        self.rng = random.Random(seed)
        self.table_mid: int | None = None
        self.matches = 0
        self.on_match_over: Callable[[HokmTable], None] | None = None
        self._over = asyncio.Event()
        self._busy: set[int] = set()
        self._recheck: set[int] = set()
        self._acted: dict[int, Any] = {}
        self._refused: dict[int, set[str]] = {}
        self._hands: dict[int, MessageRecord] = {}
        for user in self.users:
            bench.watch(user.private_chat_id, self)

    async def run(self) -> None:
        for user in self.users:
            reply = self.expect(user.private_chat_id, lambda r: True)
            await self.emu.send_message(user, user, "/start")
            await reply
        while not self.stopping:
            await self._open_match()
            self.ready.set()
            await self._over.wait()
            self._over.clear()
            self.matches += 1
            if self.on_match_over is not None:
                self.on_match_over(self)

    async def _open_match(self) -> None:
        owner = self.users[0]
        lobby_fut = self.expect(self.group.id, lambda r: any(d.startswith("j:") for d in _datas(r)))
        await self.emu.send_message(owner, self.group, "/newgame")
        lobby = await lobby_fut
        self.table_mid = lobby.message_id
        game = next(d for d in _datas(lobby) if d.startswith("j:")).split(":")[1]
        for user in self.users[1:]:
            await self._lobby_press(user, f"j:{game}")
        for name, value in self.settings.items():
            await self._lobby_press(owner, f"o:{game}::{name}={value}")
        await self._lobby_press(owner, f"s:{game}")

    async def _lobby_press(self, user: SimUser, data: str) -> None:
        assert self.table_mid is not None
        await self.bench.press(self, user, self.group.id, self.table_mid, data, play=False)

    def on_message(self, kind: str, record: MessageRecord, now: float) -> None:
        self._check_waiters(record)
        chat_id = record.chat.id
        if chat_id == self.group.id:
            if kind == "edit" and record.message_id == self.table_mid:
                self._table_edited(now)
            return
        if record.from_bot and record.text.startswith(("Hand", "Match over")):
            self._hands[chat_id] = record
            self._decide(chat_id)

    def _decide(self, uid: int) -> None:
        """React to the newest state of this person's private chat."""
        if self.stopping:
            return
        record = self._hands.get(uid)
        if record is None:
            return
        text = record.text
        if text.startswith("Match over"):
            if uid == self.users[0].id:
                self._over.set()
            return
        if not text.startswith("Hand"):
            return
        if uid in self._busy:
            self._recheck.add(uid)
            return
        version = record.current  # the object: version counts shrink when trimmed
        refused = self._refused.setdefault(uid, set())
        if self._acted.get(uid) is not version:
            refused.clear()
        elif not refused:
            return  # already acted on this state
        data = self._choose(record, refused)
        if data is None:
            return
        self._acted[uid] = version
        self._busy.add(uid)
        self.spawn(self._play(uid, record.message_id, data))

    def _choose(self, record: MessageRecord, refused: set[str]) -> str | None:
        datas = [d for d in _datas(record) if d not in refused]
        trumps = [d for d in datas if d.startswith("t:")]
        if trumps:
            return self.rng.choice(trumps)
        keep = [d for d in datas if d.startswith("k:")]
        if keep:
            return self.rng.choice(keep)
        if "Your turn" not in record.text:
            return None
        cards = [d for d in datas if d.startswith("p:")]
        led = _led_suit(record.text)
        follow = [d for d in cards if led is not None and d.endswith(led)]
        choices = follow or cards
        return self.rng.choice(choices) if choices else None

    async def _play(self, uid: int, message_id: int, data: str) -> None:
        try:
            if self.think > 0:
                await asyncio.sleep(self.think)
            user = self.emu.user(uid)
            answer = await self.bench.press(self, user, uid, message_id, data, play=True)
            if answer.show_alert:
                self._refused.setdefault(uid, set()).add(data)
                self._recheck.add(uid)
        finally:
            self._busy.discard(uid)
        if uid in self._recheck:
            self._recheck.discard(uid)
            self._decide(uid)


class ShortMatches:
    """Tables playing 1-point matches one after another (see :func:`short_matches`)."""

    def __init__(self, runs: list[asyncio.Task[None]]) -> None:
        self.runs = runs
        #: Matches finished, all tables together.
        self.done = 0

    async def until(self, awaitable: Awaitable[Any]) -> Any:
        """``awaitable``'s result, unless a table fails first (its error is raised)."""
        waiter = asyncio.ensure_future(awaitable)
        await asyncio.wait([waiter, *self.runs], return_when=asyncio.FIRST_COMPLETED)
        for task in self.runs:
            if task.done() and task.exception() is not None:
                waiter.cancel()
                raise task.exception()  # type: ignore[misc]
        if not waiter.done():
            waiter.cancel()
            raise RuntimeError("a table stopped playing")
        return waiter.result()


@contextlib.asynccontextmanager
async def short_matches(
    emu: BotApiEmulator,
    tables: int,
    people: int,
    level: str,
    on_over: Callable[[int], None],
) -> AsyncIterator[ShortMatches]:
    """``tables`` tables of ``people`` people and computers of ``level`` playing
    1-point matches without a pause; ``on_over(n)`` after the n-th match finished.
    The emulator forgets its history every 50 matches (the bot's memory is what a
    long run measures, not the emulator's)."""
    bench = Dispatcher(emu)
    rec = Recorder()
    settings = {"target": "1", "level": level}
    playing = [
        HokmTable(bench, f"M{i}", people, 0.0, rec, seed=i, settings=settings)
        for i in range(tables)
    ]
    matches = ShortMatches([])

    def over(_table: HokmTable) -> None:
        matches.done += 1
        if matches.done % 50 == 0:
            emu.forget_history()
        on_over(matches.done)

    for t in playing:
        t.on_match_over = over
    matches.runs = [asyncio.create_task(t.run()) for t in playing]
    try:
        yield matches
    finally:
        for t in playing:
            await t.stop()
        for task in matches.runs:
            task.cancel()
        await asyncio.gather(*matches.runs, return_exceptions=True)


def _led_suit(text: str) -> str | None:
    """The suit letter of the first card on the table, from the hand message."""
    for line in text.splitlines():
        if line.startswith("On the table:"):
            for ch in line:
                if ch in SUIT_LETTERS:
                    return SUIT_LETTERS[ch]
    return None


class MinimalTable(_Table):
    """Four people taking turns on :mod:`benchmarks.minimal_bot`'s one message."""

    def __init__(self, bench: Dispatcher, name: str, think: float, recorder: Recorder) -> None:
        super().__init__(bench, name, 4, think, recorder)
        self.table_mid: int | None = None
        self._seen: Any = None

    async def run(self) -> None:
        first = self.expect(self.group.id, lambda r: r.text.startswith("turn"))
        await self.emu.send_message(self.users[0], self.group, "/go")
        await first
        self.ready.set()

    def on_message(self, kind: str, record: MessageRecord, now: float) -> None:
        self._check_waiters(record)
        if not record.from_bot or not record.text.startswith("turn"):
            return
        if kind == "edit":
            self._table_edited(now)
        self.table_mid = record.message_id
        version = record.current
        if self.stopping or version is self._seen:
            return
        self._seen = version
        turn = int(record.text.split()[1])
        data = _datas(record)[0]
        self.spawn(self._play(self.users[turn], record.message_id, data))

    async def _play(self, user: SimUser, message_id: int, data: str) -> None:
        if self.think > 0:
            await asyncio.sleep(self.think)
        await self.bench.press(self, user, self.group.id, message_id, data, play=True)
