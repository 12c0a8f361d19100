"""Shuffled decks: cryptographically secure for live tables, seeded for tests.

A seeded match derives each deck from ``(seed, label)`` alone, so any deal of a
match can be rebuilt from its seed without replaying what came before it.
"""

from __future__ import annotations

import random
import secrets

from .cards import CARDS, Card

__all__ = ["deck_rng", "shuffled_deck"]

_SECURE = secrets.SystemRandom()


def deck_rng(seed: int | None, label: str) -> random.Random:
    """The random source for one shuffle: secure when ``seed`` is None."""
    if seed is None:
        return _SECURE
    return random.Random(f"{seed}:{label}")


def shuffled_deck(seed: int | None, label: str, without: Card | None = None) -> list[Card]:
    deck = [c for c in CARDS if c != without] if without is not None else list(CARDS)
    if seed is None:
        _SECURE.shuffle(deck)
        return deck
    # Sorting by random keys is a uniform shuffle (ties have probability ~0) and
    # twice as fast as random.shuffle in pure Python; self-play deals a lot.
    rnd = deck_rng(seed, label).random
    keys = {c: rnd() for c in deck}
    deck.sort(key=keys.__getitem__)
    return deck
