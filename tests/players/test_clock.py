"""The hard player's clock holds with every core busy: no decision (trump, discards,
draws, bids, cards) takes more than twice its budget while CPU burners run beside it."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from core.burner import Burner, default_burners
from core.match import Match, Phase
from core.players import make_player
from core.players.clock import Clock, CostTable, OutOfTime
from core.players.solver import wait_idle
from core.variant import Variant

from .helpers import slow_full_deal


def _decision_times(
    v: Variant, seed: int, budget: float, decisions: int = 1000
) -> list[tuple[float, float, str]]:
    """The decisions of hard players in the first hand of ``Match(v, seed)`` (at
    most ``decisions``): (wall seconds, CPU seconds of the process meanwhile, what)."""
    m, _ = Match.new(v, seed)
    players = [make_player("hard", seed=seed + s, time_budget=budget) for s in range(v.players)]
    out: list[tuple[float, float, str]] = []
    hand = m.hand_no
    while not m.is_over and m.hand_no == hand and len(out) < decisions:
        seat = m.turn
        view = m.view(seat)
        what = str(view.phase) + (f" {len(view.tricks) + 1}" if view.phase is Phase.PLAY else "")
        t0, c0 = time.perf_counter(), time.process_time()
        action = players[seat].act(view)
        out.append((time.perf_counter() - t0, time.process_time() - c0, what))
        m.apply(seat, action)
    return out


def _sequence(v: Variant, budget: float) -> list[tuple[float, float, str]]:
    """4 players: the trump choice and first two tricks of eight deals (the 52-card
    solves, the slowest); 2 and 3 players, bidding: one whole hand."""
    if v.players == 4:
        return [t for seed in range(4242, 4250) for t in _decision_times(v, seed, budget, 9)]
    return _decision_times(v, 4242, budget)


@pytest.mark.parametrize(
    ("v", "budget"),
    [
        (Variant.four(), 0.1),
        (Variant.three(), 0.1),
        (Variant.two(), 0.1),
        (Variant.bidding(), 0.1),
    ],
    ids=("4p", "3p", "2p", "bidding"),
)
def test_no_decision_over_twice_the_budget_under_load(v: Variant, budget: float) -> None:
    """Burners keep every core busy. A decision over twice its budget fails the
    test unless the process was starved meanwhile: it got less CPU time than the
    budget (the machine is shared, and no clock holds when the process gets no
    core). A player that computes too long uses the CPU, so it still fails."""
    # The CPU is the process's: a solve an earlier test gave up on may still run
    # in the solver thread, and a full collection would walk every earlier test's
    # objects. Neither is this player's, so wait for the one and freeze the other.
    wait_idle()
    gc.collect()
    gc.freeze()
    try:
        with Burner(default_burners(1)) as burner:
            assert burner.running
            times = _sequence(v, budget)
    finally:
        gc.unfreeze()
    slow = [
        (round(t / budget, 2), round(cpu / budget, 2), what)
        for t, cpu, what in times
        if t > 2 * budget and cpu > budget
    ]
    assert not slow, f"decisions over 2x the {budget} s budget (wall, CPU, what): {slow}"
    # The player did think (a clock that never starts anything would pass too).
    assert max(t for t, _, _ in times) > 0.5 * budget


def test_clock_refuses_a_step_that_would_not_fit() -> None:
    clock = Clock(0.5)
    assert clock.fits(0.1)
    assert not clock.fits(0.6)  # past the budget
    with pytest.raises(OutOfTime):
        clock.check(1.0)
    assert clock.give_up > clock.deadline


def test_part_of_a_clock_keeps_its_start_and_scales_its_budget() -> None:
    clock = Clock(0.5)
    half = clock.part(0.5)
    assert half.start == clock.start
    assert half.deadline == pytest.approx(clock.start + 0.25)
    assert half.give_up - half.start == pytest.approx((clock.give_up - clock.start) / 2)
    assert not half.fits(0.3) and clock.fits(0.3)


def test_cost_table_learns_from_what_steps_cost() -> None:
    table = CostTable(lambda key: 0.5, quantile=0.9, trust=10)
    assert table.estimate("k") == 0.5  # the prior until enough were seen
    for _ in range(9):
        table.record("k", 0.01)
    assert table.estimate("k") == 0.5
    table.record("k", 0.02)
    assert table.estimate("k") == 0.02  # the 90th percentile of ten
    assert table.estimate("other") == 0.5


def test_a_solve_that_overruns_is_left_behind() -> None:
    """A solve still running at the clock's give-up time is abandoned: the decision
    goes on (OutOfTime), the solver finishes it aside and is free again after."""
    from core.players.double_dummy import dds_cards_reaching
    from core.players.solver import DDS_COSTS

    took, hands = slow_full_deal()
    key = ("reach", 13)
    clock = Clock(took / 20)
    DDS_COSTS._cache[key] = 0.0  # pretend it is cheap, so that it starts
    try:
        with pytest.raises(OutOfTime):
            dds_cards_reaching(hands, (), 0, 0, 7, clock)
        assert clock.elapsed() < took / 2
    finally:
        DDS_COSTS._cache.pop(key, None)
    dds_cards_reaching(hands, (), 0, 0, 7)  # waits for the solver, then solves


_EXIT_WHILE_SOLVING = """
from core.players.clock import Clock, OutOfTime
from core.players.double_dummy import dds_cards_reaching
from core.players.solver import DDS_COSTS, _BUSY
from tests.players.helpers import slow_full_deal

took, hands = slow_full_deal()
DDS_COSTS._cache[("reach", 13)] = 0.0
try:
    dds_cards_reaching(hands, (), 0, 0, 7, Clock(took / 20))
except OutOfTime:
    print("left behind" if _BUSY.locked() else "finished")
"""


def test_a_process_may_exit_while_a_solve_it_left_behind_runs() -> None:
    """DDS frees its per-thread memory at exit: the solver waits for the solve it was
    running first, so the process ends cleanly instead of crashing."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WHILE_SOLVING],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    assert done.stdout.strip() == "left behind"
    assert done.returncode == 0, done.stderr


def test_waiting_for_the_solver_lasts_until_a_solve_left_behind_ends() -> None:
    from core.players.double_dummy import dds_cards_reaching
    from core.players.solver import _BUSY, DDS_COSTS

    took, hands = slow_full_deal()
    key = ("reach", 13)
    DDS_COSTS._cache[key] = 0.0  # pretend it is cheap, so that it starts
    try:
        with pytest.raises(OutOfTime):
            dds_cards_reaching(hands, (), 0, 0, 7, Clock(took / 20))
    finally:
        DDS_COSTS._cache.pop(key, None)
    assert _BUSY.locked()  # the solve runs on
    wait_idle()
    assert not _BUSY.locked()
