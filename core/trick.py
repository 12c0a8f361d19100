"""Who wins a trick: the one place that decides it.

The highest trump wins; with no trump in the trick, the highest card of the suit
led (the first card's suit). A card of any other suit never wins. Within a suit a
higher card index is a higher rank, so "highest" is the top bit of a card set.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import CARDS, SUIT_MASKS, Card, CardSet

__all__ = ["trick_winner", "winning_card", "winning_index", "winning_play"]

_BITS = tuple(1 << i for i in range(52))


def winning_card(cards: CardSet, led: int, trump: int | None) -> Card:
    """The card that takes a trick holding the set ``cards``, whose suit led is ``led``."""
    if trump is not None:
        trumps = cards & SUIT_MASKS[trump]
        if trumps:
            return CARDS[trumps.bit_length() - 1]
    return CARDS[(cards & SUIT_MASKS[led]).bit_length() - 1]


def winning_index(cards: Sequence[int], trump: int | None) -> int:
    """Index into ``cards`` (in playing order) of the card that takes the trick: the
    rule of :func:`winning_card` as one pass (rule-based players ask this for every
    card they consider, in every playout)."""
    best = cards[0]
    suit = best // 13
    win = i = 0
    for c in cards:  # a counter of our own: enumerate() measured 25% slower here
        s = c // 13
        if s == suit:
            if c > best:
                best, win = c, i
        elif s == trump:  # the first trump on a trick of another suit
            best, win, suit = c, i, s
        i += 1  # noqa: SIM113
    return win


def trick_winner(plays: Sequence[tuple[int, Card]], trump: int | None) -> int:
    """The seat that takes a trick given as ``(seat, card)`` pairs in playing order."""
    return winning_play(plays, trump)[0]


def winning_play(plays: Sequence[tuple[int, int]], trump: int | None) -> tuple[int, int]:
    """The ``(seat, card)`` of ``plays`` (in playing order) that takes the trick: the
    same rule as :func:`winning_card`, as one pass over the plays (the engine's hot
    path ends a trick every fourth card)."""
    it = iter(plays)
    best = next(it)
    card = best[1]
    suit = card // 13
    for play in it:
        c = play[1]
        s = c // 13
        if s == suit:
            if c > card:
                best, card = play, c
        elif s == trump:  # the first trump on a trick of another suit
            best, card, suit = play, c, s
    return best
