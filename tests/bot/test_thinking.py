"""Computer players think in worker processes; the bot answers others meanwhile."""

from __future__ import annotations

import asyncio
import os

import pytest

from core import Match, PlayCard, Variant
from telegram_bot.platform.thinking import Thinkers
from testkit.emulator import SimulationError
from testkit.simulation import BotRunner

from .driver import Table, by_level
from .gated_thinking import gated_think
from .test_game_flow import _data, _open, _people


async def test_a_hard_move_is_computed_in_another_process() -> None:
    thinkers = Thinkers(1)
    try:
        match = Match(Variant(players=4, target=7), seed=5)
        match.start()
        view = match.view(match.turn)
        action = await thinkers.act("hard", 0.05, view)
        assert action in view.legal
        assert thinkers.worker_pids and os.getpid() not in thinkers.worker_pids
    finally:
        await thinkers.shutdown()


async def _until(check, what: str) -> None:
    """Wait for progress made elsewhere (the bot, a worker process)."""
    for _ in range(6000):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def _human_acts(emu, table: Table, user) -> object:
    """The person plays once, on their turn, and the bot's answer is returned.

    The bot may be replacing the hand message meanwhile (after the trump call it is
    posted anew, the old one deleted): the person then presses on the new one."""
    while True:
        game = await table.game()
        match = Match.from_json(game.state)
        seat = match.turn
        action = by_level("normal", seed=1)(match.view(seat))
        mid = (game.private_messages or {}).get(str(user.id))
        message = emu.chat(user.private_chat_id).message(mid) if mid is not None else None
        if message is None or message.deleted:
            await asyncio.sleep(0.01)
            continue
        if isinstance(action, PlayCard):
            data = f"p:{game.id}:{match.hand_no}:{action.card.ascii}"
        else:
            data = f"t:{game.id}:{game.move}:{action.suit.letter}"
        try:
            handle = await emu.press(user, user.private_chat_id, message.message_id, data)
        except SimulationError:  # deleted between the look and the press
            continue
        return await handle.wait_answer(timeout=60)


def _humans_turn(table: Table, user):
    async def check() -> bool:
        game = await table.game()
        if game is None or game.status != "playing":
            return False
        match = Match.from_json(game.state)
        return (
            match.turn is not None
            and game.seats[match.order[match.turn]].get("user_id") == user.id
            and str(user.id) in (game.private_messages or {})
        )

    return check


async def test_the_bot_answers_while_a_computer_thinks(emu, db_url, tmp_path, monkeypatch, caplog):
    gate = tmp_path / "gate"
    waiting = tmp_path / "gate.waiting"
    monkeypatch.setenv("HOKM_TEST_GATE", str(gate))
    runner = BotRunner(emu, db_url, think_processes=1)
    await runner.start()
    service = runner.service
    await service.thinkers.shutdown()
    service.thinkers = Thinkers(1, worker=gated_think)
    try:
        # Table A: one person and three hard computers, whose moves wait at the gate.
        ann = (await _people(emu, ["Ann"], lang="en"))[0]
        group_a = emu.add_group("A", members=[ann], admins=[ann])
        game_a, lobby_a = await _open(emu, runner, group_a, ann, timer=0, level="hard")
        await emu.press(ann, group_a.id, lobby_a.message_id, _data(game_a.id, "s"))
        table_a = Table(emu, runner, group_a, [ann])

        async def thinking() -> bool:
            if await _humans_turn(table_a, ann)():
                answer = await _human_acts(emu, table_a, ann)
                assert not answer.show_alert, answer
            return waiting.exists()

        try:
            await _until(thinking, "a hard move handed to the pool")
        except AssertionError as exc:
            errors = [r.getMessage() + str(r.exc_info) for r in caplog.records if r.exc_info]
            raise AssertionError(f"{exc}; errors logged: {errors}") from None
        move_a = (await table_a.game()).move

        # Table B (easy computers, which answer in this process) is served meanwhile.
        ben = (await _people(emu, ["Ben"], lang="en", start=False))[0]
        await emu.send_message(ben, ben.private_chat_id, "/start")
        group_b = emu.add_group("B", members=[ben], admins=[ben])
        await emu.send_message(ben, group_b.id, "/newgame")
        table_b = Table(emu, runner, group_b, [ben])

        async def lobby_b() -> bool:
            return (g := await table_b.game()) is not None and g.table_message_id is not None

        await _until(lobby_b, "B's lobby")
        game_b = await table_b.game()
        for arg in ("timer=0", "level=easy"):
            handle = await emu.press(
                ben, group_b.id, game_b.table_message_id, _data(game_b.id, "o", arg)
            )
            await handle.wait_answer(timeout=60)
        handle = await emu.press(ben, group_b.id, game_b.table_message_id, _data(game_b.id, "s"))
        await handle.wait_answer(timeout=60)
        await _until(_humans_turn(table_b, ben), "Ben's turn")
        answer = await _human_acts(emu, table_b, ben)
        assert not answer.show_alert, answer
        assert (await table_a.game()).move == move_a, "A's computer moved before the gate"

        gate.touch()
        await runner.settle()
        assert (await table_a.game()).move > move_a
        assert service.thinkers.worker_pids and os.getpid() not in service.thinkers.worker_pids
    finally:
        gate.touch()
        await runner.stop()
    assert service.thinkers._pool is None


