"""The two-player deal search (:mod:`core.players.drawing`): its sampled deals agree
with what the seat has seen, every finished deal is a whole one, its decisions are
legal, never depend on the hidden cards, and get the plain cases right."""

from __future__ import annotations

import random

import pytest

from core.actions import ChooseTrump, Discard, Draw
from core.cards import SUIT_MASKS, Suit, mask_of
from core.match import Match, Phase
from core.players import make_player
from core.players.clock import Clock
from core.players.drawing import DrawSearch
from core.players.hard import HardPlayer
from core.players.knowledge import Knowledge, deck_mask
from core.variant import Variant

from .helpers import cards


def _to_phase(seed: int, phase: Phase, draws: int = 0) -> Match:
    """A two-player match at its first ``phase`` (after ``draws`` draws), reached by
    the rules."""
    m, _ = Match.new(Variant.two(), seed)
    p = make_player("normal", seed=seed)
    while not (m.phase is phase and (phase is not Phase.DRAW or draws == 0)):
        if m.phase is Phase.DRAW:
            draws -= 1
        m.apply(m.turn, p.act(m.view(m.turn)))
    return m


POSITIONS = [(Phase.TRUMP, 0), (Phase.DISCARD, 0), (Phase.DRAW, 0), (Phase.DRAW, 7)]


@pytest.mark.parametrize(("phase", "draws"), POSITIONS)
def test_samples_agree_with_the_view_and_finish_whole(phase: Phase, draws: int) -> None:
    for seed in range(8):
        m = _to_phase(seed, phase, draws)
        me = m.turn
        view = m.view(me)
        know = Knowledge(view)
        search = DrawSearch(random.Random(seed))
        for _ in range(10):
            deal = search._sample(view, know)
            assert deal.hands[me] == mask_of(view.hand)
            assert deal.hands[1 - me].bit_count() == view.hand_sizes[1 - me]
            assert len(deal.stock) == view.stock_size
            if phase is Phase.DRAW:
                assert deal.stock[0] == view.top_card
            placed = deal.hands[1 - me] | mask_of(deal.stock[1 if phase is Phase.DRAW else 0 :])
            assert placed & ~know.unseen == 0  # only cards the seat has not seen
            assert not deal.hands[1 - me] & mask_of(deal.stock)
            if phase is Phase.TRUMP:
                trump = search._apply_trump(view, deal, 2)
            elif phase is Phase.DISCARD:
                trump = search._apply_discard(view, deal, (view.hand[0], view.hand[1]))
            else:
                trump = search._apply_keep(view, deal, seed % 2 == 0)
            search._finish(view, deal, me, trump)
            h0, h1 = deal.hands
            assert h0.bit_count() == h1.bit_count() == 13
            assert not h0 & h1
            assert (h0 | h1) & ~deck_mask(view) == 0


def _hidden_changed(m: Match) -> Match:
    """The same position for the seat on turn with the opponent's hand and the stock
    below the top card dealt again (the seat's view is unchanged)."""
    me = m.turn
    opp = 1 - me
    top = m.stock[:1] if m.phase is Phase.DRAW else []
    pool = list(m.stock[len(top) :]) + [c for c in range(52) if m.hands[opp] >> c & 1]
    random.Random(99).shuffle(pool)
    size = m.hands[opp].bit_count()
    other = m.copy()
    other.hands = list(m.hands)
    other.hands[opp] = mask_of(pool[:size])
    other.stock = top + pool[size:]
    assert other.view(me) == m.view(me)
    assert other.hands[opp] != m.hands[opp]
    return other


@pytest.mark.parametrize(("phase", "draws"), POSITIONS)
def test_decisions_do_not_depend_on_hidden_cards(phase: Phase, draws: int) -> None:
    for seed in range(4):
        m = _to_phase(seed, phase, draws)
        choices = []
        for match in (m, _hidden_changed(m)):
            view = match.view(match.turn)
            search = DrawSearch(random.Random(7), max_samples=30)
            if phase is Phase.TRUMP:
                choices.append(search.trump(view, Clock(30.0)))
            elif phase is Phase.DISCARD:
                choices.append(search.discards(view, Clock(30.0)))
            else:
                choices.append(search.keep(view, Clock(30.0)))
        assert choices[0] is not None
        assert choices[0] == choices[1]


def test_hard_with_the_deal_search_acts_legally() -> None:
    decided = {Phase.TRUMP: 0, Phase.DISCARD: 0, Phase.DRAW: 0}
    for seed in range(3):
        m, _ = Match.new(Variant.two(), seed + 200)
        players = [HardPlayer(seed=s, time_budget=0.01) for s in range(2)]
        for p in players:
            p.search_trump_2p = p.search_discards_2p = p.search_draw_2p = True
        while m.phase is not Phase.PLAY:
            view = m.view(m.turn)
            action = players[m.turn].act(view)
            assert action in view.legal
            decided[view.phase] += 1
            m.apply(m.turn, action)
    assert decided[Phase.TRUMP] == 3 and decided[Phase.DISCARD] == 6
    assert decided[Phase.DRAW] == 60


def _position(phase: Phase, mine: str, trump: str | None, top: str = "") -> Match:
    """Seat 0, the hakem, on turn in ``phase`` holding ``mine`` (and seeing ``top``
    on the stock in the draw); the opponent holds as many cards dealt at random from
    the rest, and after the discards each seat has put two away."""
    m, _ = Match.new(Variant.two(), 3)
    m.phase = phase
    m.hakem = m.turn = 0
    m.trump = Suit.parse(trump) if trump else None
    own = cards(mine)
    head = cards(top)
    rest = [c for c in range(52) if c not in own + head and c != m.variant.removed_two]
    random.Random(1).shuffle(rest)
    n = len(own)
    m.hands = [mask_of(own), mask_of(rest[:n])]
    rest = rest[n:]
    m.discards = [0, 0]
    if phase is Phase.DRAW:
        m.discards = [mask_of(rest[:2]), mask_of(rest[2:4])]
        rest = rest[4:]
    m.stock = head + rest[: 51 - 2 * n - (4 if phase is Phase.DRAW else 0) - len(head)]
    return m


def test_plain_cases() -> None:
    """What any player would do: keep the ace of trump, name the suit of five, put
    away no trump when two side cards can go."""
    search = DrawSearch(random.Random(0), max_samples=200)
    keep_ace = _position(Phase.DRAW, "2S 7H 9D", "S", top="AS")
    assert Draw(True) in keep_ace.view(0).legal
    assert search.keep(keep_ace.view(0), Clock(30.0)) is True
    five = _position(Phase.TRUMP, "3H 6H 9H JH KH", None)
    assert Suit(search.trump(five.view(0), Clock(30.0))) is Suit.HEARTS
    assert ChooseTrump(Suit.HEARTS) in five.view(0).legal
    trumps = _position(Phase.DISCARD, "AS KS 9S 2H 3D", "S")
    view = trumps.view(0)
    pair = search.discards(view, Clock(30.0))
    assert pair is not None and Discard(pair) in view.legal
    assert not mask_of(pair) & SUIT_MASKS[Suit.SPADES]
