"""Inference from plays: a sampled deal that explains every play by the rules keeps
its weight; each play the rules would not have made costs the seat's factor."""

from __future__ import annotations

import random

import pytest

from core.cards import SUIT_MASKS, mask_of
from core.match import Match
from core.players import make_player
from core.players.inference import Plays, play_likelihood
from core.players.knowledge import Knowledge
from core.players.policies import CORRECTED, yardstick_card
from core.players.rules import PlayState, rule_card
from core.players.search import settled, view_sample
from core.trick import winning_index
from core.variant import Variant

from .helpers import played


def _rule_game(seed: int, plays: int, level: str = "normal0") -> Match:
    p = make_player(level, seed=seed)
    if level == "normal":
        p.samples = 0  # its corrected rules alone: the policy CORRECTED models
    return played(Variant.four(), seed, plays, p)


@pytest.mark.parametrize("seed", range(6))
def test_real_deal_of_rule_players_keeps_full_weight(seed: int) -> None:
    m = _rule_game(seed, 5 + 4 * seed)
    view = m.view(m.turn)
    assert play_likelihood(view, list(m.hands), (0.3, 0.3, 0.3, 0.3)) == 1.0


def test_the_model_of_play_is_a_parameter() -> None:
    """Deals played by normal's corrected rules: the real deal keeps its full weight
    when the corrected rules are the model, and not always when the plain rules are."""
    plain = []
    for seed in range(12):
        m = _rule_game(200 + seed, 30, level="normal")
        view = m.view(m.turn)
        f = (0.3, 0.3, 0.3, 0.3)
        assert play_likelihood(view, list(m.hands), f, CORRECTED.card) == 1.0
        plain.append(play_likelihood(view, list(m.hands), f))
    assert min(plain) < 1.0


def test_the_yardstick_model_explains_every_play_of_the_yardstick() -> None:
    """The diagnostic model (``inference_policy=2``) is the yardstick itself: deals
    played by four yardsticks keep their full weight under it, at every point of the
    hand (its leads read the tricks before), and not always under the rules."""
    plain = []
    for seed in range(10):
        m = _rule_game(300 + seed, 8 + 3 * seed, level="yardstick")
        view = m.view(m.turn)
        f = (0.3, 0.3, 0.3, 0.3)
        assert play_likelihood(view, list(m.hands), f, yardstick_card) == 1.0
        plain.append(play_likelihood(view, list(m.hands), f))
    assert min(plain) < 1.0


def test_surprising_plays_lower_the_weight_and_only_by_the_seats_factor() -> None:
    rng = random.Random(7)
    lowered = 0
    for seed in range(10):
        m = _rule_game(100 + seed, 22)
        me = m.turn
        view = m.view(me)
        know = Knowledge(view)
        for _ in range(20):
            hands = view_sample(view, know, rng)
            w = play_likelihood(view, hands, (0.5, 0.5, 0.5, 0.5))
            assert 0.0 < w <= 1.0
            # Every factor is 0.5: the weight is a power of 0.5.
            k = round(-__import__("math").log2(w))
            assert w == 0.5**k
            lowered += w < 1.0
            # No inference about a seat with factor 1; our own plays never count.
            mine_only = tuple(0.5 if s == me else 1.0 for s in range(4))
            assert play_likelihood(view, hands, mine_only) == 1.0
    assert lowered > 50  # random deals rarely explain every play


def test_weight_depends_only_on_the_sampled_hands() -> None:
    """The real cards of the other seats are never read: two matches with the same
    public history and the same own hand give the same weight to the same sample."""
    m = _rule_game(3, 13)
    me = m.turn
    view = m.view(me)
    twin = m.copy()
    others = [s for s in range(4) if s != me]
    # Swap two other seats' same-suit holdings in the twin (public history unchanged).
    a, b = others[0], others[1]
    for suit in range(4):
        sa, sb = m.hands[a] & SUIT_MASKS[suit], m.hands[b] & SUIT_MASKS[suit]
        if sa.bit_count() == sb.bit_count() and sa != sb:
            twin.hands[a] = twin.hands[a] & ~sa | sb
            twin.hands[b] = twin.hands[b] & ~sb | sa
            break
    sample = view_sample(view, Knowledge(view), random.Random(1))
    f = (0.3, 0.3, 0.3, 0.3)
    assert play_likelihood(view, sample, f) == play_likelihood(twin.view(me), sample, f)


def test_settled_when_one_card_is_clearly_best_or_all_agree() -> None:
    clear = [(1.0, {1: 1.0, 2: -1.0}) for _ in range(10)]
    assert settled(clear, {1: 10.0, 2: -10.0})
    same = [(1.0, {1: 1.0, 2: 1.0}) for _ in range(10)]
    assert settled(same, {1: 10.0, 2: 10.0})
    noisy = [(1.0, {1: 1.0 if i % 2 else -1.0, 2: -1.0 if i % 2 else 1.0}) for i in range(10)]
    noisy.append((1.0, {1: 1.0, 2: -1.0}))
    assert not settled(noisy, {1: 1.0, 2: -1.0})
    few = [(1.0, {1: 1.0, 2: -1.0}) for _ in range(3)]
    assert not settled(few, {1: 3.0, 2: -3.0})


