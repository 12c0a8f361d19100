"""The killable solver: large clocked solves run in a child process, which answers
as the solver thread does and is killed, not waited for, when its decision gives up."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.players import make_player
from core.players.clock import Clock, OutOfTime
from core.players.double_dummy import dds_card_tricks, dds_cards_reaching
from core.players.solver import DDS_COSTS, solver_process

from .helpers import played, slow_full_deal

ROOT = Path(__file__).resolve().parents[2]


def _positions(count: int, seed: int):
    """Random positions: four hands of equal size (after ``played`` cards each, the
    trick between tricks) or with a trick under way, and a trump."""
    rng = random.Random(seed)
    for _ in range(count):
        cards = list(range(52))
        rng.shuffle(cards)
        size = rng.randint(1, 13)
        hands = [sum(1 << c for c in cards[13 * s : 13 * s + size]) for s in range(4)]
        leader = rng.randrange(4)
        trick: list[tuple[int, int]] = []
        for k in range(rng.randrange(3) if size > 1 else 0):
            seat = (leader + k) % 4
            suit_cards = [c for c in range(52) if hands[seat] >> c & 1]
            if trick:
                led = trick[0][1] // 13
                same = [c for c in suit_cards if c // 13 == led]
                suit_cards = same or suit_cards
            c = rng.choice(suit_cards)
            hands[seat] &= ~(1 << c)
            trick.append((seat, c))
        yield hands, trick, leader, rng.randrange(4), rng.randint(1, size)


def test_the_child_answers_as_the_solver_thread_does() -> None:
    lane = solver_process()
    before = lane.solved
    asked = 0
    for hands, trick, leader, trump, target in _positions(60, seed=5):
        roomy = Clock(60.0)
        assert dds_cards_reaching(hands, trick, leader, trump, target, roomy, kill_from=1) == (
            dds_cards_reaching(hands, trick, leader, trump, target)
        )
        assert dds_card_tricks(hands, trick, leader, trump, clock=roomy, kill_from=1) == (
            dds_card_tricks(hands, trick, leader, trump)
        )
        asked += 2
    assert lane.solved - before == asked  # every clocked one went to the child


def test_small_or_unclocked_solves_stay_in_the_thread() -> None:
    lane = solver_process()
    before = lane.solved
    hands, trick, leader, trump, _ = next(
        p for p in _positions(50, seed=6) if max(h.bit_count() for h in p[0]) == 5
    )
    dds_cards_reaching(hands, trick, leader, trump, 1, Clock(60.0), kill_from=6)
    dds_cards_reaching(hands, trick, leader, trump, 1, None, kill_from=1)
    dds_card_tricks(hands, trick, leader, trump, clock=Clock(60.0))
    assert lane.solved == before


def test_a_solve_given_up_on_is_killed_and_the_child_replaced() -> None:
    took, hands = slow_full_deal()
    lane = solver_process()
    key = ("reach", 13)
    first = lane.pid()
    killed = lane.killed
    cpu = lane.cpu()
    DDS_COSTS._cache[key] = 0.0  # pretend it is cheap, so that it starts
    try:
        with pytest.raises(OutOfTime):
            dds_cards_reaching(hands, (), 0, 0, 7, Clock(took / 20), kill_from=13)
    finally:
        DDS_COSTS._cache.pop(key, None)
    assert lane.killed == killed + 1
    assert first is not None and _ended(first)
    given_up = lane.cpu() - cpu  # the killed child's CPU, its start included
    assert lane.pid() not in (None, first)  # the next child was started at once
    assert not lane.lock.locked()
    # The next child answers, as the thread does. Solving the deal to its end cost
    # it over twice the CPU the killed child spent (a twentieth of the solve's
    # time, and the child's start when it had answered nothing before): the solve
    # was stopped, not left to run.
    expected = dds_cards_reaching(hands, (), 0, 0, 7)
    dds_cards_reaching(hands, (), 0, 0, 1, Clock(60.0), kill_from=13)  # started
    cpu = lane.cpu()
    assert dds_cards_reaching(hands, (), 0, 0, 7, Clock(60.0), kill_from=13) == expected
    assert given_up < (lane.cpu() - cpu) / 2


def test_a_child_that_dies_costs_one_solve_and_is_replaced() -> None:
    lane = solver_process()
    lane.start()
    pid = lane.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    hands, trick, leader, trump, target = next(_positions(1, seed=7))
    died = lane.died
    with pytest.raises(OutOfTime):
        dds_cards_reaching(hands, trick, leader, trump, target, Clock(60.0), kill_from=1)
    assert lane.died == died + 1
    assert dds_cards_reaching(hands, trick, leader, trump, target, Clock(60.0), kill_from=1) == (
        dds_cards_reaching(hands, trick, leader, trump, target)
    )


def test_hard_sends_its_large_solves_to_the_child_and_plays_as_with_the_thread() -> None:
    """With a sample cap and a roomy clock the search's answers do not depend on where
    the solves ran, so the cards chosen are the same."""
    from core.variant import Variant

    lane = solver_process()
    chosen = {}
    for kill_from in (11, 0):
        before = lane.solved
        cards = []
        for seed in range(3):
            m = played(Variant(players=4), 880000 + seed, 1, make_player("normal", seed=seed))
            p = make_player("hard", seed=seed, time_budget=60.0)
            p.kill_solves_from = kill_from
            p.max_samples = 24
            p.settle_samples = 10**6
            cards.append(p.act(m.view(m.turn)))
        chosen[kill_from] = cards
        assert (lane.solved > before) == (kill_from > 0)
    assert chosen[11] == chosen[0]


_EXIT_WITH_A_CHILD = """
import os, sys
from core.players import dds_child
from core.players.double_dummy import _dds_deal
from core.players.solver import solver_process
from tests.players.helpers import slow_full_deal

