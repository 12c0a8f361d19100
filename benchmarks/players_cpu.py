"""CPU time per decision of the computer players, by level and player count.

    .venv/bin/python -m benchmarks.players_cpu [--levels normal hard] [--players 4 3 2]
        [--deals 10] [--seed 990000] [--budget 0.25] [--set NAME=VALUE ...]
        [--by-trick] [--split]

For each level and player count, plays the first hand of ``--deals`` seeded deals
with the level at seats 0 and 2 (4 players) or seat 0 (2 and 3 players) and
"normal" elsewhere, and times each of the level's decisions (trump, cards, discards,
draws) around ``player.act(view)``: CPU seconds (:class:`LevelCpu`) and wall
seconds. CPU time holds under load, wall time does not; the load average is
printed with each row.
``--set`` changes a setting of the measured level (as the arena's ``--a-set``).
``--split`` also prints where hard's 4-player decisions spend their time: the
double-dummy solves by kind (wall seconds in the solver thread), of them the solves
a decision gave up on, and the deal pool's updates (CPU seconds), per decision.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import os
import statistics
import time
from collections.abc import Iterator

from core.arena import parse_settings, quantile, tuned
from core.events import HandEnded
from core.match import Match, Phase
from core.players import make_player, particles, solver
from core.variant import Variant


def _solver_cpu() -> float:
    """CPU seconds of the double-dummy solver so far: its thread's, and its child
    processes' in a checkout that had them (``67fa743``, measured in RESULTS.md,
    "Issue 25, fifteenth session")."""
    spent = getattr(solver, "child_cpu", lambda: 0.0)()
    thread = solver._thread
    if thread is not None and thread.ident is not None:
        spent += time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return spent


class LevelCpu:
    """The measured level's CPU: its own thread's while it decides, and all the
    double-dummy solver thread's, whenever it runs (only the measured level solves,
    and a solve its decision gave up on runs on during the other seats' turns: each
    decision is charged the solver's CPU since the one before; until 2026-11-29 the
    process's CPU during the decision was counted, which missed those)."""

    def __init__(self) -> None:
        self._solver = _solver_cpu()

    def decide(self, act):
        """``act()``, and the CPU seconds it is charged."""
        c0 = time.thread_time()
        action = act()
        return action, time.thread_time() - c0 + self._aside()

    def rest(self) -> float:
        """The solver's CPU since the last decision, once a solve left running ends."""
        with solver._BUSY:
            return self._aside()

    def _aside(self) -> float:
        now = _solver_cpu()
        spent, self._solver = now - self._solver, now
        return spent


def measure(
    level: str,
    players: int,
    deals: int,
    seed: int,
    budget: float,
    settings: tuple[tuple[str, str], ...] = (),
    by_trick: dict[str, list[float]] | None = None,
) -> tuple[list[float], list[float]]:
    """(CPU seconds, wall seconds) of each of the level's decisions; ``by_trick``
    collects the CPU seconds by what was decided ("trump", "play 1", ...)."""
    cpu: list[float] = []
    wall: list[float] = []
    mine = {0, 2} if players == 4 else {0}
    clock = LevelCpu()
    for d in range(deals):
        m, _ = Match.new(Variant(players=players), seed + d)
        seats = [
            tuned(make_player(level, seed=(seed + d) * 10 + s, time_budget=budget), settings)
            if s in mine
            else make_player("normal", seed=(seed + d) * 10 + s)
            for s in range(players)
        ]
        ended = False
        while not ended:
            seat = m.turn
            view = m.view(seat)
            t0 = time.perf_counter()
            if seat in mine:
                action, spent = clock.decide(functools.partial(seats[seat].act, view))
                cpu.append(spent)
                wall.append(time.perf_counter() - t0)
                if by_trick is not None:
                    what = str(view.phase)
                    if view.phase is Phase.PLAY:
                        what += f" {len(view.tricks) + 1}"
                    by_trick.setdefault(what, []).append(cpu[-1])
            else:
                action = seats[seat].act(view)
            ended = any(isinstance(e, HandEnded) for e in m.apply(seat, action))
    if cpu:
        cpu[-1] += clock.rest()
    return cpu, wall


