"""The finished hand a review needs, rebuilt from the stored state before the move
that ended it (telegram_bot.service.hands): the engine has dealt the next hand by then."""

from __future__ import annotations

import random

import pytest

from core import CardPlayed, ChooseTrump, HandEnded, Match, Suit, TrumpChosen, Variant
from telegram_bot.service import hands


@pytest.mark.parametrize("seed", range(4))
def test_a_finished_hand_is_rebuilt_from_the_state_before_its_last_move(seed):
    """Moves one at a time (people), and a whole hand as one move from the trump call
    on (computers playing for an away hakem): the deal and plays seen live."""
    rng = random.Random(seed)
    match = Match(Variant(), seed=seed)
    match.start()
    live: dict[int, hands.FinishedHand] = {}
    hand_start, pending = None, []  # the state before the trump call, and events since
    checked = 0
    while not match.is_over:
        before = match.to_json()
        seat = match.turn
        events = match.apply(seat, rng.choice(match.legal_actions(seat)))
        if any(isinstance(e, TrumpChosen) for e in events):
            hand_start, pending = before, []
            live[match.hand_no] = hands.FinishedHand(
                match.hand_no, match.trump, tuple(match.hands), ()
            )
        pending += events
        for e in events:
            if isinstance(e, CardPlayed):
                h = live[max(live)]
                live[h.hand_no] = hands.FinishedHand(
                    h.hand_no, h.trump, h.deal, (*h.plays, (e.seat, int(e.card)))
                )
        ended = [e for e in events if isinstance(e, HandEnded)]
        if not ended:
            assert hands.finished_hand(before, events) is None
            continue
        expected = live[ended[0].hand_no]
        assert len(expected.plays) >= 28 and len(expected.plays) % 4 == 0
        assert hands.finished_hand(before, events) == expected
        assert hands.finished_hand(hand_start, pending) == expected
        checked += 1
    assert checked == len(match.history) > 0


def test_only_four_player_hokm_is_kept():
    for variant in (Variant(players=3), Variant(players=2), Variant.bidding()):
        match = Match(variant, seed=1)
        match.start()
        assert not hands.reviewable(match)
    match = Match(Variant(), seed=1)
    match.start()
    assert hands.reviewable(match)
    before = match.to_json()
    events = match.apply(match.turn, ChooseTrump(Suit.HEARTS))
    assert hands.finished_hand(before, events) is None
