"""The bitboard solvers of two- and three-player endings give exactly the values of
the searches on engine copies, whoever leads, mid-trick or not, kot or not."""

from __future__ import annotations

import random

import pytest

from core.cards import cards_in, mask_of
from core.match import Match, Phase
from core.players import make_player
from core.players.endgame import ending_values
from core.players.exact import exact_ending, exact_values
from core.players.knowledge import Knowledge
from core.players.search import SearchMatch, distinct_cards, view_sample
from core.variant import Variant

from .helpers import cards


def _ending(seed: int, cards: int, rng: random.Random, players: int = 2) -> Match | None:
    """The first hand of a seeded match, played by the rules (with some random cards,
    for kots and odd shapes) until every hand holds at most ``cards``, then some cards
    of the next trick (a trick in progress): with two players half the time one, with
    three 0, 1 or 2."""
    m, _ = Match.new(Variant(players=players), seed)
    p = make_player("normal0", seed=seed)
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, p.act(m.view(m.turn)))
    while m.phase is Phase.PLAY and max(h.bit_count() for h in m.hands) > cards:
        if rng.random() < 0.3:
            m.push(rng.choice(m.legal_cards()))
        else:
            m.apply(m.turn, p.act(m.view(m.turn)))
    for _ in range(int(rng.random() < 0.5) if players == 2 else rng.randrange(3)):
        if m.phase is Phase.PLAY:
            m.apply(m.turn, p.act(m.view(m.turn)))
    return m if m.phase is Phase.PLAY and m.hand_no == 1 else None


def _compare(players: int, cards: int, rng: random.Random, seeds: int) -> tuple[int, int]:
    """Bitboards against engine copies on each seed's ending, the real hands and a deal
    sampled from the seat's view: (positions checked, of them mid-trick)."""
    checked = mid_trick = 0
    for seed in range(seeds):
        m = _ending(seed, cards, rng, players)
        if m is None:
            continue
        view = m.view(m.turn)
        know = Knowledge(view)
        legal = distinct_cards([a.card for a in view.legal], know)  # type: ignore[union-attr]
        for hands in ([*m.hands], view_sample(view, know, rng)):
            base = SearchMatch.from_view(view, hands)
            assert exact_ending(base, legal) == exact_values(base, legal)
            checked += 1
        mid_trick += bool(m.trick)
    return checked, mid_trick


@pytest.mark.parametrize("cards", [3, 5, 7])
def test_same_values_as_the_engine_search(cards: int) -> None:
    checked, mid_trick = _compare(2, cards, random.Random(cards), 60)
    assert checked >= 60 and mid_trick >= 5


def test_kot_is_worth_its_points() -> None:
    """Seat 0 has six tricks to none, leads, and the other seat holds only diamonds
    (trump spades): every card takes the seventh trick, a kot: 2 points when seat 0
    is the hakem, 3 when the hakem is the seat that lost them all."""
    hands = (mask_of(cards("AS KS QS JS 2H 3H 4H")), mask_of(cards("2D 3D 4D 5D 6D 7D 8D")))
    mine = cards_in(hands[0])
    assert set(ending_values(hands, 0, 0, None, (6, 0), 0, 0, mine).values()) == {2.0}
    assert set(ending_values(hands, 0, 0, None, (6, 0), 0, 1, mine).values()) == {3.0}
    # One trick for the other seat already: a plain win, 1 point.
    assert set(ending_values(hands, 0, 0, None, (6, 1), 0, 0, mine).values()) == {1.0}
    # And from the other seat's side, replying to the ace of spades: it loses the kot.
    reply = ending_values(hands, 1, 0, cards("AS")[0], (6, 0), 0, 0, [cards("2D")[0]])
    assert reply == {cards("2D")[0]: -2.0}


@pytest.mark.parametrize("cards", [2, 3, 4])
def test_three_players_same_values_as_the_engine_search(cards: int) -> None:
    """The three-player max^n on bitboards against max^n on engine copies: the same
    value for every card, on the real hands and on a sampled deal of the seat's view."""
    checked, mid_trick = _compare(3, cards, random.Random(100 + cards), 120)
    assert checked >= 40 and mid_trick >= 5, (checked, mid_trick)
