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

from .cards import CARDS, Card

__all__ = ["deck_rng", "shuffled_deck"]

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
