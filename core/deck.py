"""Shuffled decks: cryptographically secure for live tables, seeded for tests.

A seeded match derives each deck from ``(seed, label)`` alone, so any deal of a
match can be rebuilt from its seed without replaying what came before it.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import sys
from array import array
from collections.abc import Iterable, Sequence

from .cards import CARDS, Card, CardSet

__all__ = ["deal", "deck_rng", "owners", "shuffled_deck"]

_SECURE = secrets.SystemRandom()


def deck_rng(seed: int | None, label: str) -> random.Random:
    """The random source for one shuffle: secure when ``seed`` is None."""
    if seed is None:
        return _SECURE
    return random.Random(f"{seed}:{label}")


def shuffled_deck(seed: int | None, label: str, without: Card | None = None) -> list[Card]:
    if seed is None:
        deck = [c for c in CARDS if c != without]
        _SECURE.shuffle(deck)
        return deck
    # Sort by 32-bit keys from SHAKE-128 of (seed, label): a uniform shuffle (key ties
    # have probability ~1e-7 and still give a valid deck), reproducible anywhere, and
    # several times faster than random.shuffle in pure Python; self-play deals a lot.
    keys = array("I", hashlib.shake_128(f"{seed}:{label}".encode()).digest(208))
    if sys.byteorder != "little":  # the same deal on every machine
        keys.byteswap()
    deck = sorted(CARDS, key=keys.__getitem__)
    if without is not None:
        deck.remove(without)
    return deck


# Dealing without a Python loop per card: ``bytes.maketrans`` maps each dealt card to
# its seat's byte, ``translate`` lists the seat of every card from 51 down to 0, and
# per seat a second ``translate`` turns that into a binary numeral that ``int(.., 2)``
# reads as the seat's card set. Seat bytes start at 0x80, above every card index, so
# a card not dealt keeps its own byte (< 52) and belongs to nobody.
_SEAT0 = 0x80
_HIGH_FIRST = bytes(range(51, -1, -1))
_DIGITS = tuple(bytes(0x31 if b == _SEAT0 + s else 0x30 for b in range(256)) for s in range(4))


def owners(seats: Iterable[int]) -> bytes:
    """The plan of a deal for :func:`deal`: the seat receiving each card, in order."""
    return bytes(_SEAT0 + s for s in seats)


def deal(cards: Sequence[int], plan: bytes, players: int) -> list[CardSet]:
    """Each seat's card set when ``cards[i]`` goes to the seat ``plan[i]`` names
    (``plan`` from :func:`owners`, no longer than ``cards``)."""
    by_card = _HIGH_FIRST.translate(bytes.maketrans(bytes(cards[: len(plan)]), plan))
    return [int(by_card.translate(_DIGITS[s]), 2) for s in range(players)]
