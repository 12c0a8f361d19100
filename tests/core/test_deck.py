"""Deals (RULES.md "Cards and play order", "Three players", "Two players"): seeded
deals are reproducible, secure deals differ, and the removed 2 is never dealt."""

from __future__ import annotations

import random

import pytest

from core import CARDS, HakemRule, Match, Phase, Variant, parse_card
from core.cards import mask_of
from core.deck import deal, deck_rng, owners, shuffled_deck
from tests.core.helpers import deck_of, play_random_until


def test_seeded_shuffle_is_reproducible() -> None:
    a = shuffled_deck(42, "hand:1")
    assert a == shuffled_deck(42, "hand:1")
    assert sorted(a) == list(CARDS)
    assert a != shuffled_deck(43, "hand:1")
    assert a != shuffled_deck(42, "hand:2")
    assert deck_rng(42, "x").random() == deck_rng(42, "x").random()


def test_secure_shuffles_differ() -> None:
    a, b = shuffled_deck(None, "hand:1"), shuffled_deck(None, "hand:1")
    assert sorted(a) == sorted(b) == list(CARDS)
    assert a != b  # equal with probability 1/52!
    assert isinstance(deck_rng(None, "x"), random.SystemRandom)


def test_shuffle_without_a_card() -> None:
    two = parse_card("2D")
    deck = shuffled_deck(5, "x", without=two)
    assert len(deck) == 51 and two not in deck and len(set(deck)) == 51


def test_deal_gives_each_card_to_its_planned_seat() -> None:
    rng = random.Random(4)
    for i in range(200):
        deck = shuffled_deck(i, "x")
        k = rng.randrange(0, 53)
        seats = [rng.randrange(4) for _ in range(k)]
        got = deal(deck, owners(seats), 4)
        assert got == [
            mask_of(c for c, s in zip(deck[:k], seats, strict=True) if s == t) for t in range(4)
        ]


VARIANTS = [Variant.four(), Variant.three(), Variant.two(), Variant.bidding()]


def _deal_all(m: Match) -> None:
    """Random legal actions up to the first trick of the first hand."""
    play_random_until(m, random.Random(0), lambda x: x.phase is Phase.PLAY)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v.players}p-{v.kind}")
def test_seeded_matches_are_reproducible(variant: Variant) -> None:
    a, ea = Match.new(variant, seed=2024)
    b, eb = Match.new(variant, seed=2024)
    assert ea == eb and a.to_json() == b.to_json()
    rng_a, rng_b = random.Random(9), random.Random(9)
    for _ in range(120):
        if a.is_over:
            break
        ev_a = a.apply(a.turn, rng_a.choice(a.legal_actions(a.turn)))
        ev_b = b.apply(b.turn, rng_b.choice(b.legal_actions(b.turn)))
        assert ev_a == ev_b
    assert a.to_json() == b.to_json()
    c, _ = Match.new(variant, seed=2025)
    _deal_all(a)
    _deal_all(c)
    assert a.hands != c.hands or a.stock != c.stock


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v.players}p-{v.kind}")
def test_secure_matches_differ(variant: Variant) -> None:
    a, _ = Match.new(variant)
    b, _ = Match.new(variant)
    assert a.seed is None and b.seed is None
    assert (a.stock, a.hands, a.first_draw) != (b.stock, b.hands, b.first_draw)


def _dealt(m: Match) -> set:
    out = set()
    for h in m.hands:
        out |= {c for c in CARDS if h >> c & 1}
    for d in m.discards:
        out |= {c for c in CARDS if d >> c & 1}
    return out | set(m.stock)


@pytest.mark.parametrize("seed", range(5))
def test_three_players_remove_one_two(seed: int) -> None:
    for two in ("2C", "2S", "2H", "2D"):
        v = Variant.three(removed_two=parse_card(two))
        m, _ = Match.new(v, seed=seed)
        _deal_all(m)
        assert [len(m.hand_of(s)) for s in range(3)] == [17, 17, 17]
        assert not m.stock
        assert _dealt(m) == deck_of(v) == set(CARDS) - {parse_card(two)}
    assert Variant.three().removed_two == parse_card("2♣")


@pytest.mark.parametrize("seed", range(5))
def test_two_players_remove_one_two(seed: int) -> None:
    for two in ("2C", "2H"):
        v = Variant.two(removed_two=parse_card(two))
        m, _ = Match.new(v, seed=seed)
        assert set(m.stock) | _dealt(m) == set(CARDS) - {parse_card(two)}
        _deal_all(m)
        assert _dealt(m) == set(CARDS) - {parse_card(two)}
    assert Variant.two().deck_size == 51


@pytest.mark.parametrize("seed", range(5))
def test_four_players_and_bidding_use_the_full_deck(seed: int) -> None:
    for v in (Variant.four(), Variant.bidding()):
        m, _ = Match.new(v, seed=seed)
        _deal_all(m)
        everything = _dealt(m) | set(m.pile)
        assert everything == set(CARDS)
        assert v.deck_size == 52


def test_variant_settings() -> None:
    assert Variant() == Variant.four()
    assert Variant.four().target == 7 and Variant.three().target == 7
    assert Variant.bidding().target == 500
    assert Variant.three().hand_size == 17 and Variant.four().hand_size == 13
    assert Variant.two().hand_size == 13 and Variant.bidding().hand_size == 13
    assert Variant.four().sides == 2 and Variant.three().sides == 3
    assert [Variant.four().side_of(s) for s in range(4)] == [0, 1, 0, 1]
    for v in (
        Variant.four(teams_by_aces=True, target=3),
        Variant.three(hakem_rule=HakemRule.WINNER, card_points=True, removed_two=parse_card("2H")),
        Variant.two(target=1),
        Variant.bidding(target=250),
    ):
        assert Variant.from_dict(v.to_dict()) == v
    assert Variant.with_options(Variant.four(), target=11).target == 11


@pytest.mark.parametrize(
    "options",
    [
        {"players": 5},
        {"players": 1},
        {"players": 3, "kind": "bidding"},
        {"target": 0},
        {"removed_two": parse_card("3C")},
    ],
)
def test_bad_variants(options: dict) -> None:
    with pytest.raises(ValueError):
        Variant(**options)
