"""Fuzzing the real bot: hypothesis-generated updates through the Bot API emulator.

A group plays matches with the real Application while the same people, a bystander
and a stranger press anything: forged callback data (any characters, lone
surrogates, any length), real buttons of any message version (other and old games,
stale moves), buttons of other people's games, inline queries and chosen results
(fresh and old), edited messages, stickers, members joining and leaving, the bot
removed from the group and added back. Between bursts the players make real moves,
so matches end and new ones start (each in a new group: an old group keeps the old
game's buttons).

After every burst, once the bot has settled, :class:`Fuzz` checks:

- no unhandled error: no ERROR log record, no emulator internal error;
- every callback query was answered with a non-empty text;
- input that must be refused left every stored game as it was (and so did every
  press answered with an alert);
- no hidden card in any bot message of the group (``Table.check_group_shows_no_hand``).

Used by ``tests/bot/test_fuzz.py`` (short) and ``benchmarks/fuzz.py`` (long runs).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Any

from hypothesis import strategies as st
from sqlalchemy import select

from core import Match
from telegram_bot.chat import callbacks as cb
from telegram_bot.platform.storage.models import FINISHED, Game, utcnow
from testkit.emulator import BotApiEmulator, SimulationError
from testkit.simulation import BotRunner, Table, by_level

__all__ = ["Fuzz", "FuzzFailure", "program"]

#: How far back people reach for old buttons and messages: the last groups (each an
#: earlier match) and each chat's newest messages.
RECENT_GROUPS = 4
RECENT_MESSAGES = 150

# ------------------------------------------------------------------ what people do

_ANY_CHAR = st.one_of(
    st.characters(exclude_categories=()),  # surrogates included
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.sampled_from(":.=!_-0123456789abcdefpjlbscotdkxnvrgASHDCKQJT\n"),
)
_ACTIONS = [*cb.ACTIONS, "", "z", "P", "pp"]
_ARGS = st.one_of(
    st.sampled_from(
        [
            "",
            "AS",
            "10H",
            "TH",
            "2C",
            "S",
            "H",
            "1",
            "0",
            "!",
            "AS!",
            "AS.KH",
            "AS.KH.QD.JC",
            "u=en",
            "c=fa",
            "c=xx",
            "players=2",
            "players=9",
            "target=1",
            "timer=0",
            "level=god",
            "kind=bidding",
            "back",
            "-1",
            "99999999999",
        ]
    ),
    st.text(_ANY_CHAR, max_size=12),
)
#: Callback data: free text, arbitrary bytes, or shaped like the bot's own buttons
#: (with a real game id picked at run time by index, or a made-up one).
DATA = st.one_of(
    st.text(_ANY_CHAR, max_size=80).map(lambda t: ("raw", t)),
    st.binary(max_size=80).map(lambda b: ("raw", b.decode("utf-8", "surrogateescape"))),
    st.tuples(
        st.sampled_from(_ACTIONS),
        st.one_of(st.integers(0, 50), st.text(_ANY_CHAR, max_size=14)),
        st.one_of(st.none(), st.integers(-3, 3), st.integers(0, 10**12)),
        _ARGS,
    ).map(lambda t: ("shaped", t)),
)

WHO = st.integers(0, 4)  # two players, a bystander, a stranger, an outsider
WHERE = st.integers(0, 10**6)  # an index into what exists when the op runs

_PRESS_DATA = st.tuples(st.just("data"), WHO, WHERE, DATA)
_PRESS_BUTTON = st.tuples(st.just("button"), WHO, WHERE, WHERE, st.integers(-2, 1))
OP = st.one_of(
    # Presses are what people do most: three times as likely as each other kind
    # (distinct strategy objects, as one_of merges repeats of the same one).
    *(_PRESS_DATA.map(tuple) for _ in range(3)),
    *(_PRESS_BUTTON.map(tuple) for _ in range(3)),
    st.tuples(st.just("inline"), WHO, st.text(_ANY_CHAR, max_size=20), st.booleans(), WHERE),
    st.tuples(st.just("old_inline"), WHO, WHERE),
    st.tuples(
        st.just("text"),
        WHO,
        st.booleans(),
        st.one_of(
            st.sampled_from(
                [
                    "/score",
                    "/stats",
                    "/help",
                    "/start",
                    "/back",
                    "/language",
                    "/start join_x",
                    "/newgame@OtherBot",
                    "hi",
                    "A♠",
                ]
            ),
            st.text(_ANY_CHAR, min_size=1, max_size=40),
        ),
    ),
    st.tuples(st.just("edit"), WHO, st.text(_ANY_CHAR, min_size=1, max_size=30)),
    st.tuples(st.just("sticker"), WHO, st.booleans()),
    st.tuples(st.just("member"), st.integers(2, 4), st.booleans()),
    st.tuples(st.just("bot_removed"), st.booleans()),
)


def program(max_bursts: int = 6, max_ops: int = 5) -> st.SearchStrategy[list[list[tuple]]]:
    """Bursts of ops sent without waiting; the players move between bursts."""
    return st.lists(st.lists(OP, min_size=1, max_size=max_ops), min_size=1, max_size=max_bursts)


# ------------------------------------------------------------------ the checks


class FuzzFailure(AssertionError):
    pass


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class _Press:
    handle: Any
    may_change: bool


@dataclass
class Fuzz:
    emu: BotApiEmulator
    runner: BotRunner
    counts: Counter[str] = field(default_factory=Counter)
    # Seconds from each press reaching the bot's queue to its answer, fuzzed presses
    # and real moves alike: the spinner a person sees on their button.
    answer_latencies: list[float] = field(default_factory=list)

    async def start(self) -> None:
        emu = self.emu
        emu.world.listeners.append(self._on_event)
        self.players = [
            emu.add_user("سارا", language_code="fa"),
            emu.add_user("Ben", language_code="en"),
        ]
        self.bystander = emu.add_user("Cleo", language_code="en")
        self.stranger = emu.add_user("Dov", language_code="fa")  # never opened the bot
        self.outsider = emu.add_user("Eli", language_code="en")  # in no group
        for user in (*self.players, self.bystander, self.outsider):
            await emu.send_message(user, user.private_chat_id, "/start")
        self.people = [*self.players, self.bystander, self.stranger, self.outsider]
        self.groups: list[Any] = []
        self.errors = _Errors()
        logging.getLogger().addHandler(self.errors)
        self.matches = 0
        await self._new_match()

    def stop(self) -> None:
        logging.getLogger().removeHandler(self.errors)
        if self._on_event in self.emu.world.listeners:
            self.emu.world.listeners.remove(self._on_event)

    def _on_event(self, kind: str, subject: Any) -> None:
        if kind == "callback_answer":
            asked = self.emu.world.callback_queries[subject.query_id].asked
            self.answer_latencies.append(subject.time - asked)

    # -------------------------------------------------------------- matches

    async def _new_match(self) -> None:
        emu, runner = self.emu, self.runner
        members = [*self.players, self.bystander, self.stranger]
        group = emu.add_group(
            f"Table {len(self.groups) + 1}", members=members, admins=self.players[:1]
        )
        self.groups.append(group)
        self.table = Table(emu, runner, group, self.players)
        owner = self.players[0]
        await emu.send_message(owner, group.id, "/newgame")
        await runner.settle()
        game = await self.table.game()
        lobby = emu.chat_log(group.id)[-1].message_id
        size = (2, 4)[self.matches % 2]
        for option in (f"players={size}", "target=1", "timer=0"):
            await emu.press(owner, group.id, lobby, f"o:{game.id}::{option}")
        await emu.press(self.players[1], group.id, lobby, f"j:{game.id}")
        await runner.settle()
        await emu.press(owner, group.id, lobby, f"s:{game.id}")
        await runner.settle()
        self.matches += 1
        self.strategies = {
            p.id: by_level("normal0", seed=p.id + self.matches) for p in self.players
        }
        self.counts["matches"] += 1

    async def _step(self) -> None:
        """A real move by whoever is on turn; a new match once this one is over."""
        if not await self.table.step(self.strategies):
            await self._new_match()
        self.counts["moves"] += 1

    # -------------------------------------------------------------- snapshots

    async def _games(self) -> dict[str, tuple]:
        """Every stored game: whole for open ones, status and move for finished ones.

        A finished game only changes through a move (which counts up ``move``), and
        reading every finished game whole after every burst made a long run slower
        with every match it played."""
        async with self.runner.service.sessions() as s:
            done = await s.execute(
                select(Game.id, Game.status, Game.move).where(Game.status == FINISHED)
            )
            games: dict[str, tuple] = {i: (status, move) for i, status, move in done}
            rows = (await s.execute(select(Game).where(Game.status != FINISHED))).scalars()
            for g in rows:
                games[g.id] = (
                    g.status,
                    g.move,
                    json.dumps(g.state, sort_keys=True),
                    # A turn's ping (``pings``: 15 s on turn, as in a rematch nobody
                    # plays) is bookkeeping beside the game, not a change of it.
                    json.dumps([_unpinged(x) for x in g.seats]),
                    json.dumps(g.settings, sort_keys=True),
                    g.deadline,
                )
            return games

    async def _game_ids(self) -> list[str]:
        return sorted(await self._games())

    # -------------------------------------------------------------- running

    async def play(self, bursts: list[list[tuple]]) -> None:
        for burst in bursts:
            await self._burst(burst)
            await self._step()

    async def _burst(self, burst: list[tuple]) -> None:
        before = self._before = await self._games()
        ids = sorted(before)
        pushed = self.emu.world.updates._next_id
        presses: list[_Press] = []
        may_change = False  # an op other than a press that may be a real action
        for op in burst:
            try:
                result = await self._op(op, ids)
            except SimulationError:  # what a real person could not do
                self.counts["impossible"] += 1
                continue
            self.counts[op[0]] += 1
            if isinstance(result, _Press):
                presses.append(result)
            elif result:
                may_change = True
        await self.runner.settle()
        self.counts["updates"] += self.emu.world.updates._next_id - pushed
        after = await self._games()
        self._check_errors(burst)
        for press in presses:
            answer = press.handle.answer
            if answer is None or not answer.text:
                raise FuzzFailure(f"press {press.handle.data!r} answered {answer!r} in {burst!r}")
            self.counts["presses answered"] += 1
            if answer.show_alert:
                self.counts["refusals"] += 1
        # A game may change only by a real action: a press that could be one and was
        # not refused with an alert, or another op that could be one.
        may_change |= any(p.may_change and not p.handle.answer.show_alert for p in presses)
        changed = {k for k in before if before[k] != after.get(k)}
        # A person's turn timer may run out during any burst (an online table that
        # the outsider reached from /start has one): the computer plays for them.
        now = utcnow()
        timed_out = {k for k in changed if (due := _deadline(before[k])) and due <= now}
        self.counts["timers run out"] += len(timed_out)
        if changed - timed_out and not may_change:
            raise FuzzFailure(
                f"refused input changed game(s) {sorted(changed - timed_out)}: {burst!r}\n"
                + "\n".join(f"  {before[k]!r}\n  -> {after.get(k)!r}" for k in changed)
            )
        if changed:
            self.counts["bursts that moved a game"] += 1
        game = await self.table.game()
        if game is not None and game.status == "playing" and game.state:
            self.table.check_group_shows_no_hand(Match.from_json(game.state))
            self.counts["hidden-card checks"] += 1
        self.counts["bursts"] += 1

    def _check_errors(self, burst: list[tuple]) -> None:
        if self.errors.records:
            record = self.errors.records[0]
            text = logging.Formatter().format(record)
            self.errors.records.clear()
            raise FuzzFailure(f"an ERROR was logged during {burst!r}:\n{text}")
        if self.emu.server.internal_errors:
            raise FuzzFailure(f"emulator error: {self.emu.server.internal_errors!r}")

    async def _op(self, op: tuple, ids: list[str]) -> Any:
        kind, *args = op
        emu = self.emu
        if kind == "data":
            who, where, (shape, value) = args
            user = self.people[who]
            data = value if shape == "raw" else self._shaped(value, ids)
            chat, message = self._message_for(user, where)
            handle = await emu.press(user, chat, message.message_id, data)
            return _Press(handle, self._may_change(user, data))
        if kind == "button":
            who, where, which, shift = args
            user = self.people[who]
            found = self._button(user, where + which)
            if found is None:
                return False
            chat, message, data = found
            data = _shift_move(data, shift)
            handle = await emu.press(user, chat, message.message_id, data)
            return _Press(handle, self._may_change(user, data))
        if kind == "inline":
            who, query, choose, which = args
            user = self.people[who]
            group = self.groups[-1]
            results = await emu.inline_query(user, group, query)
            self.counts["inline results"] += len(results)
            if choose and results:
                await emu.choose_inline_result(user, group, results[which % len(results)])
                return True
            return False
        if kind == "old_inline":
            who, which = args
            user = self.people[who]
            answers = islice(reversed(emu.inline_answers.values()), RECENT_MESSAGES)
            offered = [r for a in answers if a.user is user for r in a]
            if not offered:
                return False
            await emu.choose_inline_result(
                user, self.groups[which % len(self.groups)], offered[which % len(offered)]
            )
            return True  # may be the current hand's card: then it is a real move
        if kind == "text":
            who, in_group, text = args
            user = self.people[who]
            chat = self.groups[-1] if in_group else user.private_chat
            await emu.send_message(user, chat, text)
            return text.startswith("/back")
        if kind == "edit":
            who, text = args
            user = self.people[who]
            mine = [
                m
                for c in (user.private_chat, *self.groups[-RECENT_GROUPS:])
                for m in self._recent(c)
                if m.sender is user and m.sticker is None and m.service is None
            ]
            if not mine:
                return False
            await emu.edit_message(user, mine[-1].chat, mine[-1].message_id, text)
            return False
        if kind == "sticker":
            who, in_group = args
            user = self.people[who]
            await emu.send_sticker(user, self.groups[-1] if in_group else user.private_chat)
            return False
        if kind == "member":
            who, join = args
            user = self.people[who]
            group = self.groups[-1]
            await (emu.join_chat(user, group) if join else emu.leave_chat(user, group))
            return False
        if kind == "bot_removed":
            (removed,) = args
            group = self.groups[-1]
            if removed:
                group.remove_bot()
            else:
                group.add_bot()
            return False
        raise AssertionError(kind)

    # -------------------------------------------------------------- helpers

    def _shaped(self, value: tuple, ids: list[str]) -> str:
        action, game, move, arg = value
        game_id = ids[game % len(ids)] if isinstance(game, int) and ids else str(game)
        if isinstance(move, int) and -3 <= move <= 3:
            move = self._current_move(game_id) + move
        return ":".join(["" if x is None else str(x) for x in (action, game_id, move, arg)])

    def _current_move(self, game_id: str) -> int:
        stored = self._before.get(game_id)
        return stored[1] if stored else 0

    def _reach(self, user: Any) -> list[Any]:
        """The chats this person can press in: their private chat and the recent
        groups they are in (old games' groups included, up to RECENT_GROUPS)."""
        groups = [g for g in self.groups[-RECENT_GROUPS:] if g.is_member(user)]
        return [user.private_chat, *groups]

    def _recent(self, chat: Any) -> list[Any]:
        """The chat's newest RECENT_MESSAGES messages, oldest first: a long run's
        private chats hold tens of thousands, and scanning them all for every op made
        the run slower with every match."""
        messages = self.emu.chat(chat).messages
        newest = sorted(
            islice(reversed(messages.values()), RECENT_MESSAGES * 2), key=lambda m: m.message_id
        )
        return newest[-RECENT_MESSAGES:]

    def _message_for(self, user: Any, where: int) -> tuple[Any, Any]:
        """A message this person can press on: in their private chat or a group."""
        chats = self._reach(user)
        chat = chats[where % len(chats)]
        messages = [m for m in self._recent(chat) if not m.deleted]
        if not messages:
            raise SimulationError("nothing to press on")
        return chat, messages[(where // len(chats)) % len(messages)]

    def _button(self, user: Any, where: int) -> tuple[Any, Any, str] | None:
        """Any button that any version of a bot message this person can see ever had
        (their private chat's, the groups' they are in: old games' too)."""
        found = []
        for chat in self._reach(user):
            for message in self._recent(chat):
                if message.from_bot and not message.deleted:
                    for version in message.versions:
                        for row in (version.reply_markup or {}).get("inline_keyboard", []):
                            for b in row:
                                if "callback_data" in b:
                                    found.append((chat, message, b["callback_data"]))
        if not found:
            return None
        return found[where % len(found)]

    def _may_change(self, user: Any, data: str) -> bool:
        """Could this press be a real action? Only a button of the current move (or
        hand) of someone seated in that game, or a lobby/settings/language/'I'm back'
        button."""
        try:
            parsed = cb.decode(data)
        except cb.MalformedCallback:
            return False
        if parsed.action in ("j", "l", "b", "s", "c", "o", "g", "r"):
            return True
        stored = self._before.get(parsed.game_id)
        if stored is None or stored[0] != "playing":
            return False  # no such game, or it is over: nothing to act on
        # Seated in it: the group's players, or anyone at an online table (the
        # bystander and the outsider reach /online from their /start).
        if user.id not in {seat.get("user_id") for seat in json.loads(stored[3])}:
            return False
        if parsed.move is None:
            return True
        move, state = stored[1], json.loads(stored[2])
        hand = Match.from_json(state).hand_no
        return parsed.move == (hand if parsed.action == "p" else move)


def _unpinged(seat: dict) -> dict:
    return {k: v for k, v in seat.items() if k != "pinged"}


def _deadline(snapshot: tuple) -> datetime | None:
    """An open game's turn timer, from its snapshot (None: none, or finished)."""
    return snapshot[5] if len(snapshot) > 5 else None


def _shift_move(data: str, shift: int) -> str:
    """The same button drawn ``-shift`` moves earlier (a stale press), or as is."""
    parts = data.split(":")
    if shift >= 0 or len(parts) < 3 or not parts[2].isdigit():
        return data
    parts[2] = str(max(0, int(parts[2]) + shift))
    return ":".join(parts)
