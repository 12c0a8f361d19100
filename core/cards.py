"""Cards, suits and ranks, plus bit-level card sets.

A :class:`Card` is an ``int`` from 0 to 51 (``suit * 13 + rank - 2``), so a set of
cards is an ordinary Python ``int`` with one bit per card, as python-chess does with
squares. Set algebra (``&``, ``|``, ``^``) is then a single machine operation, which
is what lets a computer player simulate thousands of hands per move.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import IntEnum

__all__ = [
    "CARDS",
    "FULL_DECK",
    "SUIT_MASKS",
    "SUIT_PATTERNS",
    "Card",
    "CardSet",
    "Rank",
    "Suit",
    "card_count",
    "cards_in",
    "mask_of",
    "parse_card",
]

#: A set of cards as a bit mask: bit ``i`` set means ``CARDS[i]`` is in the set.
CardSet = int


class Suit(IntEnum):
    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOLS[self]

    @property
    def letter(self) -> str:
        return _SUIT_LETTERS[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Parse ``"♠"``, ``"S"``, ``"spades"`` (any case) into a suit."""
        key = text.strip().lower()
        try:
            return _SUIT_BY_NAME[key]
        except KeyError:
            raise ValueError(f"unknown suit: {text!r}") from None


class Rank(IntEnum):
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def label(self) -> str:
        """How the rank is printed on a card: ``"10"``, ``"J"``, ``"A"``."""
        return "10" if self == Rank.TEN else _RANK_CHARS[self - 2]

    @property
    def letter(self) -> str:
        """One-character ASCII form: ``"T"`` for ten."""
        return _RANK_CHARS[self - 2]


_SUIT_SYMBOLS = ("♠", "♥", "♦", "♣")
_SUIT_LETTERS = ("S", "H", "D", "C")
_SUIT_BY_NAME = {
    **{s.lower(): Suit(i) for i, s in enumerate(_SUIT_LETTERS)},
    **{s: Suit(i) for i, s in enumerate(_SUIT_SYMBOLS)},
    "♤": Suit.SPADES,
    "♡": Suit.HEARTS,
    "♢": Suit.DIAMONDS,
    "♧": Suit.CLUBS,
    "spades": Suit.SPADES,
    "hearts": Suit.HEARTS,
    "diamonds": Suit.DIAMONDS,
    "clubs": Suit.CLUBS,
}
_RANK_CHARS = "23456789TJQKA"


class Card(int):
    """One playing card; immutable, hashable and ordered (by suit, then rank).

    Use :data:`CARDS` or :meth:`Card.of` rather than the constructor; each of the 52
    cards exists once.
    """

    __slots__ = ()

    @staticmethod
    def of(rank: Rank | int, suit: Suit | int) -> Card:
        if not 2 <= rank <= 14 or not 0 <= suit <= 3:
            raise ValueError(f"no such card: rank {rank}, suit {suit}")
        return CARDS[suit * 13 + rank - 2]

    @staticmethod
    def parse(text: str) -> Card:
        return parse_card(text)

    @property
    def suit(self) -> Suit:
        return _SUIT_OF[self]

    @property
    def rank(self) -> Rank:
        return _RANK_OF[self]

    @property
    def bit(self) -> CardSet:
        return 1 << self

    @property
    def ascii(self) -> str:
        """Two-character ASCII form: ``"AS"``, ``"TH"``."""
        return _ASCII[self]

    def __str__(self) -> str:
        return _TEXT[self]

    def __repr__(self) -> str:
        return f"Card({_TEXT[self]!r})"

    def __reduce__(self):  # pickle as the index, then look the singleton up again
        return (_card_from_index, (int(self),))


def _card_from_index(index: int) -> Card:
    return CARDS[index]


CARDS: tuple[Card, ...] = tuple(int.__new__(Card, i) for i in range(52))
_SUIT_OF = tuple(Suit(i // 13) for i in range(52))
_RANK_OF = tuple(Rank(i % 13 + 2) for i in range(52))
_ASCII = tuple(_RANK_OF[i].letter + _SUIT_LETTERS[i // 13] for i in range(52))
_TEXT = tuple(_RANK_OF[i].label + _SUIT_SYMBOLS[i // 13] for i in range(52))

#: ``SUIT_MASKS[suit]`` is the set of all 13 cards of that suit.
SUIT_MASKS: tuple[CardSet, ...] = tuple(0x1FFF << (13 * s) for s in range(4))
FULL_DECK: CardSet = (1 << 52) - 1

_RANK_WORDS = {"10": "T", "1": "A"}


def parse_card(text: str) -> Card:
    """Parse ``"A♠"``, ``"10♥"``, ``"AS"``, ``"TH"`` or ``"10h"`` into a card.

    Raises :class:`ValueError` for anything else.
    """
    t = text.strip().replace("\u2066", "").replace("\u2069", "")
    if len(t) < 2:
        raise ValueError(f"unknown card: {text!r}")
    rank_part, suit_part = t[:-1].upper(), t[-1]
    rank_part = _RANK_WORDS.get(rank_part, rank_part)
    if len(rank_part) != 1 or rank_part not in _RANK_CHARS:
        raise ValueError(f"unknown card: {text!r}")
    suit = _SUIT_BY_NAME.get(suit_part.lower())
    if suit is None:
        raise ValueError(f"unknown card: {text!r}")
    return CARDS[suit * 13 + _RANK_CHARS.index(rank_part)]


def mask_of(cards: Iterable[int]) -> CardSet:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _suit_table(suit: int) -> tuple[tuple[Card, ...], ...]:
    # Each pattern is the one without its highest card, plus that card: one short
    # concatenation per pattern (every process start builds the four tables).
    base = suit * 13
    table: list[tuple[Card, ...]] = [()]
    for chunk in range(1, 1 << 13):
        top = chunk.bit_length() - 1
        table.append(table[chunk ^ (1 << top)] + (CARDS[base + top],))
    return tuple(table)


#: ``SUIT_PATTERNS[suit][bits]``: the cards of one suit whose 13-bit pattern is
#: ``bits``, so listing a hand costs four lookups.
SUIT_PATTERNS = tuple(_suit_table(s) for s in range(4))
_S, _H, _D, _C = SUIT_PATTERNS


def cards_in(mask: CardSet) -> tuple[Card, ...]:
    """The cards of a set, lowest first (spades 2 … clubs A)."""
    return (
        _S[mask & 0x1FFF]
        + _H[mask >> 13 & 0x1FFF]
        + _D[mask >> 26 & 0x1FFF]
        + _C[mask >> 39 & 0x1FFF]
    )


def iter_cards(mask: CardSet) -> Iterator[Card]:
    while mask:
        low = mask & -mask
        yield CARDS[low.bit_length() - 1]
        mask ^= low


def card_count(mask: CardSet) -> int:
    return mask.bit_count()


def highest(mask: CardSet) -> Card:
    """The highest-ranked card of a set that holds cards of one suit only."""
    return CARDS[mask.bit_length() - 1]


def lowest(mask: CardSet) -> Card:
    return CARDS[(mask & -mask).bit_length() - 1]
