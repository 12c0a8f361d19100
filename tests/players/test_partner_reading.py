"""Reading the partner's plays by double dummy (``partner_dd``): a partner who plays
double dummy never makes the real deal less likely; deals on which its cards would
have thrown the hand away are."""

from __future__ import annotations

import random

from core.match import Match, Phase
from core.players import make_player
from core.players.knowledge import Knowledge
from core.players.partner_reading import PartnerReading
from core.players.search import view_sample
from core.variant import Variant


def _oracle_hand(seed: int, plays: int) -> Match:
    """A hand played so far by four oracles (double dummy on the real deal)."""
    m, _ = Match.new(Variant.four(), seed)
    rules = make_player("normal0", seed=seed)
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, rules.act(m.view(m.turn)))
    oracle = make_player("oracle", seed=seed)
    for _ in range(plays):
        oracle.see(m)
        m.apply(m.turn, oracle.act(m.view(m.turn)))
    return m


def _dealt(hands: list[int], plays: list[tuple[int, int]]) -> list[int]:
    """Each seat's hand as dealt: what it holds now and what it played."""
    out = list(hands)
    for s, c in plays:
        out[s] |= 1 << c
    return out


def test_the_real_deal_keeps_its_weight_and_wrong_ones_lose_it() -> None:
    rng = random.Random(4)
    lowered = 0
    for seed in range(8):
        m = _oracle_hand(500 + seed, 10 + 3 * seed)
        me = m.turn
        view = m.view(me)
        plays = [p for t in view.tricks for p in t.plays] + list(view.trick)
        reading = PartnerReading(0.3)
        key = ("hand", seed)
        trump = int(view.trump)
        assert reading.weight(key, _dealt(list(m.hands), plays), plays, me, trump, None) == 1.0
        know = Knowledge(view)
        for _ in range(6):
            sample = view_sample(view, know, rng)
            f = reading.weight(key, _dealt(sample, plays), plays, me, trump, None)
            assert f in {0.3**k for k in range(8)}
            lowered += f < 1.0
    assert lowered >= 3


def test_a_deal_is_judged_once_per_play() -> None:
    m = _oracle_hand(520, 14)
    me = m.turn
    view = m.view(me)
    plays = [p for t in view.tricks for p in t.plays] + list(view.trick)
    reading = PartnerReading(0.3)
    dealt = _dealt(list(m.hands), plays)
    reading.weight("k", dealt, plays, me, int(view.trump), None)
    solves = reading.solves
    assert solves >= 2
    reading.weight("k", dealt, plays, me, int(view.trump), None)
    assert reading.solves == solves  # nothing new to judge
    reading.weight("other hand", dealt, plays, me, int(view.trump), None)
    assert reading.solves == 2 * solves  # another hand: judged afresh


def test_the_factor_counts_the_partners_plays_that_threw_the_hand_away() -> None:
    """Against the engine's own count of tricks and a full double-dummy count of
    every card (not the yes/no question the reading asks): rule players make such
    plays, and each costs the factor once."""
    from core.players.double_dummy import dds_card_tricks

    thrown_in_all = checked = 0
    for seed in range(16):
        m, _ = Match.new(Variant.four(), 540 + seed)
        p = make_player("normal0", seed=seed)
        while m.phase is not Phase.PLAY:
            m.apply(m.turn, p.act(m.view(m.turn)))
        me = seed % 4
        partner = (me + 2) % 4
        hand = m.hand_no
        plays: list[tuple[int, int]] = []
        thrown = 0
        while len(plays) < 36:
            seat = m.turn
            view = m.view(seat)
            card = p.act(view).card
            if seat == partner and len(view.legal) > 1:
                leader = view.trick[0][0] if view.trick else seat
                tricks = dds_card_tricks(list(m.hands), view.trick, leader, int(m.trump))
                need = 7 - m.tricks_won[seat % 2] - m.tricks_won[seat % 2 + 2]
                keeps = {c for c, t in tricks.items() if t >= need}
                thrown += bool(keeps) and card not in keeps
            plays.append((seat, card))
            m.apply(seat, p.act(view))
            if m.hand_no != hand:
                break
        if m.hand_no != hand:
            continue  # a side reached 7 first: the hands are the next hand's
        checked += 1
        reading = PartnerReading(0.5)
        f = reading.weight("k", _dealt(list(m.hands), plays), plays, me, int(m.trump), None)
        assert f == 0.5**thrown, (seed, f, thrown)
        thrown_in_all += thrown
    assert checked >= 10 and thrown_in_all >= 1, (checked, thrown_in_all)
