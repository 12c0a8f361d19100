"""The arena's bare rule set (the issue's yardstick for the normal player)."""

from __future__ import annotations

from core.actions import PlayCard
from core.arena import run_arena
from core.cards import parse_card
from core.events import HandEnded
from core.match import Match
from core.players import ARENA_LEVELS, LEVELS, make_player
from core.variant import Variant

from .helpers import position


def play(m) -> int:
    view = m.view(m.turn)
    action = make_player("bare", seed=1).act(view)
    assert isinstance(action, PlayCard) and action in view.legal
    return action.card


def c(text: str) -> int:
    return parse_card(text)


def test_bare_is_an_arena_level_not_a_lobby_level() -> None:
    assert "bare" in ARENA_LEVELS and "bare" not in LEVELS


def test_lowest_winning_card() -> None:
    m = position({1: "QH KH AH 3H"}, trick="JH", leader=0)
    assert play(m) == c("QH")


def test_never_overtakes_a_winning_partner() -> None:
    # Seat 1 (partner of seat 3) wins with A♥; seat 3 could ruff but throws low.
    m = position({3: "2S 9S 4D KC"}, trick="5H AH 3H", leader=0)
    assert play(m) == c("4D")


def test_ruffs_with_the_lowest_trump_when_void() -> None:
    m = position({3: "9S 2S 4D"}, trick="JH 2H 3H", leader=0)
    assert play(m) == c("2S")


def test_throws_the_cheapest_card_when_it_cannot_win() -> None:
    m = position({3: "2H 5H"}, trick="JH AH 3H", leader=0)
    assert play(m) == c("2H")
    m = position({3: "KD 4C 3S"}, trick="JH 2H 5S", leader=0)  # 3♠ cannot overruff
    assert play(m) == c("4C")


def test_leads_its_cheapest_side_card() -> None:
    m = position({0: "AS 2S KD 3C AH"}, leader=0)
    assert play(m) == c("3C")


def test_always_legal_over_random_matches() -> None:
    for seed in range(30):
        m, _ = Match.new(Variant(players=4), seed)
        players = [make_player("bare", seed=s) for s in range(4)]
        ended = False
        while not ended:
            seat = m.turn
            view = m.view(seat)
            action = players[seat].act(view)
            assert action in view.legal
            ended = any(isinstance(e, HandEnded) for e in m.apply(seat, action))


def test_normal_beats_the_bare_rule_set() -> None:
    r = run_arena("normal0", "bare", players=4, deals=300, seed=7, jobs=1)
    assert r.hand_wins(0) > 0.55
