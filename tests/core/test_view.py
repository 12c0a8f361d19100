"""Views: a seat sees its own hand only, the sizes of the others, the public table;
a spectator sees no hand; the top stock card only for the seat deciding on it."""

from __future__ import annotations

import random

import pytest

from core import (
    CARDS,
    ChooseTrump,
    DeclareBlind,
    Match,
    Phase,
    PlayCard,
    SeatView,
    Suit,
    Variant,
)
from tests.core.helpers import play_random_until, view_cards

VARIANTS = [Variant.four(), Variant.three(), Variant.two(), Variant.bidding()]
IDS = ["four", "three", "two", "bidding"]


def _mask_cards(mask: int) -> set:
    return {c for c in CARDS if mask >> c & 1}


def _check(m: Match) -> None:
    n = m.n
    sizes = tuple(len(m.hand_of(s)) for s in range(n))
    public = {c for t in m.tricks for _, c in t.plays} | {c for _, c in m.trick}
    spectator = m.view(None)
    assert spectator.seat is None and spectator.hand == () and spectator.discards == ()
    assert spectator.legal == () and spectator.top_card is None
    assert spectator.hand_sizes == sizes
    assert view_cards(spectator) <= public
    for s in range(n):
        v = m.view(s)
        assert isinstance(v, SeatView) and v.seat == s
        assert v.hand == tuple(m.hand_of(s)) and v.hand_sizes == sizes
        assert set(v.discards) == _mask_cards(m.discards[s])
        deciding = m.phase is Phase.DRAW and m.turn == s
        assert v.top_card == (m.stock[0] if deciding else None)
        assert (v.legal != ()) == (m.turn == s)
        hidden = set(m.stock[1:] if deciding else m.stock)
        for o in range(n):
            if o != s:
                hidden |= set(m.hand_of(o))
                if m.variant.kind == "classic":
                    hidden |= _mask_cards(m.discards[o])
        if m.variant.kind == "bidding":
            # The pile holds both players' discards; a seat knows its own, even after a
            # blind-nil exchange took one of them into the other hand.
            hidden |= set(m.pile)
            hidden -= _mask_cards(m.discards[s])
        private = set(v.hand) | set(v.discards) | ({v.top_card} if v.top_card else set())
        private |= view_cards(v) - public
        assert not private & hidden, (s, private & hidden)


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
@pytest.mark.parametrize("seed", range(3))
def test_views_through_a_match(variant: Variant, seed: int) -> None:
    rng = random.Random(seed)
    m, _ = Match.new(variant, seed=seed)
    _check(m)
    for _ in range(400):
        if m.is_over or m.hand_no > 3:
            break
        m.apply(m.turn, rng.choice(m.legal_actions(m.turn)))
        _check(m)


def test_before_trump_only_the_hakem_holds_cards() -> None:
    m, _ = Match.new(Variant.four(), seed=12)
    h = m.hakem
    for s in range(4):
        assert len(m.view(s).hand) == (5 if s == h else 0)
    assert m.view(None).hand_sizes == tuple(5 if s == h else 0 for s in range(4))


def test_top_card_only_for_the_deciding_seat() -> None:
    for variant in (Variant.two(), Variant.bidding()):
        m, _ = Match.new(variant, seed=8)
        if variant.kind == "bidding":
            m.apply(m.turn, DeclareBlind(False))
            m.apply(m.turn, DeclareBlind(False))
        else:
            play_random_until(m, random.Random(1), lambda x: x.phase is Phase.DRAW)
        assert m.phase is Phase.DRAW
        seen = set()
        while m.phase is Phase.DRAW:
            s = m.turn
            top = m.view(s).top_card
            assert top == m.stock[0]
            assert m.view(1 - s).top_card is None and m.view(None).top_card is None
            seen.add(s)
            m.apply(s, m.legal_actions(s)[0])
        assert seen == {0, 1}
        assert all(m.view(s).top_card is None for s in (0, 1, None))


def test_view_played_and_public_table() -> None:
    m, _ = Match.new(Variant.four(), seed=2)
    m.apply(m.turn, ChooseTrump(Suit.DIAMONDS))
    for _ in range(6):
        m.apply(m.turn, PlayCard(m.legal_cards(m.turn)[0]))
    v = m.view(None)
    assert len(v.tricks) == 1 and len(v.trick) == 2
    played = {c for _, c in v.tricks[0].plays} | {c for _, c in v.trick}
    assert _mask_cards(v.played) == played
    assert v.trump is Suit.DIAMONDS and v.leader == v.tricks[0].winner
    assert v.tricks_won[v.tricks[0].winner] == 1
    assert v.turn == m.turn and v.hakem == m.hakem and v.dealer == m.dealer
