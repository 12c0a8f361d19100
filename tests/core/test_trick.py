"""Who wins a trick (RULES.md "Trick play"): the highest trump, else the highest card
of the led suit; a card of any other suit never wins."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import CARDS, Suit, trick_winner, winning_index
from tests.core.helpers import cards, ref_trick_winner

S, H, D, C = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS


@pytest.mark.parametrize(
    ("played", "trump", "winner"),
    [
        # Highest of the led suit.
        ("5H KH 3H AH", S, 3),
        ("QH JH 10H 9H", S, 0),
        ("2H 3H", S, 1),
        # Trump beats the led suit, even a low trump against an ace.
        ("AH 2S KH QH", S, 1),
        ("AD KD 2C", C, 2),
        # Several trumps: the highest trump, whatever the led card.
        ("AH 3S 2S KS", S, 3),
        ("AH 3S 2S", S, 1),
        # Off-suit cards never win, aces included.
        ("2H AD AC", S, 0),
        ("2H AD AC KD", S, 0),
        ("3D 2D AH AC", S, 0),
        # Trump led: the highest trump; other suits never win.
        ("2S AS", S, 1),
        ("5S AH", S, 0),
        ("5S AH KD 4S", S, 0),
        # No trump at all (trump None): the led suit only.
        ("4C AS KC", None, 2),
        ("4C AS AH", None, 0),
        # Two and three players.
        ("9D 10D", H, 1),
        ("9D 2H 10D", H, 1),
    ],
)
def test_winning_index(played: str, trump: Suit | None, winner: int) -> None:
    cs = cards(played)
    assert winning_index(cs, trump) == winner
    plays = [((2 + i) % 4, c) for i, c in enumerate(cs)]
    assert trick_winner(plays, trump) == plays[winner][0] == ref_trick_winner(plays, trump)


def test_winner_seat_follows_the_card_not_the_position() -> None:
    plays = [(3, cards("2H")[0]), (0, cards("AH")[0]), (1, cards("KS")[0]), (2, cards("AS")[0])]
    assert trick_winner(plays, S) == 2
    assert trick_winner(plays, D) == 0


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(CARDS), min_size=2, max_size=4, unique=True),
    st.sampled_from([None, *Suit]),
)
def test_matches_reference(cs: list, trump: Suit | None) -> None:
    plays = [(i, c) for i, c in enumerate(cs)]
    w = winning_index(cs, trump)
    assert w == ref_trick_winner(plays, trump)
    won = cs[w]
    # The winner is a trump, or of the led suit with no trump in the trick.
    if any(c.suit == trump for c in cs):
        assert won.suit == trump
        assert all(won.rank >= c.rank for c in cs if c.suit == trump)
    else:
        assert won.suit == cs[0].suit
        assert all(won.rank >= c.rank for c in cs if c.suit == cs[0].suit)