took, hands = slow_full_deal()
lane = solver_process()
print(lane.pid(), flush=True)
if sys.argv[1] == "solving":  # a solve under way in the child as the process is killed
    request = dds_child.REQUEST.pack(7, 2) + bytes(_dds_deal(hands, (), 0, 0))
    lane._child.stdin.write(request)
    os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("how", ["exit", "solving"])
def test_no_child_outlives_its_process(how: str) -> None:
    """At a clean exit the child is stopped; a process killed outright leaves its
    child to finish the solve under way and exit, as its requests' pipe is closed."""
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITH_A_CHILD, how],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    child = int(done.stdout.split()[0])
    if how == "exit":
        assert done.returncode == 0, done.stderr
        assert _ended(child)
    else:
        assert done.returncode == -signal.SIGKILL
        # It ends once its solve does; the bound only keeps a failure from hanging.
        waited = 0
        while not _ended(child) and waited < 6000:
            time.sleep(0.01)
            waited += 1
        assert _ended(child)


def _ended(pid: int) -> bool:
    """Whether the process has exited (an orphan's exit may be left unreaped, a
    zombie, where PID 1 does not reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_forked_process_starts_its_own_child_and_leaves_the_parents() -> None:
    lane = solver_process()
    lane.start()
    parents = lane.pid()
    hands, trick, leader, trump, target = next(_positions(1, seed=8))
    expected = dds_cards_reaching(hands, trick, leader, trump, target)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the fork: solve in a child of its own, then exit as a process does
        ok = False
        try:
            mine = solver_process()
            got = dds_cards_reaching(hands, trick, leader, trump, target, Clock(60), kill_from=1)
            ok = mine is not lane and mine.pid() != parents and got == expected
            mine.close()
            lane.close()  # the inherited copy: leaves the parent's child alone
            ok = ok and lane.pid() == parents
        finally:
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)
    assert lane.pid() == parents is not None and not _ended(parents)
    assert dds_cards_reaching(hands, trick, leader, trump, target, Clock(60), kill_from=1) == (
        expected
    )
