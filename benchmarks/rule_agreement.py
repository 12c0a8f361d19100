"""How often a 4-player level plays the rules' card (``rules.rule_card``).

    python -m benchmarks.rule_agreement --levels normal yardstick hard --deals 50 --seed 962000

Hard's 4-player search adds rule-based playouts to double dummy (``playout_weight``)
and weighs sampled deals by how well the rules explain the others' plays: both help
as much as the opponents play like the rules. Each level here plays whole first
hands of seeded deals against itself; for every card it played with a real choice
(two or more distinct legal cards), the rules' card is computed from its own view
(its real hand), and the share that agree is printed by trick, with the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from core import Match, PlayCard, Variant
from core.players import make_player
from core.players.knowledge import Knowledge
from core.players.rules import rule_card, state_from_view
from core.players.search import distinct_cards


def agreement(level: str, deals: int, seed: int, budget: float) -> tuple[Counter, Counter]:
    agree: Counter = Counter()
    total: Counter = Counter()
    for d in range(deals):
        m, _ = Match.new(Variant(4), seed + d)
        players = [
            make_player(level, seed=(seed + d) * 10 + s, time_budget=budget) for s in range(4)
        ]
        hand = None
        while hand is None or m.hand_no == hand:
            view = m.view(m.turn)
            action = players[m.turn].act(view)
            if isinstance(action, PlayCard):
                hand = m.hand_no
                know = Knowledge(view)
                legal = [a.card for a in view.legal]  # type: ignore[union-attr]
                if len(distinct_cards(legal, know)) > 1:
                    rule = rule_card(state_from_view(view, know))
                    # The same card, or one of the same run (nothing unseen between).
                    same = len(distinct_cards([rule, action.card], know)) == 1
                    t = min(len(view.tricks) + 1, 8)
                    total[t] += 1
                    agree[t] += same
            m.apply(m.turn, action)
    return agree, total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", nargs="+", default=["normal", "yardstick"])
    p.add_argument("--deals", type=int, default=50)
    p.add_argument("--seed", type=int, default=962000)
    p.add_argument("--budget", type=float, default=0.25)
    opts = p.parse_args()
    print(f"4 players, deals {opts.seed}-{opts.seed + opts.deals - 1}, first hand, self-play")
    for level in opts.levels:
        agree, total = agreement(level, opts.deals, opts.seed, opts.budget)
        n = sum(total.values())
        by_trick = " ".join(
            f"{t if t < 8 else '8+'}:{100 * agree[t] / total[t]:.0f}%"
            for t in range(1, 9)
            if total[t]
        )
        print(
            f"  {level:>10}: {100 * sum(agree.values()) / n:.1f}% of {n} plays with a choice"
            f" agree with the rules; by trick {by_trick}; load {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
