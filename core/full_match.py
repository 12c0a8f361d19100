"""Whole matches between two computer players, to the variant's target.

``python -m core.arena --full-matches 1000 --bidding --a normal --b normal``

The arena's duplicate deals measure who plays a hand better; some questions are about
whole matches instead: how long a match to 500 lasts in the bidding variant, or how
often it stalls (scores that drift down with failed nils never reach the target).
Each match is ``Match(variant, seed)`` played out, A in seat 0 for even seeds and in
seat 1 for odd ones (4 players: seats 0 and 2, then 1 and 3), stopped after ``cap``
hands if nobody has won by then.
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
from dataclasses import dataclass

from .events import BidMade, BlindDeclared, HandEnded
from .match import Match
from .players import make_player
from .variant import Variant

__all__ = ["MatchRecord", "length_report", "play_match", "run_matches"]


@dataclass(slots=True)
class MatchRecord:
    seed: int
    #: Hands played (``cap`` for a match stopped unfinished).
    hands: int
    #: 0 = A won, 1 = B won, None: stopped after ``cap`` hands.
    winner: int | None
    scores: tuple[int, ...]
    #: Blind nils declared and failed, and nils (a bid of 0 after looking) declared
    #: and failed.
    blind_nils: int = 0
    blind_nils_failed: int = 0
    nils: int = 0
    nils_failed: int = 0


def _variant(players: int, bidding: bool) -> Variant:
    return Variant.bidding() if bidding else Variant(players=players)


def play_match(
    args: tuple[str, str, int, bool, int, float | None, int],
) -> MatchRecord:
    """One match: (A's level, B's level, players, bidding, seed, hard's budget, cap)."""
    a, b, players, bidding, seed, budget, cap = args
    v = _variant(players, bidding)
    a_first = seed % 2 == 0
    who = [(s % 2 == 0) == a_first for s in range(v.players)]  # True: A sits there
    seats = [
        make_player(a if mine else b, seed=seed * 10 + s, time_budget=budget)
        for s, mine in enumerate(who)
    ]
    m, _ = Match.new(v, seed)
    rec = MatchRecord(seed, 0, None, ())
    nil_seats: set[int] = set()
    blind_seats: set[int] = set()
    while not m.is_over and rec.hands < cap:
        seat = m.turn
        for e in m.apply(seat, seats[seat].act(m.view(seat))):
            if isinstance(e, BlindDeclared) and e.blind:
                rec.blind_nils += 1
                blind_seats.add(e.seat)
            elif isinstance(e, BidMade) and e.tricks == 0:
                rec.nils += 1
                nil_seats.add(e.seat)
            elif isinstance(e, HandEnded):
                rec.hands += 1
                for s, took in enumerate(e.tricks):
                    if took and s in nil_seats:
                        rec.nils_failed += 1
                    if took and s in blind_seats:
                        rec.blind_nils_failed += 1
                nil_seats.clear()
                blind_seats.clear()
    if m.is_over:
        side = m.winner
        rec.winner = 0 if who[side] else 1  # type: ignore[index]
    rec.scores = tuple(m.scores)
    return rec


def run_matches(
    a: str,
    b: str,
    matches: int,
    seed: int = 1000,
    players: int = 2,
    bidding: bool = True,
    jobs: int = 1,
    budget: float | None = None,
    cap: int = 300,
) -> list[MatchRecord]:
    tasks = [(a, b, players, bidding, seed + i, budget, cap) for i in range(matches)]
    if jobs <= 1:
        return [play_match(t) for t in tasks]
    with mp.get_context("spawn").Pool(jobs) as pool:
        return list(pool.imap(play_match, tasks, chunksize=8))


def length_report(records: list[MatchRecord], within: int = 60) -> str:
    n = len(records)
    lengths = sorted(r.hands for r in records)
    done = [r for r in records if r.winner is not None]
    short = sum(1 for r in done if r.hands <= within)
    q = lambda p: lengths[min(n - 1, int(p * n))]  # noqa: E731
    lines = [
        f"{n} matches: ended within {within} hands: {short}/{n} = {short / n:.1%}; "
        f"unfinished after the cap: {n - len(done)}",
        f"  hands per match: mean {statistics.fmean(lengths):.1f}, median {q(0.5)}, "
        f"p90 {q(0.9)}, p99 {q(0.99)}, max {lengths[-1]}",
        f"  matches won by A: {sum(1 for r in done if r.winner == 0)}, "
        f"by B: {sum(1 for r in done if r.winner == 1)}",
    ]
    bl = sum(r.blind_nils for r in records)
    if bl or any(r.nils for r in records):
        nils = sum(r.nils for r in records)
        lines.append(
            f"  nils: {nils} declared, {sum(r.nils_failed for r in records)} failed; "
            f"blind nils: {bl} declared, {sum(r.blind_nils_failed for r in records)} failed"
        )
    return "\n".join(lines)
