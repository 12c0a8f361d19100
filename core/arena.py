"""Arena: two computer players compared on duplicate deals.

``python -m core.arena --a hard --b normal --players 4 --deals 200 --seed 1000 --jobs 2``

Each seeded deal (the first hand of ``Match(variant, seed)``: the same first-ace
hakem, the same cards to the same seats) is played once per seating so card luck
cancels:

* 4 players: A at seats 0 and 2 against B at 1 and 3, then swapped (2 plays).
* 2 players: A at seat 0, then at seat 1 (2 plays).
* 3 players: each of the three rotations of (A, B, B) and of (B, A, A) (6 plays),
  so A and B each sit at every seat equally often and equal players win 50% of hands.

Reported for A (and B's mirror figures where they differ): the share of hands won
(Wilson 95% interval), the share of simulated matches won, points per hand, kot
rates for and against, and time per decision (mean, p95, max) per player.

Matches are *simulated from consecutive hands*: the hands' points are added up in
deal order (both seatings of a deal in turn) and a match ends when a side reaches the
target (7 by default; kot and hakem-kot count 2 and 3 points). The hakem of each
hand comes from its deal's first-ace draw rather than from the previous result.

Long runs are saved hand by hand (``--out``), pooled (``--merge``), and two runs of
variants of A on the same deals compared deal by deal (``--compare``); ``--a-set
NAME=VALUE`` changes one of A's settings (``HardPlayer.prior`` and the like) for such
a comparison.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .burner import Burner, default_burners
from .events import HandEnded, HandKind
from .match import Match
from .players import ARENA_LEVELS, ComputerPlayer, make_player
from .variant import Variant

__all__ = [
    "ArenaResult",
    "HandRecord",
    "load_records",
    "main",
    "oracle_share",
    "paired_difference",
    "parse_settings",
    "play_deal",
    "run_arena",
    "save_records",
    "seat_players",
    "seatings",
    "tuned",
    "wilson",
]


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


def seatings(players: int) -> list[tuple[int, ...]]:
    """Per play of a deal, which player (0 = A, 1 = B) sits at each seat."""
    if players == 4:
        return [(0, 1, 0, 1), (1, 0, 1, 0)]
    if players == 2:
        return [(0, 1), (1, 0)]
    base = [(0, 1, 1), (1, 0, 0)]
    return [tuple(b[(i - r) % 3] for i in range(3)) for b in base for r in range(3)]


@dataclass(slots=True)
class HandRecord:
    deal: int
    seating: tuple[int, ...]
    #: Points scored in the hand by A's seats and B's seats.
    points: tuple[int, int]
    #: Which player won the hand (0 = A, 1 = B, None: bidding tie).
    winner: int | None
    kot: bool
    times: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    #: Decisions over the player's time budget: (0 = A / 1 = B, seconds, what it
    #: decided, e.g. "trump" or "play 1" for the opening lead's trick, CPU seconds
    #: the process got meanwhile: far less than the wall time means the machine
    #: had no core for it).
    slow: list[tuple[int, float, str, float]] = field(default_factory=list)


def level_budget(level: str, budget: float | None) -> float | None:
    """The seconds per decision a level is given (None: it has no clock)."""
    if not level.startswith("hard"):
        return None
    return 1.0 if budget is None else budget


def _variant(players: int, bidding: bool) -> Variant:
    if bidding:
        return Variant.bidding()
    return Variant(players=players)


def tuned(player: ComputerPlayer, settings: tuple[tuple[str, str], ...]) -> ComputerPlayer:
    """Set the named attributes of a player (``--a-set prior=1.5``), converted to the
    type of the attribute's default. Only attributes the class defines are accepted."""
    for name, raw in settings:
        default = getattr(type(player), name, None)
        if name.startswith("_") or default is None or callable(default):
            raise ValueError(f"{type(player).__name__} has no setting {name!r}")
        if isinstance(default, bool):
            if raw not in ("0", "1", "true", "false"):
                raise ValueError(f"{name} takes true or false, not {raw!r}")
            value: object = raw in ("1", "true")
        else:
            value = type(default)(raw)
        setattr(player, name, value)
    return player


