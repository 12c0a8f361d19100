"""The speed yardstick plays the same hands as the engine, and the engine's one-pass
trick winner agrees with the set-based rule."""

from __future__ import annotations

import random

from core.bench import bitmask_match, engine_match, same_hands
from core.bench_floor import floor_match
from core.cards import mask_of
from core.trick import winning_card, winning_index, winning_play


def test_bitmask_loop_plays_the_engines_hands() -> None:
    assert same_hands(matches=20, seed=500)
    a: list[tuple[int, ...]] = []
    b: list[tuple[int, ...]] = []
    assert engine_match(7, a) == bitmask_match(7, b) == len(a)
    assert a == b and all(max(t[0] + t[2], t[1] + t[3]) == 7 for t in a)


def test_floor_table_plays_the_same_hands() -> None:
    assert same_hands(matches=20, seed=900, engine=floor_match)


def test_one_pass_winners_agree_with_winning_card() -> None:
    rng = random.Random(1)
    for _ in range(3000):
        cards = rng.sample(range(52), rng.choice((2, 3, 4)))
        trump = rng.choice((0, 1, 2, 3, None))
        plays = [(seat, c) for seat, c in enumerate(cards)]
        expected = winning_card(mask_of(cards), cards[0] // 13, trump)
        assert winning_play(plays, trump)[1] == expected
        assert cards[winning_index(cards, trump)] == expected