def test_settled_with_a_margin_when_the_others_edge_is_small() -> None:
    """A card that differs from the leader on one deal in thirty-two, by a trick's
    tie-break (0.01), keeps the plain test unsettled; with a margin of 0.05 it is
    settled, and a real contest (the other card ahead by a point on one deal in
    four) is not."""
    rare = [(1.0, {1: 1.0, 2: 1.0}) for _ in range(31)]
    rare.append((1.0, {1: 1.01, 2: 1.0}))
    totals = {c: sum(r[c] for _, r in rare) for c in (1, 2)}
    assert not settled(rare, totals)
    assert settled(rare, totals, margin=0.05)
    close = [(1.0, {1: 1.0, 2: 1.0}) for _ in range(24)]
    close += [(1.0, {1: 1.0, 2: -1.0}) for _ in range(5)]
    close += [(1.0, {1: -1.0, 2: 1.0}) for _ in range(3)]
    totals = {c: sum(r[c] for _, r in close) for c in (1, 2)}
    assert totals[1] > totals[2]
    assert not settled(close, totals, margin=0.05)


def _small_game(n: int, seed: int, plays: int) -> Match:
    """A 2- or 3-player hand played by normal (the plain rules there) up to a
    decision ``plays`` cards into the play."""
    variant = Variant.three() if n == 3 else Variant.two()
    return played(variant, seed, plays, make_player("normal", seed=seed))


@pytest.mark.parametrize("seed", range(6))
def test_three_players_real_deal_of_normal_keeps_full_weight(seed: int) -> None:
    m = _small_game(3, 300 + seed, 3 + 3 * seed)
    view = m.view(m.turn)
    assert play_likelihood(view, list(m.hands), (0.3, 0.3, 0.3)) == 1.0


def test_two_players_our_discards_count_as_unseen() -> None:
    """2 players: the opponent saw the stock but not our discards; with them passed
    as hidden the real deal of normal keeps its full weight on almost every
    decision (one card neither seat has seen is the rest), and random deals lose
    weight."""
    full = lowered = 0
    rng = random.Random(5)
    for seed in range(20):
        m = _small_game(2, 400 + seed, 2 + seed % 12)
        me = m.turn
        view = m.view(me)
        know = Knowledge(view)
        hidden = mask_of(view.discards) & ~know.played
        full += play_likelihood(view, list(m.hands), (0.3, 0.3), hidden=hidden) == 1.0
        for _ in range(10):
            w = play_likelihood(view, view_sample(view, know, rng), (0.3, 0.3), hidden=hidden)
            assert 0.0 < w <= 1.0
            lowered += w < 1.0
    assert full >= 17
    assert lowered > 50


def _replayed_likelihood(view, hands, surprise, start=0, hidden=0) -> float:
    """The weight by its definition, replaying the hand play by play for this one
    deal: every other seat's play with a choice is put to the rules."""
    trump = int(view.trump)
    plays = [p for t in view.tricks for p in t.plays] + list(view.trick)
    held = list(hands)
    for s, c in plays:
        held[s] |= 1 << c
    live = hidden
    for h in held:
        live |= h
    n = len(hands)
    voids, won, trick, weight = [0] * n, [0] * n, [], 1.0
    for index, (s, c) in enumerate(plays):
        h = held[s]
        led = trick[0][1] // 13 if trick else -1
        legal = (h & SUIT_MASKS[led] or h) if trick else h
        if index >= start and s != view.seat and surprise[s] < 1.0 and legal & (legal - 1):
            st = PlayState(
                n=n,
                seat=s,
                hand=h,
                legal=legal,
                trick=tuple(trick),
                trump=trump,
                unseen=live & ~h,
                voids=list(voids),
                tricks_won=tuple(won),
                hakem=view.hakem,
            )
            chosen = rule_card(st)
            between = ((1 << max(c, chosen)) - 1) & ~((2 << min(c, chosen)) - 1)
            if chosen // 13 != c // 13 or between & live & ~h:
                weight *= surprise[s]
        if led >= 0 and c // 13 != led:
            voids[s] |= 1 << led
        trick.append((s, c))
        held[s] = h & ~(1 << c)
        live &= ~(1 << c)
        if len(trick) == n:
            won[trick[winning_index([x for _, x in trick], trump)][0]] += 1
            trick = []
    return weight


@pytest.mark.parametrize("players", [4, 3, 2])
def test_weights_of_many_deals_at_once_match_the_replay_of_each(players: int) -> None:
    """:class:`Plays` replays the hand once for every deal and skips the plays where
    every legal card is the same choice: the weights are still exactly those of
    replaying each deal. Each seat's factor is a different prime's inverse, so equal
    weights mean the same surprising plays by the same seats."""
    rng = random.Random(11 + players)
    factors = (1 / 2, 1 / 3, 1 / 5, 1 / 7)[:players]
    lowered = 0
    for seed in range(8):
        m = (
            _rule_game(500 + seed, 7 + 4 * seed)
            if players == 4
            else _small_game(players, 500 + seed, 2 + 3 * seed % 11)
        )
        view = m.view(m.turn)
        know = Knowledge(view)
        hidden = mask_of(view.discards) & ~know.played if players == 2 else 0
        plays = Plays(view, factors, rule_card, hidden)
        n_plays = sum(len(t.plays) for t in view.tricks) + len(view.trick)
        for _ in range(15):
            hands = view_sample(view, know, rng)
            start = rng.randrange(n_plays + 1)
            for s in (0, start):
                want = _replayed_likelihood(view, hands, factors, s, hidden)
                assert plays.likelihood(hands, s) == want
                assert play_likelihood(view, hands, factors, rule_card, s, hidden) == want
                lowered += want < 1.0
    assert lowered > 40  # the deals were judged, not all waved through