@contextlib.contextmanager
def time_split() -> Iterator[collections.Counter[str]]:
    """Seconds spent, while inside, in double-dummy solves by kind (``solve count``,
    ``solve reach``, ``solve edge``: :func:`.solver.cost_key`), of them in solves
    their decision gave up on (``abandoned``: they ran on to their end for nothing),
    and in :meth:`.particles.DealPool.update` (``pool update``)."""
    spent: collections.Counter[str] = collections.Counter()
    record, update = solver.DDS_COSTS.record, particles.DealPool.update
    record_abandoned = solver.ABANDONED_COSTS.record

    def timed_record(key, seconds: float) -> None:
        spent[f"solve {key[0]}"] += seconds
        record(key, seconds)

    def timed_abandoned(key, seconds: float) -> None:
        spent["abandoned"] += seconds
        record_abandoned(key, seconds)

    def timed_update(pool, *args, **kwargs) -> None:
        c0 = time.process_time()
        update(pool, *args, **kwargs)
        spent["pool update"] += time.process_time() - c0

    solver.DDS_COSTS.record = timed_record  # type: ignore[method-assign]
    solver.ABANDONED_COSTS.record = timed_abandoned  # type: ignore[method-assign]
    particles.DealPool.update = timed_update  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        del solver.DDS_COSTS.record
        del solver.ABANDONED_COSTS.record
        particles.DealPool.update = update  # type: ignore[method-assign]


def row(level: str, players: int, cpu: list[float], wall: list[float], load: tuple) -> str:
    cs, ws = sorted(cpu), sorted(wall)
    return (
        f"{level:10s} {players}p  {len(cs):5d} decisions  CPU ms/decision mean "
        f"{statistics.fmean(cs) * 1000:7.1f}  p50 {quantile(cs, 0.5) * 1000:6.1f}  "
        f"p95 {quantile(cs, 0.95) * 1000:6.1f}  max {cs[-1] * 1000:7.1f}  | wall mean "
        f"{statistics.fmean(ws) * 1000:7.1f}  p95 {quantile(ws, 0.95) * 1000:6.1f}  "
        f"max {ws[-1] * 1000:7.1f}  | load {load[0]:.1f} -> {load[1]:.1f}"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--levels", nargs="+", default=["normal", "yardstick", "hard"])
    p.add_argument("--players", nargs="+", type=int, default=[4, 3, 2])
    p.add_argument("--deals", type=int, default=10)
    p.add_argument("--seed", type=int, default=990000)
    p.add_argument("--budget", type=float, default=0.25, help="hard's seconds per decision")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="a setting of the level")
    p.add_argument("--by-trick", action="store_true", help="also the mean CPU by decision")
    p.add_argument("--split", action="store_true", help="also hard's time by solve kind, pool")
    args = p.parse_args(argv)
    settings = parse_settings(args.set)
    for level in args.levels:
        for n in args.players:
            load0 = os.getloadavg()[0]
            split: dict[str, list[float]] = {}
            with time_split() if args.split else contextlib.nullcontext() as spent:
                cpu, wall = measure(
                    level,
                    n,
                    args.deals,
                    args.seed,
                    args.budget,
                    settings if level == "hard" else (),
                    split if args.by_trick else None,
                )
            print(row(level, n, cpu, wall, (load0, os.getloadavg()[0])), flush=True)
            if spent:
                print(
                    "    ms per decision in: "
                    + ", ".join(f"{k} {v / len(cpu) * 1000:.1f}" for k, v in sorted(spent.items()))
                )
            if split:
                print(
                    "    CPU ms by decision: "
                    + ", ".join(
                        f"{k} {statistics.fmean(v) * 1000:.1f} ({len(v)})"
                        for k, v in sorted(split.items(), key=lambda kv: (len(kv[0]), kv[0]))
                    )
                )


if __name__ == "__main__":
    main()
