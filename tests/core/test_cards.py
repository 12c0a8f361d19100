"""Cards (RULES.md "Cards and play order"): parsing, printing, order, hashing, errors."""

from __future__ import annotations

import copy
import pickle

import pytest

from core import CARDS, Card, Rank, Suit, cards_in, mask_of, parse_card
from core.cards import FULL_DECK, SUIT_MASKS, card_count, highest, iter_cards, lowest


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("A♠", Rank.ACE, Suit.SPADES),
        ("10♥", Rank.TEN, Suit.HEARTS),
        ("AS", Rank.ACE, Suit.SPADES),
        ("TH", Rank.TEN, Suit.HEARTS),
        ("10h", Rank.TEN, Suit.HEARTS),
        ("10H", Rank.TEN, Suit.HEARTS),
        ("th", Rank.TEN, Suit.HEARTS),
        ("as", Rank.ACE, Suit.SPADES),
        ("K♦", Rank.KING, Suit.DIAMONDS),
        ("QD", Rank.QUEEN, Suit.DIAMONDS),
        ("J♣", Rank.JACK, Suit.CLUBS),
        ("2C", Rank.TWO, Suit.CLUBS),
        ("9♣", Rank.NINE, Suit.CLUBS),
        (" 7♥ ", Rank.SEVEN, Suit.HEARTS),
        ("A♤", Rank.ACE, Suit.SPADES),
        ("A♡", Rank.ACE, Suit.HEARTS),
        ("A♢", Rank.ACE, Suit.DIAMONDS),
        ("A♧", Rank.ACE, Suit.CLUBS),
        ("\u2066A♠\u2069", Rank.ACE, Suit.SPADES),  # wrapped in LTR isolates (Persian text)
    ],
)
def test_parse(text: str, rank: Rank, suit: Suit) -> None:
    c = parse_card(text)
    assert c.rank is rank and c.suit is suit
    assert c is Card.of(rank, suit) is Card.parse(text)


def test_print() -> None:
    assert str(parse_card("AS")) == "A♠"
    assert str(parse_card("TH")) == "10♥"
    assert str(parse_card("2C")) == "2♣"
    assert str(parse_card("JD")) == "J♦"
    assert parse_card("10♥").ascii == "TH"
    assert parse_card("A♠").ascii == "AS"
    assert repr(parse_card("QC")) == "Card('Q♣')"
    assert Rank.TEN.label == "10" and Rank.TEN.letter == "T"
    assert Rank.ACE.label == "A" == Rank.ACE.letter
    assert [s.symbol for s in Suit] == ["♠", "♥", "♦", "♣"]
    assert [s.letter for s in Suit] == ["S", "H", "D", "C"]


def test_every_card_round_trips() -> None:
    assert len(CARDS) == 52 and len(set(CARDS)) == 52
    seen = set()
    for c in CARDS:
        assert parse_card(str(c)) is c
        assert parse_card(c.ascii) is c
        assert parse_card(c.ascii.lower()) is c
        assert Card.of(c.rank, c.suit) is c
        seen.add((c.rank, c.suit))
    assert seen == {(r, s) for r in Rank for s in Suit}


@pytest.mark.parametrize(
    "text",
    ["", "A", "S", "♠", "1", "ZZ", "11♠", "A♠♠", "AX", "10", "B♠", "0♠", "1O♠", "AA", "♠A", "A S"],
)
def test_parse_errors(text: str) -> None:
    with pytest.raises(ValueError):
        parse_card(text)


def test_card_of_errors() -> None:
    for rank, suit in [(1, 0), (15, 0), (0, 0), (2, 4), (2, -1)]:
        with pytest.raises(ValueError):
            Card.of(rank, suit)


def test_suit_parse() -> None:
    assert Suit.parse("♠") is Suit.SPADES
    assert Suit.parse("h") is Suit.HEARTS
    assert Suit.parse("Diamonds") is Suit.DIAMONDS
    assert Suit.parse(" clubs ") is Suit.CLUBS
    for bad in ("", "x", "spade", "♠♠"):
        with pytest.raises(ValueError):
            Suit.parse(bad)


def test_rank_order_in_every_suit() -> None:
    """A > K > Q > J > 10 > 9 > ... > 2 in every suit."""
    order = ["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2"]
    for suit in Suit:
        ranked = sorted((c for c in CARDS if c.suit is suit), reverse=True)
        assert [c.rank.label for c in ranked] == order
        assert [c.rank for c in ranked] == sorted(Rank, reverse=True)
    assert parse_card("AS") > parse_card("KS") > parse_card("TS") > parse_card("9S")
    assert parse_card("3H") > parse_card("2H")


def test_cards_sort_by_suit_then_rank() -> None:
    shuffled = sorted(CARDS, key=lambda c: (c.rank, -c.suit))
    ordered = sorted(shuffled)
    assert [c.suit for c in ordered] == [s for s in Suit for _ in range(13)]
    assert ordered == list(CARDS)


def test_hashing_and_identity() -> None:
    a = parse_card("AS")
    assert hash(a) == hash(parse_card("A♠"))
    assert {a: 1}[parse_card("A♠")] == 1
    assert len({parse_card(c.ascii) for c in CARDS} | set(CARDS)) == 52
    assert pickle.loads(pickle.dumps(a)) is a
    assert copy.copy(a) == a and copy.deepcopy(a) == a
    assert a != parse_card("AH")


def test_card_sets() -> None:
    hand = [parse_card(t) for t in ("AS", "2C", "TH", "KS")]
    m = mask_of(hand)
    assert card_count(m) == 4
    assert cards_in(m) == tuple(sorted(hand))
    assert list(iter_cards(m)) == sorted(hand)
    assert cards_in(FULL_DECK) == CARDS
    assert cards_in(0) == ()
    for suit in Suit:
        assert all(c.suit is suit for c in cards_in(SUIT_MASKS[suit]))
        assert card_count(SUIT_MASKS[suit]) == 13
    spades = m & SUIT_MASKS[Suit.SPADES]
    assert highest(spades) == parse_card("AS") and lowest(spades) == parse_card("KS")
