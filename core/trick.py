"""Who wins a trick: the one place that decides it."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import Card

__all__ = ["trick_winner", "winning_index"]


def winning_index(cards: Sequence[int], trump: int | None) -> int:
    """Index into ``cards`` (in playing order) of the card that takes the trick.

    The highest trump wins; with no trump in the trick, the highest card of the
    suit led (the first card's suit). A card of any other suit never wins.
    Cards of one suit compare by their index, which orders them by rank.
    """
    led = cards[0] // 13
    best = 0
    best_card = cards[0]
    best_is_trump = led == trump
    for i in range(1, len(cards)):
        c = cards[i]
        s = c // 13
        if s == trump:
            if not best_is_trump or c > best_card:
                best, best_card, best_is_trump = i, c, True
        elif s == led and not best_is_trump and c > best_card:
            best, best_card = i, c
    return best


def trick_winner(plays: Sequence[tuple[int, Card]], trump: int | None) -> int:
    """The seat that takes a trick given as ``(seat, card)`` pairs in playing order."""
    return plays[winning_index([c for _, c in plays], trump)][0]
