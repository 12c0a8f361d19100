"""The measures ``benchmarks.deal_accuracy`` prints, on hand-made deals: a check
before play reports what the sampled deals get right, so the measure must be right."""

from __future__ import annotations

import math

from benchmarks.deal_accuracy import _accuracy, _effective, _hakem_trumps, _partner_lengths


def _hand(*counts: int, offset: int = 0) -> int:
    """A hand of ``counts[u]`` cards of each suit u, from rank ``offset`` up."""
    return sum(((1 << k) - 1) << (13 * u + offset) for u, k in enumerate(counts))


def test_partner_lengths_error_is_the_weighted_squared_error_over_the_suits() -> None:
    real = [0, 0, _hand(4, 3, 3, 3), 0]  # seat 0's partner is seat 2
    right = [0, 0, _hand(4, 3, 3, 3, offset=5), 0]  # other cards, same lengths
    wrong = [0, 0, _hand(2, 5, 3, 3), 0]  # two suits off by two
    assert _partner_lengths([(1.0, right)], real, 0) == 0.0
    assert _partner_lengths([(1.0, wrong)], real, 0) == 8.0
    # weighted as the search weighs the deals
    assert _partner_lengths([(3.0, right), (1.0, wrong)], real, 0) == 2.0
    assert _partner_lengths([], real, 0) is None


def test_hakem_trumps_bias_and_square() -> None:
    real = [_hand(5, 3, 3, 2), 0, 0, 0]
    more = [_hand(6, 3, 2, 2), 0, 0, 0]
    fewer = [_hand(3, 4, 3, 3), 0, 0, 0]
    bias, sq = _hakem_trumps([(1.0, more), (1.0, fewer)], real, hakem=0, trump=0)
    assert bias == (1 - 2) / 2 and sq == (1 + 4) / 2
    assert math.isclose(_hakem_trumps([(1.0, real)], real, 0, 0)[1], 0.0)


def test_cards_placed_right_counts_the_hidden_cards_of_the_other_seats() -> None:
    real = [_hand(13), _hand(0, 13), _hand(0, 0, 13), _hand(0, 0, 0, 13)]
    swapped = [real[0], real[3], real[2], real[1]]
    assert _accuracy([(1.0, real)], real, 0) == 1.0
    assert math.isclose(_accuracy([(1.0, swapped)], real, 0), 13 / 39)
    assert _accuracy([(1.0, swapped)], real, 0, (2,)) == 1.0  # the partner's


def test_deals_that_count() -> None:
    a, b = [1, 2, 3, 4], [4, 3, 2, 1]
    assert _effective([(2.0, a), (2.0, b)]) == 1.0
    assert _effective([(1.0, a), (0.0, b), (0.0, [5]), (0.0, [6])]) == 0.25
    # the same deal drawn twice counts once, with both weights
    assert _effective([(1.0, a), (1.0, a)]) == 0.5
    assert _effective([(0.0, a)]) is None
