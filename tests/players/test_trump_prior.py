"""The hakem's trump choice as evidence about its hand (:mod:`core.players.trump_prior`)."""

from __future__ import annotations

import random

from core.cards import SUIT_MASKS
from core.match import Match, Phase
from core.players import make_player
from core.players.inference import Plays
from core.players.knowledge import Knowledge
from core.players.rules import rule_card
from core.players.search import view_sample
from core.players.trump_prior import CHOICE, FLOOR, choice_weight, estimate
from core.variant import Variant

from .helpers import played


def test_the_table_is_what_random_deals_give() -> None:
    """A fresh estimate on other random deals agrees with the shipped table in every
    cell it fills often (so the table was learnt, not written)."""
    named, held = estimate(120_000, random.Random(99))
    checked = 0
    for k, row in enumerate(held):
        for top, n in enumerate(row):
            if n >= 3000:
                assert abs(named[k][top] / n - CHOICE[k][top]) < 0.025, (k, top)
                checked += 1
    assert checked >= 12


def test_longer_and_higher_trump_is_likelier_and_the_mean_weight_is_one() -> None:
    five_low = 0b11111  # the 2 to the 6 of the first suit
    ace_king = 0b11 << 11
    assert choice_weight(five_low, 0) > 5 * choice_weight(0b11, 0)
    assert choice_weight(0b11 | ace_king, 0) > choice_weight(0b1111, 0)
    assert choice_weight(0, 0) == FLOOR * 4  # never named by the rules, not ruled out
    # Over random hands the weight is P(choice | hand) / P(choice): its mean is one.
    rng = random.Random(5)
    weights = []
    for _ in range(20_000):
        hand = sum(1 << c for c in rng.sample(range(52), 13))
        weights.append(choice_weight(hand, rng.randrange(4)))
    assert abs(sum(weights) / len(weights) - 1.0) < 0.05


def _after_lead(seed: int) -> Match:
    """A 4-player hand just after the hakem's first lead."""
    m = played(Variant.four(), seed, 1, make_player("normal0", seed=seed))
    assert m.phase is Phase.PLAY and m.turn != m.hakem
    return m


def test_deals_are_weighed_by_the_hakems_trumps_as_dealt() -> None:
    m = _after_lead(11)
    me = m.turn
    view = m.view(me)
    hakem, trump = view.hakem, int(view.trump)
    led = view.trick[0][1]
    on = Plays(view, (0.5,) * 4, rule_card, trump_prior=1.0)
    off = Plays(view, (0.5,) * 4, rule_card)
    assert on.weighs_trump and not off.weighs_trump
    rng = random.Random(3)
    know = Knowledge(view)
    seen = set()
    for _ in range(200):
        hands = view_sample(view, know, rng, prefer_trump=False)
        dealt = hands[hakem] | 1 << led
        ratio = on.likelihood(hands) / off.likelihood(hands)
        assert ratio == choice_weight(dealt, trump)
        seen.add((dealt & SUIT_MASKS[trump]).bit_count())
        # Only a fresh deal is judged for it: a weight kept from before holds it.
        assert on.likelihood(hands, start=1) == off.likelihood(hands, start=1)
    assert len(seen) >= 4


def test_the_hakem_reads_nothing_from_its_own_choice() -> None:
    m = played(Variant.four(), 11, 0, make_player("normal0", seed=11))
    view = m.view(m.hakem)
    assert not Plays(view, (0.5,) * 4, rule_card, trump_prior=1.0).weighs_trump


def test_without_the_prior_the_sampler_puts_one_trump_in_the_hakems_hand() -> None:
    m = next(m for m in map(_after_lead, range(12, 40)) if m.trick[0][1] // 13 != int(m.trump))
    view = m.view(m.turn)
    know = Knowledge(view)
    trump = SUIT_MASKS[int(view.trump)]
    rng = random.Random(4)
    bare = [view_sample(view, know, rng, prefer_trump=False) for _ in range(400)]
    kept = [view_sample(view, know, rng) for _ in range(400)]
    hakem = view.hakem
    assert all(h[hakem] & trump for h in kept)
    assert not all(h[hakem] & trump for h in bare)
