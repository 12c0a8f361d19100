"""The arena's independent yardstick: its table habits on hand-built positions, and
legal play in every variant."""

from __future__ import annotations

import pytest

from core.actions import PlayCard
from core.cards import Suit, mask_of, parse_card
from core.match import Match, Phase
from core.players import ARENA_LEVELS, LEVELS, make_player
from core.players.yardstick import yardstick_trump
from core.variant import Variant

from .helpers import cards, position


def play(m: Match):
    view = m.view(m.turn)
    action = make_player("yardstick", seed=1).act(view)
    assert isinstance(action, PlayCard)
    assert action in view.legal
    return action.card


def c(text: str):
    return parse_card(text)


def test_arena_only() -> None:
    assert "yardstick" in ARENA_LEVELS and "yardstick" not in LEVELS


def test_last_wins_with_lowest_winning_card() -> None:
    m = position({3: "9H QH AH 4D"}, trick="JH 2H 3H", leader=0)
    assert play(m) == c("QH")


def test_lowest_card_when_the_trick_is_lost() -> None:
    m = position({3: "9H 4H KD"}, trick="JH AH 3H", leader=0)
    assert play(m) == c("4H")


def test_does_not_overtake_partners_sure_winner() -> None:
    # Seat 1 (partner of 3) wins with the ace; we are last.
    m = position({3: "KH 2H 5D"}, trick="5H AH 3H", leader=0)
    assert play(m) == c("2H")


def test_second_hand_low_unless_sure() -> None:
    # Seat 1 second to play: its Q♥ would win now, but K♥ and A♥ are out.
    m = position({1: "QH 3H 7D 8C"}, trick="5H", leader=0)
    assert play(m) == c("3H")
    # With the ace it takes the trick.
    m = position({1: "AH 3H 7D 8C"}, trick="5H", leader=0)
    assert play(m) == c("AH")


def test_ruffs_an_opponents_winner_with_lowest_trump_and_never_the_partners() -> None:
    # Seat 3 void in hearts, last: the opponent (seat 0) wins with J♥.
    m = position({3: "2S 9S 4D KC"}, trick="JH 2H 3H", leader=0)
    assert play(m) == c("2S")
    # The partner (seat 1) wins with the ace: throw instead.
    m = position({3: "2S 9S 4D KC"}, trick="5H AH 3H", leader=0)
    assert play(m) == c("4D")


def test_throws_from_the_shortest_side_suit_keeping_masters() -> None:
    # Void in hearts, the partner winning: 4♦ is the short suit's low card; A♣ is master.
    m = position({3: "2S 4D 5C 6C 7C AC"}, trick="5H AH 3H", leader=0)
    assert play(m) == c("4D")


def test_cashes_a_master_side_card() -> None:
    m = position({0: "AD 3D 4C 6C 8C 9H"}, leader=0, trump="S", hakem=1)
    assert play(m) == c("AD")


def test_hakem_side_draws_trumps_when_long() -> None:
    m = position({0: "AS KS QS 9S 5S 3S 4D 6C 8C 9H"}, leader=0, trump="S", hakem=0)
    assert play(m) == c("AS")


def test_trump_choice_by_length_and_honours() -> None:
    assert yardstick_trump(mask_of(cards("AH 3D 4D 5D 6D"))) == Suit.parse("D")
    assert yardstick_trump(mask_of(cards("AH KH QH 4D 5D"))) == Suit.parse("H")


@pytest.mark.parametrize(
    "variant", [Variant(players=4), Variant(players=3), Variant(players=2), Variant.bidding()]
)
def test_plays_whole_hands_legally(variant: Variant) -> None:
    for seed in range(5):
        m, _ = Match.new(variant, seed)
        players = [make_player("yardstick", seed=s) for s in range(variant.players)]
        hand_no = m.hand_no
        while m.phase is not Phase.OVER and m.hand_no == hand_no:
            view = m.view(m.turn)
            action = players[m.turn].act(view)
            assert action in view.legal
            m.apply(m.turn, action)
