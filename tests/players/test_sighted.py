"""The arena's "hard-sighted" diagnostic: hard whose sampled deals hold the real
hands of the seats it is shown, and nothing else it could not see."""

from __future__ import annotations

import random

import pytest

from core.cards import SUIT_MASKS
from core.match import Match
from core.players import ARENA_LEVELS, LEVELS, make_player
from core.players.search import view_sample
from core.players.sighted import ACES, HONOURS
from core.variant import Variant

from .helpers import played


def _mid_hand(seed: int, plays: int) -> Match:
    return played(Variant.four(), seed, plays, make_player("normal0", seed=seed))


def _suits_played(view, seat: int) -> set[int]:
    """The suits ``seat`` has played a card of this hand."""
    plays = [p for t in view.tricks for p in t.plays] + list(view.trick)
    return {c // 13 for s, c in plays if s == seat}


def test_sighted_is_an_arena_level_not_a_lobby_level() -> None:
    assert "hard-sighted" in ARENA_LEVELS and "hard-sighted" not in LEVELS


def test_samples_hold_the_shown_hands_and_deal_the_rest() -> None:
    rng = random.Random(3)
    for seed, plays, sighted in [(11, 5, 1), (12, 14, 1), (13, 9, 2), (14, 22, 2)]:
        m = _mid_hand(seed, plays)
        me = m.turn
        view = m.view(me)
        player = make_player("hard-sighted", seed=1, time_budget=0.05)
        player.sighted = sighted
        player.see(m)
        know = player._knowledge(view)
        shown = [(me + 2) % 4] if sighted == 1 else [(me + 1) % 4, (me + 3) % 4]
        hidden = [s for s in range(4) if s != me and s not in shown]
        differs = 0
        for _ in range(20):
            hands = view_sample(view, know, rng)
            assert hands[me] == m.hands[me]
            for s in shown:
                assert hands[s] == m.hands[s]
            for s in hidden:
                assert hands[s].bit_count() == m.hands[s].bit_count()
                differs += hands[s] != m.hands[s]
            assert sum(h.bit_count() for h in hands) == sum(h.bit_count() for h in m.hands)
        if sighted == 1:
            assert differs  # the opponents' cards are still guessed


@pytest.mark.parametrize("sighted", [3, 4, 5])
def test_shown_some_of_the_partners_cards_the_others_hold_the_rest_of_them(sighted: int) -> None:
    """3: its aces, kings and queens; 4: its trumps; 5: its aces."""
    rng = random.Random(5)
    for seed, plays in [(21, 3), (22, 11), (23, 18), (24, 26)]:
        m = _mid_hand(seed, plays)
        me = m.turn
        partner, opponents = (me + 2) % 4, [(me + 1) % 4, (me + 3) % 4]
        view = m.view(me)
        player = make_player("hard-sighted", seed=1, time_budget=0.05)
        player.sighted = sighted
        player.see(m)
        among = {3: HONOURS, 4: SUIT_MASKS[int(m.trump)], 5: ACES}[sighted]
        know = player._knowledge(view)
        differs = 0
        for _ in range(20):
            hands = view_sample(view, know, rng)
            assert hands[me] == m.hands[me]
            assert hands[partner] & among == m.hands[partner] & among
            theirs = (m.hands[opponents[0]] | m.hands[opponents[1]]) & among
            assert (hands[opponents[0]] | hands[opponents[1]]) & among == theirs
            for s in range(4):
                assert hands[s].bit_count() == m.hands[s].bit_count()
            differs += hands[partner] != m.hands[partner]
        assert differs  # the partner's other cards are still guessed


@pytest.mark.parametrize("sighted", [6, 7])
def test_shown_the_partners_lengths_its_suits_are_dealt_to_them(sighted: int) -> None:
    """6: every suit's length; 7: only which suits it holds at most one card of
    (and how many), so the others hold two or more."""
    rng = random.Random(6)
    varied = 0
    for seed, plays in [(31, 3), (32, 11), (33, 18), (34, 26)]:
        m = _mid_hand(seed, plays)
        me = m.turn
        partner = (me + 2) % 4
        view = m.view(me)
        player = make_player("hard-sighted", seed=1, time_budget=0.05)
        player.sighted = sighted
        player.see(m)
        know = player._knowledge(view)
        differs = 0
        for _ in range(20):
            hands = view_sample(view, know, rng)
            assert hands[me] == m.hands[me]
            for u in range(4):
                suit = SUIT_MASKS[u]
                k = (hands[partner] & suit).bit_count()
                real = (m.hands[partner] & suit).bit_count()
                if sighted == 6 or real <= 1:
                    assert k == real
                else:
                    assert k >= 2
                    varied += k != real
            for s in range(4):
                assert hands[s].bit_count() == m.hands[s].bit_count()
            assert (hands[0] | hands[1] | hands[2] | hands[3]).bit_count() == sum(
                h.bit_count() for h in hands
            )  # no card in two hands
            differs += hands[partner] != m.hands[partner]
        assert differs  # which cards of each suit is still guessed
    # with 7 the lengths of the longer suits are guessed
    assert (varied > 0) is (sighted == 7)


@pytest.mark.parametrize("sighted", [8, 9])
def test_shown_the_lengths_of_the_suits_the_partner_has_played_only(sighted: int) -> None:
    """8, 9: as 6, 7 for the suits the partner has played a card of, as a perfect
    count signal would tell them; the others are guessed."""
    rng = random.Random(7)
    guessed = told = 0
    for seed, plays in [(41, 3), (42, 7), (43, 11), (44, 18)]:
        m = _mid_hand(seed, plays)
        me = m.turn
        partner = (me + 2) % 4
        view = m.view(me)
        played = _suits_played(view, partner)
        player = make_player("hard-sighted", seed=1, time_budget=0.05)
        player.sighted = sighted
        player.see(m)
        know = player._knowledge(view)
        for _ in range(20):
            hands = view_sample(view, know, rng)
            for u in range(4):
                k = (hands[partner] & SUIT_MASKS[u]).bit_count()
                real = (m.hands[partner] & SUIT_MASKS[u]).bit_count()
                if u not in played:
                    guessed += k != real
                elif sighted == 8 or real <= 1:
                    assert k == real
                    told += 1
                else:
                    assert k >= 2
    assert told and guessed


def test_shown_the_partners_cards_of_the_suits_it_has_played() -> None:
    rng = random.Random(8)
    guessed = 0
    for seed, plays in [(51, 3), (52, 7), (53, 11), (54, 18)]:
        m = _mid_hand(seed, plays)
        me = m.turn
        partner = (me + 2) % 4
        view = m.view(me)
        played = _suits_played(view, partner)
        player = make_player("hard-sighted", seed=1, time_budget=0.05)
        player.sighted = 10
        player.see(m)
        know = player._knowledge(view)
        for _ in range(20):
            hands = view_sample(view, know, rng)
            for u in range(4):
                mine, real = hands[partner] & SUIT_MASKS[u], m.hands[partner] & SUIT_MASKS[u]
                if u in played:
                    assert mine == real
                else:
                    guessed += mine != real
    assert guessed


def test_unshown_it_samples_as_hard_does() -> None:
    m = _mid_hand(15, 10)
    view = m.view(m.turn)
    sighted = make_player("hard-sighted", seed=1, time_budget=0.05)
    hard = make_player("hard", seed=1, time_budget=0.05)
    a = view_sample(view, sighted._knowledge(view), random.Random(9))
    b = view_sample(view, hard._knowledge(view), random.Random(9))
    assert a == b
