"""``Match.push`` (unchecked, for searches) does exactly what ``apply`` does for a
legal card."""

import random

import pytest

from core import Match, PlayCard, Variant


@pytest.mark.parametrize(
    "variant", [Variant.four(), Variant.three(), Variant.two(), Variant.bidding()]
)
def test_push_matches_apply_for_legal_cards(variant: Variant) -> None:
    rng = random.Random(3)
    checked, _ = Match.new(variant, seed=11)
    fast, _ = Match.new(variant, seed=11)
    pushes = 0
    while not checked.is_over and checked.hand_no <= 3:
        seat = checked.turn
        action = rng.choice(checked.legal_actions(seat))
        events = checked.apply(seat, action)
        if isinstance(action, PlayCard):
            pushed: list = []
            fast.push(action.card, pushed)
            assert pushed == events
            pushes += 1
        else:
            fast.apply(seat, action)
        assert fast.to_json() == checked.to_json()
    assert pushes > 20
