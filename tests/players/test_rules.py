"""The rule-based player's rules on hand-built positions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.actions import ChooseTrump, Discard, PlayCard
from core.cards import Suit, mask_of, parse_card
from core.match import Match
from core.players import LEVELS, make_player
from core.players.knowledge import Knowledge
from core.players.rules import _beaters, _beats, choose_trump_rule
from core.trick import winning_index
from core.variant import Variant

from .helpers import cards, position


def play(m, level: str = "normal0"):
    view = m.view(m.turn)
    action = make_player(level, seed=1).act(view)
    assert isinstance(action, PlayCard)
    assert action in view.legal
    return action.card


def c(text: str):
    return parse_card(text)


def test_does_not_overtake_winning_partner() -> None:
    # Seat 1 (our partner) wins with A♥; we (seat 3) hold K♥ and 2♥.
    m = position({3: "KH 2H 5D"}, trick="5H AH 3H", leader=0)
    assert play(m) == c("2H")


def test_does_not_ruff_partners_winner_and_throws_lowest() -> None:
    m = position({3: "2S 9S 4D KC"}, trick="5H AH 3H", leader=0)
    assert play(m) == c("4D")


def test_cheapest_winning_card_when_last() -> None:
    # Seat 0 (opponent) wins with J♥; we play last.
    m = position({3: "QH AH 4H"}, trick="JH 2H 3H", leader=0)
    assert play(m) == c("QH")


def test_cheapest_ruff_when_void_and_last() -> None:
    m = position({3: "2S 9S 4D"}, trick="JH 2H 3H", leader=0)
    assert play(m) == c("2S")


def test_overruffs_cheaply() -> None:
    m = position({3: "2S 9S QS 4D"}, trick="JH 3H 5S", leader=0)
    assert play(m) == c("9S")


def test_cheapest_master_before_opponent_plays() -> None:
    # Seat 2 plays after seat 1 (our partner is seat 0); Q♥ is master when we hold K, A.
    m = position({1: "QH KH AH 3H"}, trick="9H", leader=0)
    assert play(m) == c("QH")


def test_lowest_card_when_trick_is_lost() -> None:
    m = position({1: "5H 9H KH"}, trick="AH", leader=0)
    assert play(m) == c("5H")


def test_lowest_discard_when_cannot_win() -> None:
    # Hearts led and ruffed with A♠: our trumps cannot win, throw the lowest side card.
    m = position({3: "3S 8D 2C KD"}, trick="JH AS 3H", leader=0)
    assert play(m) == c("2C")


def test_void_memory_from_completed_tricks() -> None:
    # Seat 1 showed out of hearts on trick 1 (played a diamond).
    m = position(
        {0: "AD KD AC 5C", 1: "4D"},
        tricks=[(0, "2H 3D 4H 5H")],
        leader=0,
    )
    know = Knowledge(m.view(0))
    assert know.voids[1] == 1 << Suit.HEARTS
    assert know.voids[0] == know.voids[2] == know.voids[3] == 0


def test_no_lead_where_opponent_ruffs() -> None:
    # We hold masters A♥ and A♦; seat 1 (opponent) is void in hearts and trumps are
    # still out, so cash the diamond.
    m = position(
        {0: "AH 7H AD 6D 3C"},
        tricks=[(0, "2H 3D 4H 5H")],
        leader=0,
        trump="S",
    )
    assert play(m) == c("AD")


def test_lead_for_partner_ruff() -> None:
    # Partner (seat 2) is void in hearts, opponents are not: lead a small heart.
    m = position(
        {0: "KH 7H 9D 6D 3C"},
        tricks=[(0, "2H 4H 5D 6H")],
        leader=0,
        trump="S",
    )
    assert play(m) == c("7H")


def test_trump_lead_when_long_in_trump() -> None:
    m = position({0: "AS KS QS 7S 3S 4D 5C"}, leader=0, trump="S")
    assert play(m) == c("AS")


def test_trump_choice_length_and_strength() -> None:
    assert choose_trump_rule(mask_of(cards("AH 7S 5S 3S KD"))) == Suit.SPADES
    assert choose_trump_rule(mask_of(cards("AH KH 5S 3D 2C"))) == Suit.HEARTS


def test_two_player_discards_keep_trump_and_high_cards() -> None:
    m, _ = Match.new(Variant.two(), seed=3)
    p = make_player("normal0", seed=1)
    hakem = m.turn
    m.apply(hakem, p.act(m.view(hakem)))
    trump = m.trump
    seat = m.turn
    view = m.view(seat)
    action = p.act(view)
    assert isinstance(action, Discard) and action in view.legal
    kept = [x for x in view.hand if x not in action.cards]
    lowest_kept = min((x % 13) + (20 if x // 13 == trump else 0) for x in kept)
    for x in action.cards:
        assert (x % 13) + (20 if x // 13 == trump else 0) <= lowest_kept


def test_keep_or_discard_draw() -> None:
    m, _ = Match.new(Variant.two(), seed=5)
    p = make_player("normal0", seed=1)
    while m.phase.value != "draw":
        m.apply(m.turn, p.act(m.view(m.turn)))
    for _ in range(16):
        view = m.view(m.turn)
        top = view.top_card
        keep = p.act(view).keep
        if top // 13 == view.trump or top % 13 >= 11:
            assert keep
        if top // 13 != view.trump and top % 13 <= 3:
            assert not keep
        m.apply(m.turn, p.act(view))


def test_levels_and_legal_actions_in_every_variant() -> None:
    assert LEVELS == ("random", "easy", "normal", "hard")
    for v in (Variant.four(), Variant.three(), Variant.two(), Variant.bidding()):
        for level in ("random", "easy", "normal"):
            m, _ = Match.new(v, seed=11)
            players = [make_player(level, seed=s) for s in range(v.players)]
            while not m.is_over and m.hand_no <= 3:
                view = m.view(m.turn)
                action = players[m.turn].act(view)
                assert action in view.legal or not isinstance(action, ChooseTrump | PlayCard)
                m.apply(m.turn, action)


def test_bids_nil_only_when_weak() -> None:
    from core.players.rules import bid_estimate, bid_rule  # noqa: F401

    m, _ = Match.new(Variant.bidding(), seed=2)
    p = make_player("normal0", seed=1)
    while m.phase.value != "bid":
        m.apply(m.turn, p.act(m.view(m.turn)))
    view = m.view(m.turn)
    bid = p.act(view).tricks
    hand = mask_of(view.hand)
    if bid == 0:
        assert not hand >> 8 & 0x1F  # no spade ten or higher
    assert 0 <= bid <= 13


def _bidding_view(mine: int, theirs: int):
    from core.match import Match
    from core.variant import Variant

    m, _ = Match.new(Variant.bidding(), seed=3)
    seat = m.turn
    m.scores[seat], m.scores[1 - seat] = mine, theirs
    return m.view(seat)


def test_blind_nil_only_as_a_last_chance() -> None:
    from core.players.rules import blind_rule

    assert not blind_rule(_bidding_view(0, 250))  # far behind, but the match goes on
    assert not blind_rule(_bidding_view(100, 460))  # even +200 would not reach 500
    assert not blind_rule(_bidding_view(400, 460))  # a plain bid can reach 500
    assert blind_rule(_bidding_view(330, 470))  # only +200 gets there this hand


@given(
    st.lists(st.integers(0, 51), min_size=1, max_size=3, unique=True),
    st.one_of(st.none(), st.integers(0, 3)),
)
def test_the_cards_that_take_a_trick_at_once_are_those_that_beat_it_one_by_one(
    trick: list[int], trump: int | None
) -> None:
    beaters = _beaters(trick[winning_index(trick, trump)], trump)
    for c in set(range(52)) - set(trick):
        assert bool(beaters >> c & 1) == _beats(trick, c, trump)
