"""What the hakem's trump says about its hand (4-player classic play).

The hakem names trump from its first five cards, mostly its longest suit there,
so a hand long or high in the named suit is far more likely to have named it: with
two trumps and neither the ace nor the king of them the rules name that suit from
one deal in twenty, with five from two in five. Sampling the hidden cards only
by the voids (one trump put in the hakem's hand first) ignores this. The
likelihood of the choice given the hakem's whole hand as dealt is learnt from
random deals (:func:`estimate`, with the rules' chooser, which the yardstick's
agrees with to a few hundredths) and kept in :data:`CHOICE`; a sampled deal is
weighed by it over the chance of any suit, a quarter (:func:`choice_weight`).
"""

from __future__ import annotations

import random

from ..cards import CardSet
from .rules import choose_trump_rule

__all__ = ["CHOICE", "choice_weight", "estimate"]

#: The longest suit counted; longer ones share its row.
LONGEST = 8

#: P(this suit is named | how many of the suit the hand holds as dealt, capped at
#: :data:`LONGEST`; how many of its ace and king), :func:`estimate` over 1,000,000
#: random deals (seed 2511) rounded; a cell no deal reached holds its row's best.
CHOICE: tuple[tuple[float, float, float], ...] = (
    (0.0, 0.0, 0.0),
    (0.0, 0.105, 0.105),
    (0.05, 0.179, 0.273),
    (0.141, 0.273, 0.376),
    (0.263, 0.383, 0.481),
    (0.403, 0.503, 0.588),
    (0.542, 0.627, 0.691),
    (0.691, 0.745, 0.783),
    (0.786, 0.84, 0.873),
)

#: A deal the choice rules out keeps this much weight (people choose by other
#: habits too, and a wrong guess should not empty the pool).
FLOOR = 0.02


def _features(hand: CardSet, suit: int) -> tuple[int, int]:
    held = hand >> (13 * suit) & 0x1FFF
    return min(held.bit_count(), LONGEST), (held >> 11).bit_count()


def choice_weight(hand: CardSet, trump: int) -> float:
    """How much likelier the hakem is to have named ``trump`` holding ``hand`` (its
    13 cards as dealt) than holding any hand: P(choice | hand) / P(choice)."""
    k, top = _features(hand, trump)
    return max(CHOICE[k][top], FLOOR) * 4.0


def estimate(deals: int, rng: random.Random) -> tuple[list[list[int]], list[list[int]]]:
    """(times named, times held) by :func:`_features`, over ``deals`` random hakem
    hands: the first five cards of each choose by the rules."""
    named = [[0, 0, 0] for _ in range(LONGEST + 1)]
    held = [[0, 0, 0] for _ in range(LONGEST + 1)]
    deck = list(range(52))
    for _ in range(deals):
        cards = rng.sample(deck, 13)
        first = hand = 0
        for i, c in enumerate(cards):
            hand |= 1 << c
            if i < 5:
                first |= 1 << c
        trump = int(choose_trump_rule(first))
        for suit in range(4):
            k, top = _features(hand, suit)
            held[k][top] += 1
            named[k][top] += suit == trump
    return named, held
