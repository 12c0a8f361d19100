"""Runs of a suit: cards of one hand that no card held elsewhere ranks between.

Which card of a run a player plays is the same to double dummy, so the searches
look at one card of each run (:func:`distinct_runs`), the inference counts any card
of the run the model would have played as the model's choice (:func:`same_choice`),
and a signal may say something by which card of the run it plays
(:func:`.signals.sequence_card`). All on masks: the exact endings ask at every node.
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, CardSet

__all__ = ["distinct_runs", "run_of", "same_choice"]

_BELOW = tuple((1 << c) - 1 for c in range(53))


def distinct_runs(hand: CardSet, others: CardSet) -> list[int]:
    """``hand``'s cards, lowest first, one of each run of a suit that no card of
    ``others`` splits (the lowest kept)."""
    out: list[int] = []
    prev = -2
    h = hand
    while h:
        low = h & -h
        c = low.bit_length() - 1
        h ^= low
        if out and c // 13 == prev // 13 and not others & _BELOW[c] & ~_BELOW[prev + 1]:
            prev = c
            continue
        out.append(c)
        prev = c
    return out


def run_of(card: int, hand: CardSet, others: CardSet) -> CardSet:
    """The cards of ``hand`` in ``card``'s run: its suit, no card of ``others``
    between them and ``card`` (``card`` itself included)."""
    block = others & SUIT_MASKS[card // 13] & ~(1 << card)
    above = block & ~_BELOW[card]
    upto = _BELOW[(above & -above).bit_length() - 1] if above else _BELOW[card - card % 13 + 13]
    below = block & _BELOW[card]
    return hand & SUIT_MASKS[card // 13] & upto & ~_BELOW[below.bit_length()] | 1 << card


def same_choice(a: int, b: int, hand: CardSet, live: CardSet) -> bool:
    """Whether playing ``a`` or ``b`` from ``hand`` gives away the same thing: one
    run of ``hand`` with the ``live`` cards of the other seats."""
    return a == b or bool(run_of(a, hand, live & ~hand) >> b & 1)
