"""The deal pool kept between decisions (core/players/particles.py): its deals agree
with everything the seat has seen, a kept deal is reweighed by the new plays only,
and the hard player that uses it stays legal, reproducible and blind to hidden cards."""

from __future__ import annotations

import random
import time

import pytest

from core.cards import SUIT_MASKS
from core.match import Match, Phase
from core.players import make_player
from core.players.hard import HardPlayer
from core.players.inference import play_likelihood
from core.players.knowledge import Knowledge
from core.players.particles import DealPool, hand_key, repair
from core.players.policies import policy
from core.players.search import view_sample
from core.variant import Variant

SURPRISE = (0.5, 0.5, 0.5, 0.5)


def _game(seed: int) -> Match:
    m, _ = Match.new(Variant.four(), seed)
    p = make_player("normal0", seed=seed)
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, p.act(m.view(m.turn)))
    return m


def _step(m: Match, rng: random.Random) -> None:
    m.play(m.turn, rng.choice(m.legal_cards(m.turn)))


def _played_by(view) -> list[int]:
    out = [0, 0, 0, 0]
    for t in view.tricks:
        for s, c in t.plays:
            out[s] |= 1 << c
    for s, c in view.trick:
        out[s] |= 1 << c
    return out


def _assert_agrees(hands: list[int], view, know: Knowledge) -> None:
    """``hands`` (what each seat holds now) could be the real deal, for this view."""
    me = know.seat
    assert hands[me] == know.hand
    seen = 0
    for s, h in enumerate(hands):
        assert h.bit_count() == view.hand_sizes[s]
        assert not h & seen
        seen |= h
        if s != me:
            assert not h & ~know.unseen
            for suit in range(4):
                if know.voids[s] >> suit & 1:
                    assert not h & SUIT_MASKS[suit]
    assert seen == know.unseen | know.hand


@pytest.mark.parametrize("seed", range(8))
def test_repair_makes_an_old_deal_agree_with_the_new_plays(seed: int) -> None:
    rng = random.Random(seed)
    m = _game(300 + seed)
    for _ in range(rng.randrange(1, 6)):
        _step(m, rng)
    me = m.turn
    view = m.view(me)
    old = view_sample(view, Knowledge(view), rng)
    old = [h | p for h, p in zip(old, _played_by(view), strict=True)]
    for _ in range(rng.randrange(4, 20)):
        _step(m, rng)
        if m.turn is None or m.phase is not Phase.PLAY or m.hand_no != 1:
            return
    while m.turn != me:
        _step(m, rng)
        if m.turn is None or m.phase is not Phase.PLAY or m.hand_no != 1:
            return
    view = m.view(me)
    know = Knowledge(view)
    played = _played_by(view)
    fixed = repair(old, played, know.voids, me, rng)
    if fixed is None:
        return
    assert fixed[me] == old[me]  # our own cards never move
    assert sum(h.bit_count() for h in fixed) == 52
    for s in range(4):
        assert fixed[s].bit_count() == 13
        assert played[s] & ~fixed[s] == 0
    _assert_agrees([h & ~p for h, p in zip(fixed, played, strict=True)], view, know)


def test_pool_deals_agree_with_the_view_all_hand_long() -> None:
    rng = random.Random(1)
    checked = 0
    for seed in range(4):
        m = _game(400 + seed)
        me = m.turn
        pool = DealPool(24)
        while m.phase is Phase.PLAY and m.hand_no == 1:
            if m.turn == me and (m.trick or m.tricks):
                view = m.view(me)
                know = Knowledge(view)
                pool.update(view, know, rng, SURPRISE, policy(0))
                assert 1 <= len(pool) <= 24
                for i in range(len(pool)):
                    _assert_agrees(pool.hands(i), view, know)
                assert 0 <= pool.draw(rng) < len(pool)
                checked += 1
            _step(m, rng)
    assert checked >= 20
    assert pool.repaired > 0 and pool.kept > 0


def test_a_kept_deal_is_reweighed_by_the_new_plays_only() -> None:
    """``start``: the plays before it are not judged, so the weight is the full one
    without their factors; judging none leaves 1."""
    rng = random.Random(2)
    lowered = 0
    for seed in range(6):
        m = _game(500 + seed)
        for _ in range(18):
            _step(m, rng)
        view = m.view(m.turn)
        know = Knowledge(view)
        n_plays = sum(len(t.plays) for t in view.tricks) + len(view.trick)
        for _ in range(10):
            hands = view_sample(view, know, rng)
            full = play_likelihood(view, hands, SURPRISE)
            part = play_likelihood(view, hands, SURPRISE, start=9)
            assert play_likelihood(view, hands, SURPRISE, start=n_plays) == 1.0
            assert full <= part <= 1.0
            early = full / part  # the factors of the first 9 plays: a power of 0.5
            k = round(-__import__("math").log2(early))
            assert early == pytest.approx(0.5**k)
            lowered += part < 1.0
    assert lowered > 10


def _hard(seed: int, **settings) -> HardPlayer:
    p = HardPlayer(seed=seed, time_budget=10.0)
    p.max_samples = 6
    p.settle_samples = 1000
    p.playout_weight = 0.0
    p.reuse_deals = 24
    for k, v in settings.items():
        setattr(p, k, v)
    return p


