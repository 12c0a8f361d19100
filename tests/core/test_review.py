"""The hand review: double-dummy par and the plays that cost tricks."""

from __future__ import annotations

import random

import pytest

from core.cards import Suit, mask_of, parse_card
from core.review import review_hand

pytest.importorskip("endplay")


def _hands(*texts: str) -> list[int]:
    return [mask_of(parse_card(t) for t in text.split()) for text in texts]


def _plays(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.split():
        seat, card = item.split(":")
        out.append((int(seat), parse_card(card)))
    return out


def test_a_lead_that_gives_away_both_tricks() -> None:
    # Seat 0 holds A♥ 2♥: the ace first takes both tricks; the two first loses
    # to seat 1's king, and seat 1 then cashes its club.
    deal = _hands("AH 2H", "KH 3C", "3H 4C", "QH 5C")
    plays = _plays("0:2H 1:KH 2:3H 3:QH 1:3C 2:4C 3:5C 0:AH")
    r = review_hand(deal, Suit.SPADES, plays)
    assert r.par == (2, 0)
    assert r.taken == (0, 2)
    assert len(r.costly) == 1
    p = r.costly[0]
    assert (p.trick, p.seat, str(p.played), str(p.best), p.lost) == (1, 0, "2♥", "A♥", 2)
    assert r.costly_plays(0) == (p,) and r.costly_plays(1) == ()
    assert r.tricks_lost(0) == 2


def test_a_ruff_missed() -> None:
    # Hearts led; seat 1 is void and can ruff with its trump 2♠ (spades trump), then
    # cash its club: both tricks. It throws the club instead, and only gets the
    # second trick by ruffing the king of diamonds.
    deal = _hands("AH KD", "2S 3C", "2H 4D", "3H AD")
    plays = _plays("0:AH 1:3C 2:2H 3:3H")
    r = review_hand(deal, Suit.SPADES, plays)
    assert r.par == (0, 2)
    assert r.taken == (1, 0)  # the hand stops here: only the plays given are reviewed
    assert [(p.seat, str(p.played), str(p.best), p.lost) for p in r.costly] == [(1, "3♣", "2♠", 1)]


def test_perfect_play_costs_nothing() -> None:
    deal = _hands("AH 2H", "KH 3C", "3H 4C", "QH 5C")
    r = review_hand(deal, Suit.SPADES, _plays("0:AH 1:KH 2:3H 3:QH 0:2H 1:3C 2:4C 3:5C"))
    assert r.costly == ()
    assert r.taken == r.par == (2, 0)


@pytest.mark.parametrize("seed", [1, 2])
def test_tricks_taken_are_par_minus_own_losses_plus_the_others(seed: int) -> None:
    """Played to the end at random, every trick one side's play gives away is one
    the other side gains, double dummy: taken = par - own losses + the others'."""
    rng = random.Random(seed)
    cards = list(range(52))
    rng.shuffle(cards)
    deal = [mask_of(cards[13 * s : 13 * s + 13]) for s in range(4)]
    trump = rng.randrange(4)
    hands = list(deal)
    plays = []
    leader = rng.randrange(4)
    from core.trick import trick_winner

    for _ in range(13):
        trick: list[tuple[int, int]] = []
        for i in range(4):
            seat = (leader + i) % 4
            h = hands[seat]
            options = [c for c in range(52) if h >> c & 1]
            if trick:
                follow = [c for c in options if c // 13 == trick[0][1] // 13]
                options = follow or options
            c = rng.choice(options)
            hands[seat] &= ~(1 << c)
            trick.append((seat, c))
        plays += trick
        leader = trick_winner(trick, trump)
    r = review_hand(deal, trump, plays)
    assert sum(r.par) == 13 and sum(r.taken) == 13
    assert r.costly  # random play makes mistakes
    for side in (0, 1):
        assert r.taken[side] == r.par[side] - r.tricks_lost(side) + r.tricks_lost(1 - side)


def test_plays_that_do_not_fit_the_deal_are_refused() -> None:
    deal = _hands("AH 2H", "KH 3C", "3H 4C", "QH 5C")
    with pytest.raises(ValueError, match="follow suit"):
        review_hand(deal, Suit.SPADES, _plays("0:AH 1:3C"))
    with pytest.raises(ValueError, match="out of turn"):
        review_hand(deal, Suit.SPADES, _plays("0:AH 2:3H"))
    with pytest.raises(ValueError, match="not in"):
        review_hand(deal, Suit.SPADES, _plays("0:KH"))