def parse_settings(items: list[str] | None) -> tuple[tuple[str, str], ...]:
    """``["prior=1.5", ...]`` as ``(("prior", "1.5"), ...)``."""
    out = []
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"expected NAME=VALUE, not {item!r}")
        out.append((name.strip(), value.strip()))
    return tuple(out)


def seat_players(
    a: str,
    b: str,
    seating: tuple[int, ...],
    seed: int,
    budget: float | None,
    a_set: tuple[tuple[str, str], ...] = (),
) -> list[ComputerPlayer]:
    """One seating's players (``seating[s]``: 0 for A, 1 for B), seat s seeded
    ``seed + s``, A's changed settings applied: how the arena seats a deal, for
    anything that replays its deals."""
    levels = (a, b)
    seats = []
    for s, who in enumerate(seating):
        player = make_player(levels[who], seed=seed + s, time_budget=budget)
        seats.append(tuned(player, a_set) if who == 0 else player)
    return seats


def play_deal(
    args: tuple[str, str, int, bool, int, float | None, tuple[tuple[str, str], ...]],
) -> list[HandRecord]:
    """Play the first hand of ``Match(variant, seed)`` once per seating; the last
    item is A's changed settings (see :func:`run_arena`)."""
    a, b, players, bidding, seed, budget, a_set = args
    variant = _variant(players, bidding)
    records = []
    for k, seating in enumerate(seatings(players)):
        seats = seat_players(a, b, seating, seed * 100 + k * 10, budget, a_set)
        m, _ = Match.new(variant, seed)
        times: tuple[list[float], list[float]] = ([], [])
        slow: list[tuple[int, float, str, float]] = []
        limits = (level_budget(a, budget), level_budget(b, budget))
        ended: HandEnded | None = None
        while ended is None:
            seat = m.turn
            view = m.view(seat)
            player = seats[seat]
            see = getattr(player, "see", None)
            if see is not None:
                see(m)  # a yardstick shown hands: the oracle, hard-sighted
            t0 = time.perf_counter()
            c0 = time.process_time()
            action = player.act(view)
            dt = time.perf_counter() - t0
            who = seating[seat]
            times[who].append(dt)
            limit = limits[who]
            if limit is not None and dt > limit:
                what = str(m.phase)
                if what == "play":
                    what += f" {len(m.tricks) + 1}"
                slow.append((who, dt, what, time.process_time() - c0))
            for e in m.apply(seat, action):
                if isinstance(e, HandEnded):
                    ended = e
        pts = [0, 0]
        for side, p in enumerate(ended.points):
            # Sides are seats (2, 3 players) or seat parity (4 players).
            seat = side
            pts[seating[seat]] += p
        if bidding:
            winner = None if pts[0] == pts[1] else (0 if pts[0] > pts[1] else 1)
            kot = False
        else:
            winner = seating[ended.winner]  # type: ignore[index]
            kot = ended.kind is not HandKind.NORMAL
        records.append(HandRecord(seed, seating, (pts[0], pts[1]), winner, kot, times, slow))
    return records