def test_hard_with_a_pool_is_legal_and_reproducible() -> None:
    for seed in range(2):
        m = _game(600 + seed)
        players = [_hard(seed), make_player("normal0", seed=1), _hard(seed + 7)]
        players.append(make_player("normal0", seed=2))
        twin = _hard(seed)
        while m.phase is Phase.PLAY and m.hand_no == 1:
            view = m.view(m.turn)
            action = players[m.turn].act(view)
            assert action in view.legal
            if m.turn == 0:
                # A second player that saw the same decisions chooses the same.
                assert twin.act(view) == action
            m.apply(m.turn, action)
        assert _last_pool(players[0]).drawn > 0


def test_pool_decision_does_not_depend_on_hidden_cards() -> None:
    """Swap two hidden cards of the same suit between two other seats before every
    decision of the seat: the same view, so the same choices all hand long."""
    compared = 0
    for seed in range(3):
        m = _game(700 + seed)
        twin = m.copy()
        me = m.turn
        a, b = _hard(3), _hard(3)
        rng = random.Random(seed)
        while m.phase is Phase.PLAY and m.hand_no == 1:
            if m.turn == me:
                x, y = (me + 1) % 4, (me + 2) % 4
                for suit in range(4):
                    cx, cy = twin.hands[x] & SUIT_MASKS[suit], twin.hands[y] & SUIT_MASKS[suit]
                    if cx and cy:
                        bx, by = cx & -cx, cy & -cy
                        twin.hands[x] ^= bx ^ by
                        twin.hands[y] ^= bx ^ by
                        break
                assert twin.view(me) == m.view(me)
                ca, cb = a.act(m.view(me)), b.act(twin.view(me))
                assert ca == cb
                compared += 1
                card = ca.card
            else:
                card = rng.choice(
                    [c for c in m.legal_cards(m.turn) if twin.hands[m.turn] >> c & 1]
                    or m.legal_cards(m.turn)
                )
                if not twin.hands[m.turn] >> card & 1:
                    break  # the swapped twin cannot follow the same play
            m.play(m.turn, card)
            twin.play(twin.turn, card)
    assert compared >= 10


def test_pool_keeps_the_clock() -> None:
    m = _game(42)
    p = make_player("hard", seed=1, time_budget=0.2)
    p.reuse_deals = 128
    worst = 0.0
    rng = random.Random(0)
    decisions = 0
    while m.phase is Phase.PLAY and m.hand_no == 1:
        view = m.view(m.turn)
        if m.turn % 2 == 0:
            t0 = time.perf_counter()
            action = p.act(view) if m.turn == 0 else rng.choice(view.legal)
            worst = max(worst, time.perf_counter() - t0)
            decisions += m.turn == 0
        else:
            action = rng.choice(view.legal)
        m.apply(m.turn, action)
    assert decisions >= 5
    assert worst < 0.8


def _last_pool(player: HardPlayer) -> DealPool:
    """The pool of the hand the player thought about last (``pools`` keeps the
    most recently used last)."""
    return next(reversed(player.dds_search.pools.values()))


def test_one_player_thinking_for_two_seats_keeps_a_pool_for_each() -> None:
    """The bot's worker processes keep one hard player per level for every seat of
    every table: each seat's hand keeps its own deals from one decision to its next,
    instead of the two seats wiping one shared pool in turn."""
    m = _game(650)
    p = _hard(4)
    others = make_player("normal0", seed=3)
    while m.phase is Phase.PLAY and m.hand_no == 1:
        view = m.view(m.turn)
        m.apply(m.turn, (p if m.turn % 2 == 0 else others).act(view))
    assert sorted(key[0] for key in p.dds_search.pools) == [0, 2]
    assert all(pool.kept > 0 for pool in p.dds_search.pools.values())


def test_pools_of_old_hands_are_dropped() -> None:
    """Past ``pools_kept`` hands, the least recently used hands' pools go."""
    p = _hard(5, pools_kept=3)
    normal = make_player("normal0", seed=1)
    keys = []
    for seed in range(5):
        m = _game(660 + seed)
        key = None
        while key not in p.dds_search.pools:  # seat 0 plays until a decision of it uses a pool
            assert m.phase is Phase.PLAY and m.hand_no == 1
            while m.turn != 0:
                m.apply(m.turn, normal.act(m.view(m.turn)))
            view = m.view(0)
            key = hand_key(view, Knowledge(view))
            m.apply(0, p.act(view))
        keys.append(key)
    assert list(p.dds_search.pools) == keys[-3:]


@pytest.mark.parametrize("pool_leads", [True, False])
def test_leads_draw_fresh_deals_when_the_pool_is_for_follows(monkeypatch, pool_leads) -> None:
    """``pool_leads`` off: a lead neither reads nor updates the pool (it draws fresh
    candidate deals); the follows keep using it."""
    updated: list[bool] = []  # for each pool update: was the decision a lead?
    update = DealPool.update

    def noted(pool, view, *args, **kwargs):
        updated.append(not view.trick)
        return update(pool, view, *args, **kwargs)

    monkeypatch.setattr(DealPool, "update", noted)
    m = _game(670)
    p = _hard(6, pool_leads=pool_leads)
    others = make_player("normal0", seed=3)
    while m.phase is Phase.PLAY and m.hand_no == 1:
        view = m.view(m.turn)
        m.apply(m.turn, (p if m.turn % 2 == 0 else others).act(view))
    assert False in updated
    assert (True in updated) == pool_leads
