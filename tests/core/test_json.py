"""Saving and restoring: to_json/from_json at any step continues identically; actions
and events have JSON forms; copies are independent."""

from __future__ import annotations

import json
import random

import pytest

from core import (
    FORMAT_VERSION,
    Bid,
    ChooseTrump,
    DeclareBlind,
    Discard,
    Draw,
    Exchange,
    HakemRule,
    Match,
    Phase,
    PlayCard,
    Suit,
    Variant,
    action_from_dict,
    action_to_dict,
    cards_in,
)
from tests.core.helpers import cards, play_random_until

VARIANTS = [
    Variant.four(target=2),
    Variant.four(teams_by_aces=True, target=2),
    Variant.three(target=2, hakem_rule=HakemRule.WINNER, card_points=True),
    Variant.two(target=2),
    Variant.bidding(target=80),
]
IDS = ["four", "four-aces", "three", "two", "bidding"]


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
@pytest.mark.parametrize("seed", range(3))
def test_restore_at_random_steps_continues_identically(variant: Variant, seed: int) -> None:
    rng = random.Random(seed)
    m, _ = Match.new(variant, seed=seed)
    actions = []
    while not m.is_over and m.hand_no <= 3:
        actions.append((m.turn, rng.choice(m.legal_actions(m.turn))))
        m.apply(*actions[-1])
    final = m.to_json()
    replay, _ = Match.new(variant, seed=seed)
    step = 0
    for k in sorted(rng.sample(range(len(actions)), 5)):
        while step < k:
            replay.apply(*actions[step])
            step += 1
        text = replay.to_json()
        restored = Match.from_json(text)
        assert restored.to_json() == text and restored.to_dict() == replay.to_dict()
        for s in [None, *range(variant.players)]:
            assert restored.view(s) == replay.view(s)
        original = replay.copy()
        for a in actions[k:]:
            assert restored.apply(*a) == original.apply(*a)
        assert restored.to_json() == original.to_json() == final
    assert json.loads(final)["format"] == FORMAT_VERSION


def test_secure_match_round_trips() -> None:
    m, _ = Match.new(Variant.four())
    play_random_until(m, random.Random(1), lambda x: x.phase is Phase.PLAY and len(x.tricks) > 2)
    restored = Match.from_json(m.to_json())
    assert restored.seed is None and restored.to_json() == m.to_json()
    seat = m.turn
    card = m.legal_cards(seat)[0]
    assert restored.apply(seat, PlayCard(card)) == m.apply(seat, PlayCard(card))


def test_unknown_format_is_refused() -> None:
    m, _ = Match.new(Variant.four(), seed=1)
    d = m.to_dict()
    d["format"] = FORMAT_VERSION + 1
    with pytest.raises(ValueError):
        Match.from_dict(d)


def test_copy_is_independent() -> None:
    m, _ = Match.new(Variant.four(), seed=3)
    m.apply(m.turn, ChooseTrump(Suit.SPADES))
    before = m.to_json()
    c = m.copy()
    play_random_until(c, random.Random(2), lambda x: x.hand_no > 1)
    assert m.to_json() == before
    assert c.to_json() != before


def test_copy_copies_every_attribute() -> None:
    """``copy`` is written out by hand for speed: a state attribute it forgot would
    be missing (or shared) in the copy."""
    from core.match import _STATE

    m, _ = Match.new(Variant.four(), seed=3)
    m.apply(m.turn, ChooseTrump(Suit.SPADES))
    m.push(m.legal_cards()[0])
    m.note = "a caller's own attribute"  # type: ignore[attr-defined]
    c = m.copy()
    assert type(c) is Match and c.note == m.note  # type: ignore[attr-defined]
    for name in _STATE:
        value = getattr(m, name)
        assert getattr(c, name) == value, name
        if isinstance(value, list):
            assert getattr(c, name) is not value, name
    assert set(_STATE) >= {a for a in Match.__slots__ if not a.startswith("__")}


def test_actions_round_trip() -> None:
    actions = [
        ChooseTrump(Suit.HEARTS),
        PlayCard(cards("10H")[0]),
        Discard(tuple(cards("AS 2C"))),
        Exchange(tuple(cards("KD QD JD"))),
        Exchange(()),
        Draw(True),
        Draw(False),
        DeclareBlind(True),
        Bid(0),
        Bid(13),
    ]
    for a in actions:
        d = action_to_dict(a)
        assert action_from_dict(json.loads(json.dumps(d))) == a
    assert action_to_dict(PlayCard(cards("10H")[0])) == {"type": "play", "card": "TH"}
    with pytest.raises(ValueError):
        action_from_dict({"type": "fold"})
    with pytest.raises(TypeError):
        action_to_dict("play")  # type: ignore[arg-type]


def test_from_view_reproduces_trick_play() -> None:
    """Computer players search matches rebuilt from a view and guessed hands."""
    m, _ = Match.new(Variant.four(), seed=6)
    play_random_until(m, random.Random(6), lambda x: x.phase is Phase.PLAY and len(x.trick) == 2)
    seat = m.turn
    rebuilt = Match.from_view(m.view(seat), list(m.hands))
    assert rebuilt.legal_cards(seat) == m.legal_cards(seat)
    rng_a, rng_b = random.Random(1), random.Random(1)
    for _ in range(20):
        a = rng_a.choice(m.legal_cards(m.turn))
        b = rng_b.choice(rebuilt.legal_cards(rebuilt.turn))
        assert a == b
        assert m.apply(m.turn, PlayCard(a)) == rebuilt.apply(rebuilt.turn, PlayCard(b))
    assert [cards_in(h) for h in m.hands] == [cards_in(h) for h in rebuilt.hands]