class _NotedThinkers:
    """The think pool's API, answering at once by the rules and noting the budget
    each computer move was asked with."""

    worker_pids: tuple[int, ...] = ()

    def __init__(self) -> None:
        self.asked: list[tuple[int, float]] = []  # (players, budget)

    async def act(self, level, budget, view):
        self.asked.append((len(view.hand_sizes), budget))
        return by_level("normal", seed=1)(view)

    async def shutdown(self) -> None:
        pass


@pytest.mark.parametrize("players", [4, 3])
async def test_hard_computers_think_half_the_budget_at_four(emu, db_url, players):
    """HOKM_THINK_SECONDS (0.05 in the test bot) is the budget with 2 and 3 players;
    with 4, where hard stops most searches early, its computers think half of it."""
    runner = BotRunner(emu, db_url, think_processes=1)
    await runner.start()
    await runner.service.thinkers.shutdown()
    noted = runner.service.thinkers = _NotedThinkers()
    try:
        ann = (await _people(emu, ["Ann"], lang="en"))[0]
        group = emu.add_group("G", members=[ann], admins=[ann])
        game, lobby = await _open(emu, runner, group, ann, players=players, timer=0, level="hard")
        await emu.press(ann, group.id, lobby.message_id, _data(game.id, "s"))
        table = Table(emu, runner, group, [ann])

        async def computers_moved() -> bool:
            if await _humans_turn(table, ann)():
                await _human_acts(emu, table, ann)
            return len(noted.asked) >= 3

        await _until(computers_moved, "three computer moves")
    finally:
        await runner.stop()
    assert set(noted.asked) == {(players, 0.025 if players == 4 else 0.05)}


def test_the_pool_leaves_with_a_killed_bot():
    """A bot killed with SIGKILL cannot shut its pool down; its workers notice the
    parent is gone and exit instead of lingering."""
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import asyncio, os\n"
        "from telegram_bot.platform.thinking import Thinkers\n"
        "from core import Match, Variant\n"
        "async def main():\n"
        "    t = Thinkers(1)\n"
        "    m, _ = Match.new(Variant.four(), seed=1)\n"
        "    await t.act('normal', 0.05, m.view(m.turn))\n"
        "    kids = [p.pid for p in t._pool._processes.values()]\n"
        "    print(*kids, flush=True)\n"
        "    await asyncio.sleep(600)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    workers = [int(x) for x in proc.stdout.readline().split()]
    assert workers
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split()[2] != "Z"
        except FileNotFoundError:
            return False

    # The watchdog looks once a second; a minute covers a machine with both cores busy.
    for _ in range(600):
        if not any(alive(pid) for pid in workers):
            return
        time.sleep(0.1)
    raise AssertionError(f"pool workers {workers} outlived their bot")


def test_a_worker_started_after_its_bot_died_leaves():
    """The bot can die between spawning a worker and the worker's start-up: the worker
    then already has another parent, and must still see that its bot is gone."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    script = (
        "import time\n"
        "from telegram_bot.platform.thinking import _start_worker\n"
        f"_start_worker({dead.pid})\n"
        "time.sleep(600)\n"
        "print('lingered', flush=True)\n"
    )
    worker = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        # Ends within a second of its start-up on a quiet machine; the bound is only
        # there so that a regression fails instead of hanging the suite.
        out, _ = worker.communicate(timeout=300)
    finally:
        worker.kill()
    assert "lingered" not in out
    assert worker.returncode == 0
