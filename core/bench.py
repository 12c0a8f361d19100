"""Benchmark: 4-player hands per second in self-play, in one process.

``python -m core.bench`` prints the figures. Random-legal self-play uses the engine's
legal-move generator and ``push`` (``legal_cards`` + ``push``, as python-chess's
``legal_moves`` + ``push``), the calls a search makes; the rule-based figure goes
through ``view`` and ``apply`` with full validation, as a table does.
"""

from __future__ import annotations

import argparse
import random
import time

from .actions import ChooseTrump
from .match import Match, Phase
from .players import ComputerPlayer
from .variant import Variant

__all__ = ["bench_players", "bench_random"]


def bench_random(seconds: float = 3.0, seed: int = 1) -> tuple[int, float]:
    """Random-legal self-play; returns (hands played, elapsed seconds)."""
    rng = random.Random(seed)
    rnd = rng.random

    def choice(options):  # random.choice, minus its bounds-checking overhead
        return options[int(rnd() * len(options))]

    play_phase = Phase.PLAY
    hands = 0
    match_seed = seed
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        m = Match(Variant.four(), seed=match_seed)
        match_seed += 1
        m.start()
        while m.phase is not Phase.OVER:
            m.apply(m.turn, ChooseTrump(choice((0, 1, 2, 3))))
            while m.phase is play_phase:  # a new hand starts in the trump phase
                options = m.legal_cards(m.turn)
                m.push(options[int(rnd() * len(options))])  # a uniformly random legal card
            hands += 1
    return hands, time.perf_counter() - start


def bench_players(player: ComputerPlayer, seconds: float = 3.0, seed: int = 1) -> tuple[int, float]:
    """Self-play where every seat is ``player``, deciding from its own view."""
    hands = 0
    match_seed = seed
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        m, _ = Match.new(Variant.four(), seed=match_seed)
        match_seed += 1
        while not m.is_over:
            hand_no = m.hand_no
            seat = m.turn
            m.apply(seat, player.act(m.view(seat)))
            if m.hand_no != hand_no or m.is_over:
                hands += 1
    return hands, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    hands, elapsed = bench_random(args.seconds)
    print(f"random-legal self-play: {hands / elapsed:,.0f} 4-player hands/s ({hands} hands)")
    try:
        from .players import make_player
    except ImportError:  # the rule-based player is optional while it is being built
        return
    for level in ("normal",):
        hands, elapsed = bench_players(make_player(level, seed=1), args.seconds)
        print(
            f"{level} (rule-based) self-play: {hands / elapsed:,.0f} 4-player hands/s ({hands} hands)"
        )


if __name__ == "__main__":
    main()
