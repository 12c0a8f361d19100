"""What the 4-player hard player's trump search buys: how often it reaches
``min_trump_samples`` (below that the rule names the trump anyway), how often its
suit differs from the rule's, and the CPU it spends.

    .venv/bin/python -m benchmarks.trump_search [--deals 60] [--seed 880000] [--budgets 0.125 0.25]

For each seeded deal the hakem's trump choice is asked of a hard player with the
search on (``search_trump_4p``), at each budget.
"""

from __future__ import annotations

import argparse
import os
import time

from core.actions import ChooseTrump
from core.cards import mask_of
from core.match import Match, Phase
from core.players import make_player, trump_search
from core.players.hard import HardPlayer
from core.players.rules import choose_trump_rule
from core.variant import Variant


def hakem_views(deals: int, seed: int) -> list:
    views = []
    for d in range(deals):
        m, _ = Match.new(Variant(players=4), seed + d)
        while m.phase is not Phase.PLAY:
            view = m.view(m.turn)
            if any(isinstance(a, ChooseTrump) for a in view.legal):
                views.append(view)
                break
            m.apply(m.turn, make_player("normal", seed=d).act(view))
    return views


def _counting() -> list[int]:
    """A list that grows by one for each deal-and-suit the trump search scores (its
    scoring wrapped once, for the whole run)."""
    asked: list[int] = []
    value = trump_search._trump_value

    def counted(*args, **kwargs):
        asked.append(1)
        return value(*args, **kwargs)

    trump_search._trump_value = counted
    return asked


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=60)
    p.add_argument("--seed", type=int, default=880000)
    p.add_argument("--budgets", type=float, nargs="+", default=[0.125, 0.25])
    opts = p.parse_args()
    views = hakem_views(opts.deals, opts.seed)
    asked = _counting()
    for budget in opts.budgets:
        reached = differs = 0
        cpu = []
        load = os.getloadavg()[0]
        for i, view in enumerate(views):
            player = make_player("hard", seed=i, time_budget=budget)
            assert isinstance(player, HardPlayer)
            player.search_trump_4p = True
            asked.clear()
            c0 = time.process_time()
            action = player.act(view)
            cpu.append(time.process_time() - c0)
            samples = len(asked) // 4
            reached += samples >= player.min_trump_samples
            differs += action.suit != choose_trump_rule(mask_of(view.hand))  # type: ignore[union-attr]
        print(
            f"budget {budget} s: {len(views)} trump choices, {reached} reached"
            f" {HardPlayer.min_trump_samples} sampled deals, {differs} differ from the rule;"
            f" CPU {1000 * sum(cpu) / len(cpu):.1f} ms a choice (load {load:.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
