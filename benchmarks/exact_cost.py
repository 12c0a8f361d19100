"""What one exact search of a sampled ending costs hard with 2 and 3 players.

    .venv/bin/python -m benchmarks.exact_cost [--players 2] [--cards 7] [--deals 8]

Plays the first hand of each seeded deal with "normal" at every seat until every
hand holds at most ``--cards`` cards, then times :func:`core.players.hard.exact_values`
on three deals sampled from the seat to play's view (its distinct legal cards): the
cost of one sample of hard's exact ending, which decides how many fit in a budget.
"""

from __future__ import annotations

import argparse
import random
import time

from core.match import Match, Phase
from core.players import make_player
from core.players.hard import exact_values
from core.players.knowledge import Knowledge
from core.players.search import SearchMatch, distinct_cards, view_sample
from core.variant import Variant


def solve_times(players: int, cards: int, deals: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    out: list[float] = []
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
            exact_values(base, legal)
            out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, choices=(2, 3), default=2)
    ap.add_argument("--cards", type=int, default=7)
    ap.add_argument("--deals", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    ts = solve_times(args.players, args.cards, args.deals, args.seed)
    if not ts:
        print("no position reached")
        return
    print(
        f"{args.players} players, at most {args.cards} cards a hand: {len(ts)} exact solves, "
        f"mean {1000 * sum(ts) / len(ts):.1f} ms, max {1000 * max(ts):.1f} ms"
    )


if __name__ == "__main__":
    main()
