"""The hard player's clock holds with every core busy: no decision (trump, discards,
draws, bids, cards) takes more than twice its budget while CPU burners run beside it."""

from __future__ import annotations

import time

import pytest

from core.burner import Burner, default_burners
from core.match import Match, Phase
from core.players import make_player
from core.players.clock import Clock, CostTable, OutOfTime
from core.variant import Variant


def _decision_times(v: Variant, seed: int, budget: float) -> list[tuple[float, str]]:
    """Every decision of one hand played by hard players only, with its phase."""
    m, _ = Match.new(v, seed)
    players = [make_player("hard", seed=seed + s, time_budget=budget) for s in range(v.players)]
    out: list[tuple[float, str]] = []
    hand = m.hand_no
    while not m.is_over and m.hand_no == hand:
        seat = m.turn
        view = m.view(seat)
        what = str(view.phase) + (f" {len(view.tricks) + 1}" if view.phase is Phase.PLAY else "")
        t0 = time.perf_counter()
        action = players[seat].act(view)
        out.append((time.perf_counter() - t0, what))
        m.apply(seat, action)
    return out


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
    with Burner(default_burners(1)) as burner:
        assert burner.running
        times = _decision_times(v, 4242, budget)
    slow = [(round(t / budget, 2), what) for t, what in times if t > 2 * budget]
    assert not slow, f"decisions over 2x the {budget} s budget: {slow}"
    # The player did think (a clock that never starts anything would pass too).
    assert max(t for t, _ in times) > 0.5 * budget


def test_clock_refuses_a_step_that_would_not_fit() -> None:
    clock = Clock(0.5)
    assert clock.fits(0.1, 0.5)
    assert not clock.fits(0.6)  # past the budget
    assert not clock.fits(0.1, 1.0)  # its worst case past 1.9 times the budget
    with pytest.raises(OutOfTime):
        clock.check(1.0)


def test_cost_table_learns_from_what_steps_cost() -> None:
    table = CostTable(lambda key: (0.5, 2.0), trust=4, trust_worst=8)
    assert table.estimate("k") == (0.5, 2.0)  # the prior until enough were seen
    for _ in range(4):
        table.record("k", 0.01)
    typical, worst = table.estimate("k")
    assert typical == 0.01 and worst == 2.0  # the worst case needs more evidence
    for _ in range(4):
        table.record("k", 0.02)
    assert table.estimate("k") == (0.02, 0.02)
    table.record("k", 0.3)  # a slower step than any known counts at once
    assert table.estimate("k")[1] == 0.3
