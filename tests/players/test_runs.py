"""Runs of a suit on masks (:mod:`core.players.runs`), against their definition
card by card on random hands."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.players.runs import distinct_runs, run_of, same_choice

masks = st.integers(min_value=0, max_value=(1 << 52) - 1)


def _split(hand: int, a: int, b: int, others: int) -> bool:
    """Whether a card of ``others`` ranks strictly between ``a`` and ``b`` (one suit)."""
    lo, hi = min(a, b), max(a, b)
    return any(others >> c & 1 for c in range(lo + 1, hi))


@given(masks, masks, st.integers(min_value=0, max_value=51))
def test_a_run_is_the_cards_of_the_suit_nothing_else_splits(
    hand: int, others: int, card: int
) -> None:
    others &= ~hand
    hand |= 1 << card
    run = run_of(card, hand, others)
    for c in range(52):
        expected = hand >> c & 1 and c // 13 == card // 13 and not _split(hand, card, c, others)
        assert bool(run >> c & 1) == bool(expected), c


@given(masks, masks)
def test_distinct_runs_keep_the_lowest_card_of_each_run(hand: int, others: int) -> None:
    others &= ~hand
    lows = {
        c
        for c in range(52)
        if hand >> c & 1
        and (run_of(c, hand, others) & -run_of(c, hand, others)).bit_length() - 1 == c
    }
    assert distinct_runs(hand, others) == sorted(lows)


@given(masks, masks, st.integers(min_value=0, max_value=51), st.integers(min_value=0, max_value=51))
def test_the_same_choice_is_one_run(hand: int, live: int, a: int, b: int) -> None:
    hand |= 1 << a | 1 << b
    expected = a == b or (a // 13 == b // 13 and not _split(hand, a, b, live & ~hand))
    assert same_choice(a, b, hand, live) == expected
