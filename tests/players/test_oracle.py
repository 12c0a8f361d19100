"""The arena's "oracle" yardstick: shown every hand, it plays double dummy."""

from __future__ import annotations

import random

from core.arena import run_arena
from core.cards import Suit, cards_in, mask_of
from core.match import Match, Phase
from core.players import ARENA_LEVELS, LEVELS, make_player
from core.variant import Variant


def test_oracle_is_an_arena_level_not_a_lobby_level() -> None:
    assert "oracle" in ARENA_LEVELS and "oracle" not in LEVELS


def _ending(rng: random.Random) -> Match:
    """Three cards each, no tricks won yet (so no side can reach 7 before the end)."""
    deck = rng.sample(range(52), 12)
    m = Match(Variant.four())
    m.phase = Phase.PLAY
    m.trump = Suit(rng.randrange(4))
    m.hakem = 0
    m.hands = [mask_of(deck[3 * s : 3 * s + 3]) for s in range(4)]
    m.leader = m.turn = rng.randrange(4)
    return m


def _card_values(m: Match, side: int) -> dict[int, int]:
    """Tricks ``side`` takes after each legal card, everyone then playing perfectly."""
    values = {}
    for c in m.legal_cards():
        child = m.copy()
        child.push(c)
        values[c] = _best_tricks(child, side)
    return values


def _best_tricks(m: Match, side: int) -> int:
    """Tricks ``side`` takes from here with everyone playing perfectly (brute force)."""
    if not any(m.hands):
        return m.tricks_won[side] + m.tricks_won[side + 2]
    values = _card_values(m, side).values()
    return max(values) if m.turn % 2 == side else min(values)


def test_oracle_plays_a_double_dummy_best_card_of_the_real_deal() -> None:
    rng = random.Random(5)
    oracle = make_player("oracle", seed=1)
    for _ in range(25):
        m = _ending(rng)
        seat = m.turn
        values = _card_values(m, seat % 2)
        oracle.see(m)  # type: ignore[attr-defined]
        card = oracle.act(m.view(seat)).card  # type: ignore[union-attr]
        assert card in cards_in(m.hands[seat])
        assert values[card] == max(values.values()), (values, card)


def test_seeing_the_cards_wins_more_than_the_rules_against_random() -> None:
    def won(level: str) -> int:
        r = run_arena(level, "random", players=4, deals=10, seed=31)
        return sum(rec.winner == 0 for rec in r.records)

    oracle, rules = won("oracle"), won("normal0")
    assert oracle >= 16 and oracle >= rules, (oracle, rules)  # of 20 hands, same deals