@dataclass
class ArenaResult:
    a: str
    b: str
    players: int
    bidding: bool
    deals: int
    records: list[HandRecord]
    seconds: float
    #: The hard player's budget as given (None: its default).
    budget: float | None = None
    #: Burner processes that ran beside the run (0: none).
    burners: int = 0
    #: The machine's 1-minute load average when the run started and when it ended.
    load: tuple[float, float] | None = None

    @property
    def hands(self) -> int:
        return len(self.records)

    def hand_wins(self, who: int = 0) -> float:
        return sum(
            1.0 if r.winner == who else 0.5 if r.winner is None else 0.0 for r in self.records
        )

    def matches(self, target: int) -> tuple[int, int]:
        """Simulated matches from consecutive hands: (won by A, won by B)."""
        won = [0, 0]
        score = [0, 0]
        for r in self.records:
            score[0] += r.points[0]
            score[1] += r.points[1]
            if max(score) >= target and score[0] != score[1]:
                won[0 if score[0] > score[1] else 1] += 1
                score = [0, 0]
        return won[0], won[1]

    def kots(self, who: int) -> int:
        return sum(1 for r in self.records if r.kot and r.winner == who)

    def by_role(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """4 players: A's hands (won, played) when its side held the hakem, then
        when it defended. The hakem is the deal's first-ace draw."""
        variant = _variant(self.players, self.bidding)
        hakem: dict[int, int] = {}
        won = [0, 0]
        played = [0, 0]
        for r in self.records:
            if r.deal not in hakem:
                hakem[r.deal] = Match.new(variant, r.deal)[0].hakem  # type: ignore[assignment]
            role = 0 if r.seating[hakem[r.deal]] == 0 else 1
            played[role] += 1
            won[role] += r.winner == 0
        return (won[0], played[0]), (won[1], played[1])

    def winners_by_deal(self) -> dict[int, list[int | None]]:
        """Each deal's winners, one per seating played."""
        per: dict[int, list[int | None]] = {}
        for r in self.records:
            per.setdefault(r.deal, []).append(r.winner)
        return per

    def deal_outcomes(self) -> tuple[int, int, int]:
        """Deals whose every seating A won, deals split, deals B won every time."""
        per = self.winners_by_deal()
        both = sum(1 for w in per.values() if all(x == 0 for x in w))
        neither = sum(1 for w in per.values() if all(x == 1 for x in w))
        return both, len(per) - both - neither, neither

    def times(self, who: int) -> list[float]:
        out: list[float] = []
        for r in self.records:
            out.extend(r.times[who])
        return out

    def report(self) -> str:
        n = self.hands
        target = 500 if self.bidding else 7
        lines = []
        game = "bidding (seed 004)" if self.bidding else f"{self.players}-player Hokm"
        lines.append(
            f"{game}: A={self.a} vs B={self.b}, {self.deals} deals x "
            f"{len(seatings(self.players))} seatings = {n} hands, {self.seconds:.0f} s"
        )
        wa = self.hand_wins(0)
        lo, hi = wilson(wa, n)
        lines.append(f"  hands won by A: {wa:.0f}/{n} = {wa / n:.1%}  (95% CI {lo:.1%} - {hi:.1%})")
        ma, mb = self.matches(target)
        if ma + mb:
            mlo, mhi = wilson(ma, ma + mb)
            lines.append(
                f"  simulated matches to {target} won by A: {ma}/{ma + mb} = {ma / (ma + mb):.1%}"
                f"  (95% CI {mlo:.1%} - {mhi:.1%})"
            )
        pa = sum(r.points[0] for r in self.records) / n
        pb = sum(r.points[1] for r in self.records) / n
        lines.append(f"  points per hand: A {pa:.3f}, B {pb:.3f}")
        if not self.bidding:
            lines.append(
                f"  kot / hakem-kot hands: won by A {self.kots(0) / n:.1%}, won by B {self.kots(1) / n:.1%}"
            )
        if self.players == 4 and not self.bidding:
            (hw, hn), (dw, dn) = self.by_role()
            if hn and dn:
                lines.append(
                    f"  hands won by A as the hakem's side: {hw}/{hn} = {hw / hn:.1%}; "
                    f"as defenders: {dw}/{dn} = {dw / dn:.1%}"
                )
            both, split, neither = self.deal_outcomes()
            lines.append(
                f"  deals (both seatings) won twice by A: {both}, split: {split}, "
                f"won twice by B: {neither}"
            )
        for who, name in ((0, self.a), (1, self.b)):
            ts = sorted(self.times(who))
            if not ts:
                continue
            p95 = quantile(ts, 0.95)
            lines.append(
                f"  time per decision, {'AB'[who]}={name}: mean {statistics.fmean(ts) * 1000:.2f} ms, "
                f"p95 {p95 * 1000:.2f} ms, max {ts[-1] * 1000:.1f} ms ({len(ts)} decisions)"
            )
            limit = level_budget(name, self.budget)
            if limit:
                lines.append("    " + self.clock_report(who, limit))
        if self.burners or self.load:
            extra = []
            if self.burners:
                extra.append(f"{self.burners} CPU burner process(es) ran beside it")
            if self.load:
                extra.append(
                    f"load average {self.load[0]:.2f} at the start, {self.load[1]:.2f} at the end"
                )
            lines.append("  " + "; ".join(extra))
        return "\n".join(lines)

    def clock_report(self, who: int, limit: float) -> str:
        """Time per decision as multiples of the budget, and what the slowest were."""
        ts = sorted(self.times(who))
        over12 = sum(1 for t in ts if t > 1.2 * limit)
        over2 = sum(1 for t in ts if t > 2 * limit)
        qs = ", ".join(
            f"{name} {quantile(ts, q) / limit:.2f}x"
            for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
        )
        starved = sum(
            1
            for r in self.records
            for w, t, _, cpu in r.slow
            if w == who and t > 2 * limit and 0 <= cpu < limit
        )
        text = (
            f"relative to the {limit:g} s budget: {qs}, max {ts[-1] / limit:.2f}x; "
            f"over 1.2x: {over12}, over 2x: {over2} of {len(ts)}"
        )
        if starved:
            text += f" ({starved} of them with less CPU than the budget: no core for the process)"
        slow = sorted(
            (
                (t, what, cpu)
                for r in self.records
                for w, t, what, cpu in r.slow
                if w == who and t > 1.2 * limit
            ),
            reverse=True,
        )
        if slow:
            text += "; slowest (wall, CPU the process got): " + ", ".join(
                f"{what} {t / limit:.2f}x" + (f" (CPU {cpu / limit:.2f}x)" if cpu >= 0 else "")
                for t, what, cpu in slow[:5]
            )
        return text


def quantile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile of an ascending list (nearest rank)."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, math.ceil(q * n) - 1))]


def a_label(a: str, a_set: tuple[tuple[str, str], ...]) -> str:
    """``hard`` or, with changed settings, ``hard[prior=1.5]``: runs of a tuned
    player are never pooled with the default one."""
    return a + ("[" + ",".join(f"{k}={v}" for k, v in a_set) + "]" if a_set else "")


def run_arena(
    a: str,
    b: str,
    players: int = 4,
    deals: int = 100,
    seed: int = 1000,
    jobs: int = 1,
    budget: float | None = None,
    bidding: bool = False,
    progress: bool = False,
    a_set: tuple[tuple[str, str], ...] = (),
    on_deal: Callable[[list[HandRecord]], None] | None = None,
    burners: int = 0,
) -> ArenaResult:
    """Play ``deals`` duplicate deals from ``seed`` on; ``a_set`` changes settings of
    player A (class attributes such as ``HardPlayer.prior``) to compare variants of
    one level. A tuned A is reported and saved as ``hard[prior=1.5]``. ``on_deal``
    receives each deal's hands as soon as they are played (in deal order), so a
    long run that is cut off keeps what it played. ``burners`` CPU-burning
    processes (:mod:`core.burner`) run beside the whole run."""
    tuned(make_player(a), a_set)  # refuse unknown settings before any play
    tasks = [(a, b, players, bidding, seed + i, budget, a_set) for i in range(deals)]
    load_start = os.getloadavg()[0]
    with Burner(burners):
        start = time.perf_counter()
        records = _play_all(tasks, jobs, progress, on_deal)
        seconds = time.perf_counter() - start
    return ArenaResult(
        a_label(a, a_set),
        b,
        players,
        bidding,
        deals,
        records,
        seconds,
        budget,
        burners,
        (load_start, os.getloadavg()[0]),
    )


def _play_all(
    tasks: list,
    jobs: int,
    progress: bool,
    on_deal: Callable[[list[HandRecord]], None] | None,
) -> list[HandRecord]:
    deals = len(tasks)
    records: list[HandRecord] = []
    if jobs <= 1:
        for i, t in enumerate(tasks):
            recs = play_deal(t)
            records.extend(recs)
            if on_deal:
                on_deal(recs)
            if progress and (i + 1) % 50 == 0:
                print(f"  {i + 1}/{deals} deals", file=sys.stderr, flush=True)
    else:
        with mp.get_context("spawn").Pool(jobs) as pool:
            for i, recs in enumerate(pool.imap(play_deal, tasks, chunksize=1)):
                records.extend(recs)
                if on_deal:
                    on_deal(recs)
                if progress and (i + 1) % 50 == 0:
                    print(f"  {i + 1}/{deals} deals", file=sys.stderr, flush=True)
    return records


def paired_difference(x: ArenaResult, y: ArenaResult) -> tuple[int, float, float, int]:
    """Compare two runs of A against the same B on the deals both played: (deals,
    mean difference in A's share of hands won, its standard error, deals whose
    result differs). Each deal's difference is taken over all its seatings, so card
    luck cancels within the deal as well as between the runs."""

    def per_deal(r: ArenaResult) -> dict[int, list[float]]:
        return {
            deal: [1.0 if w == 0 else 0.5 if w is None else 0.0 for w in winners]
            for deal, winners in r.winners_by_deal().items()
        }

    if (x.b, x.players, x.bidding) != (y.b, y.players, y.bidding):
        raise ValueError("the two runs are not of the same game against the same B")
    px, py = per_deal(x), per_deal(y)
    full = len(seatings(x.players))
    deals = sorted(d for d in px.keys() & py.keys() if len(px[d]) == len(py[d]) == full)
    if len(deals) < 2:
        raise ValueError("fewer than two deals played in both runs")
    diffs = [statistics.fmean(px[d]) - statistics.fmean(py[d]) for d in deals]
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(len(diffs))
    changed = sum(1 for d in diffs if d != 0)
    return len(deals), mean, se, changed


def oracle_share(
    x: ArenaResult, oracle: ArenaResult, resamples: int = 2000
) -> tuple[int, float, float, float, tuple[float, float]]:
    """The share of the oracle's edge that A takes against the same B, on the deals
    both runs played in full: (deals, A's share of hands won, the oracle's, the
    share (A − 50%) / (oracle − 50%), a 95% interval of the share from resampling
    the deals, seeded so that it is reproducible). Taking both on the same deals
    removes the card luck of the deals from the share."""
    if (x.b, x.players, x.bidding) != (oracle.b, oracle.players, oracle.bidding):
        raise ValueError("the two runs are not of the same game against the same B")
    px, po = x.winners_by_deal(), oracle.winners_by_deal()
    full = len(seatings(x.players))

    def won(ws: list[int | None]) -> float:
        return sum(1.0 if w == 0 else 0.5 if w is None else 0.0 for w in ws)

    deals = sorted(d for d in px.keys() & po.keys() if len(px[d]) == len(po[d]) == full)
    if len(deals) < 2:
        raise ValueError("fewer than two deals played in both runs")
    a = [won(px[d]) for d in deals]
    o = [won(po[d]) for d in deals]
    hands = full * len(deals)
    ra, ro = sum(a) / hands, sum(o) / hands
    share = (ra - 0.5) / (ro - 0.5) if ro != 0.5 else math.nan
    rng = random.Random(0)
    shares = []
    for _ in range(resamples):
        pick = [rng.randrange(len(deals)) for _ in deals]
        sa = sum(a[i] for i in pick) / hands
        so = sum(o[i] for i in pick) / hands
        if so > 0.5:
            shares.append((sa - 0.5) / (so - 0.5))
    shares.sort()
    lo = shares[int(0.025 * len(shares))] if shares else math.nan
    hi = shares[int(0.975 * len(shares)) - 1] if shares else math.nan
    return len(deals), ra, ro, share, (lo, hi)


class RecordWriter:
    """Appends a run to a JSON-lines file: one line per hand, written and flushed
    as each deal ends, then one line for the run.

    Long measurements are split into runs on disjoint seeds (several sittings, or
    several sessions) and pooled with ``--merge``; a run cut off midway keeps the
    deals it finished (their lines carry everything ``--merge`` needs).
    """

    def __init__(
        self,
        path: str,
        a: str,
        b: str,
        players: int,
        bidding: bool,
        budget: float | None,
        burners: int = 0,
    ) -> None:
        self.path = path
        self.setting = {"a": a, "b": b, "players": players, "bidding": bidding, "budget": budget}
        if burners:  # runs under load are never pooled with quiet ones
            self.setting["burners"] = burners

    def hands(self, records: list[HandRecord]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            for r in records:
                line = {
                    **self.setting,
                    "deal": r.deal,
                    "seating": list(r.seating),
                    "points": list(r.points),
                    "winner": r.winner,
                    "kot": r.kot,
                    "times": [
                        [round(t, 6) for t in r.times[0]],
                        [round(t, 6) for t in r.times[1]],
                    ],
                }
                if r.slow:
                    line["slow"] = [
                        [w, round(t, 6), what, round(cpu, 6)] for w, t, what, cpu in r.slow
                    ]
                f.write(json.dumps(line) + "\n")

    def run(self, seed: int, deals: int, seconds: float) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            line = {**self.setting, "run": {"seed": seed, "deals": deals, "seconds": seconds}}
            f.write(json.dumps(line) + "\n")


def save_records(path: str, result: ArenaResult, seed: int, budget: float | None) -> None:
    """Append a finished run to a JSON-lines file (see :class:`RecordWriter`)."""
    w = RecordWriter(path, result.a, result.b, result.players, result.bidding, budget)
    w.hands(result.records)
    w.run(seed, result.deals, result.seconds)


def load_records(paths: list[str]) -> ArenaResult:
    """Pool saved runs of one setting (same players, variant and budget) into one
    result. A hand saved twice (same deal and seating) is a mistake and refused."""
    records: list[HandRecord] = []
    seen: set[tuple[int, tuple[int, ...]]] = set()
    setting: dict | None = None
    deals: set[int] = set()
    seconds = 0.0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for raw in f:
                d = json.loads(raw)
                here = {k: d[k] for k in ("a", "b", "players", "bidding", "budget")}
                here["burners"] = d.get("burners", 0)
                if setting is None:
                    setting = here
                elif here != setting:
                    raise ValueError(f"{path}: setting {here} differs from {setting}")
                if "run" in d:
                    seconds += d["run"]["seconds"]
                    continue
                key = (d["deal"], tuple(d["seating"]))
                if key in seen:
                    raise ValueError(f"{path}: deal {key[0]} seating {key[1]} saved twice")
                seen.add(key)
                deals.add(d["deal"])
                records.append(
                    HandRecord(
                        d["deal"],
                        key[1],
                        (d["points"][0], d["points"][1]),
                        d["winner"],
                        d["kot"],
                        (d["times"][0], d["times"][1]),
                        # Runs saved before the CPU time was kept: -1.
                        [
                            (x[0], x[1], x[2], x[3] if len(x) > 3 else -1.0)
                            for x in d.get("slow", ())
                        ],
                    )
                )
    if setting is None:
        raise ValueError("no records")
    records.sort(key=lambda r: r.deal)  # matches are simulated in deal order
    return ArenaResult(
        setting["a"],
        setting["b"],
        setting["players"],
        setting["bidding"],
        len(deals),
        records,
        seconds,
        setting["budget"],
        setting.get("burners", 0),
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--a", default="hard", choices=ARENA_LEVELS)
    p.add_argument("--b", default="normal", choices=ARENA_LEVELS)
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    p.add_argument(
        "--bidding", action="store_true", help="the seed-004 bidding variant (2 players)"
    )
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument(
        "--budget", type=float, default=None, help="hard player's seconds per move (default 1.0)"
    )
    p.add_argument(
        "--burner",
        nargs="?",
        type=int,
        const=-1,
        default=0,
        metavar="N",
        help="run N CPU-burning processes beside the run (default: enough to keep "
        "every core busy next to --jobs)",
    )
    p.add_argument(
        "--full-matches",
        type=int,
        metavar="N",
        help="play N whole matches to the target instead of duplicate deals and "
        "report their lengths (core.full_match)",
    )
    p.add_argument(
        "--cap", type=int, default=300, help="--full-matches: stop a match after this many hands"
    )
    p.add_argument(
        "--within",
        type=int,
        default=60,
        help="--full-matches: report the share ended within this many hands",
    )
    p.add_argument("--progress", action="store_true")
    p.add_argument("--out", help="append every hand to this JSON-lines file")
    p.add_argument(
        "--merge", nargs="+", metavar="FILE", help="report the pooled runs saved with --out"
    )
    p.add_argument(
        "--a-set",
        action="append",
        metavar="NAME=VALUE",
        help="change a setting of player A, e.g. --a-set prior=1.5 (repeatable)",
    )
    p.add_argument(
        "--share",
        nargs=2,
        metavar=("FILE_A", "FILE_ORACLE"),
        help="A's share of the oracle's edge against the same B, on the deals both saved runs played",
    )
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("FILE_X", "FILE_Y"),
        help="paired difference of two saved runs on the deals both played",
    )
    args = p.parse_args(argv)
    if args.merge:
        print(load_records(args.merge).report())
        return
    if args.share:
        x, o = (load_records([f]) for f in args.share)
        n, ra, ro, share, (lo, hi) = oracle_share(x, o)
        print(
            f"{x.a} against {x.b}, {n} deals played by both: {ra:.1%} of hands, the "
            f"{o.a} {ro:.1%}: share of the oracle's edge {share:.0%} (95% CI {lo:.0%} - {hi:.0%}, "
            "deals resampled)"
        )
        return
    if args.compare:
        x, y = (load_records([f]) for f in args.compare)
        n, mean, se, changed = paired_difference(x, y)
        common = {r.deal for r in x.records} & {r.deal for r in y.records}

        def share(r: ArenaResult) -> float:
            won = [
                1.0 if h.winner == 0 else 0.5 if h.winner is None else 0.0
                for h in r.records
                if h.deal in common
            ]
            return statistics.fmean(won)

        print(
            f"{x.a} minus {y.a} (against {x.b}), {n} deals played in both: "
            f"{mean * 100:+.1f} points of hands won (SE {se * 100:.1f}); "
            f"on those deals {share(x):.1%} vs {share(y):.1%}; "
            f"{changed} deals with a different result"
        )
        return
    players = 2 if args.bidding else args.players
    if args.full_matches:
        from .full_match import length_report, run_matches

        load = os.getloadavg()[0]
        start = time.perf_counter()
        recs = run_matches(
            args.a,
            args.b,
            args.full_matches,
            args.seed,
            players,
            args.bidding,
            args.jobs,
            args.budget,
            args.cap,
        )
        game = "bidding (seed 004)" if args.bidding else f"{players}-player Hokm"
        print(
            f"{game}: A={args.a} vs B={args.b}, whole matches from seed {args.seed}, "
            f"{time.perf_counter() - start:.0f} s, load average {load:.2f} -> {os.getloadavg()[0]:.2f}"
        )
        print(length_report(recs, args.within))
        return
    try:
        settings = parse_settings(args.a_set)
        tuned(make_player(args.a), settings)
    except ValueError as e:
        p.error(str(e))
    burners = default_burners(args.jobs) if args.burner < 0 else args.burner
    writer = None
    if args.out:
        writer = RecordWriter(
            args.out, a_label(args.a, settings), args.b, players, args.bidding, args.budget, burners
        )
    result = run_arena(
        args.a,
        args.b,
        players,
        args.deals,
        args.seed,
        args.jobs,
        args.budget,
        args.bidding,
        args.progress,
        settings,
        on_deal=writer.hands if writer else None,
        burners=burners,
    )
    if writer:
        writer.run(args.seed, result.deals, result.seconds)
    print(result.report())


if __name__ == "__main__":
    main()
