"""What one exact search of a sampled ending costs hard with 2 and 3 players.

    .venv/bin/python -m benchmarks.exact_cost [--players 2] [--cards 7] [--deals 8]

Plays the first hand of each seeded deal with "normal" at every seat until every
hand holds at most ``--cards`` cards, then times hard's exact search of the ending
on three deals sampled from the seat to play's view (its distinct legal cards): the
cost of one sample of hard's exact ending, which decides how many fit in a budget.
Two searches are timed on the same deals: the one on engine copies
(:func:`core.players.exact.exact_values`, the baseline) and the one hard uses
(:func:`core.players.exact.exact_ending`: the bitboard solvers of
:mod:`core.players.endgame`, minimax with two players and max^n with three); the run
stops if they ever disagree.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from core.match import Match, Phase
from core.players import make_player
from core.players.exact import exact_ending, exact_values
from core.players.knowledge import Knowledge
from core.players.search import SearchMatch, distinct_cards, view_sample
from core.variant import Variant


def solve_times(players: int, cards: int, deals: int, seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    out: dict[str, list[float]] = {"engine copies": [], "hard's": []}
    for d in range(deals):
        m, _ = Match.new(Variant.three() if players == 3 else Variant.two(), seed + d)
        p = make_player("normal", seed=seed + d)
        while m.phase is not Phase.PLAY:
            m.apply(m.turn, p.act(m.view(m.turn)))
        while m.phase is Phase.PLAY and max(h.bit_count() for h in m.hands) > cards:
            m.apply(m.turn, p.act(m.view(m.turn)))
        if m.phase is not Phase.PLAY:
            continue
        view = m.view(m.turn)
        know = Knowledge(view)
        legal = distinct_cards([a.card for a in view.legal], know)  # type: ignore[union-attr]
        for _ in range(3):
            base = SearchMatch.from_view(view, view_sample(view, know, rng))
            t0 = time.perf_counter()
            old = exact_values(base, legal)
            t1 = time.perf_counter()
            new = exact_ending(base, legal)
            t2 = time.perf_counter()
            if old != new:
                raise SystemExit(f"the searches disagree on deal {seed + d}: {old} != {new}")
            out["engine copies"].append(t1 - t0)
            out["hard's"].append(t2 - t1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, choices=(2, 3), default=2)
    ap.add_argument("--cards", type=int, default=7)
    ap.add_argument("--deals", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    times = solve_times(args.players, args.cards, args.deals, args.seed)
    if not times["hard's"]:
        print("no position reached")
        return
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for name, ts in times.items():
        print(
            f"{args.players} players, at most {args.cards} cards a hand, {name}: "
            f"{len(ts)} exact solves, mean {1000 * sum(ts) / len(ts):.1f} ms, "
            f"max {1000 * max(ts):.1f} ms (load average {load})"
        )


if __name__ == "__main__":
    main()
