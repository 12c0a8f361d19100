"""The hard player: sampling respects what the seat knows, actions are legal, the
time budget holds, and it never depends on cards it cannot see."""

from __future__ import annotations

import random
import time

import pytest

from core.actions import PlayCard
from core.cards import SUIT_MASKS, mask_of
from core.match import Match, Phase
from core.players import make_player
from core.players.clock import Clock
from core.players.hard import HardPlayer
from core.players.knowledge import Knowledge, deck_mask
from core.players.search import distinct_cards, view_sample
from core.variant import Variant

VARIANTS = [Variant.four(), Variant.three(), Variant.two(), Variant.bidding()]


def _random_position(v: Variant, seed: int, plays: int) -> Match:
    """Random legal play to ``plays`` cards into the first hand."""
    rng = random.Random(seed)
    m, _ = Match.new(v, seed)
    p = make_player("normal0", seed=seed)
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, p.act(m.view(m.turn)))
    for _ in range(plays):
        hand_no = m.hand_no
        m.play(m.turn, rng.choice(m.legal_cards(m.turn)))
        if m.hand_no != hand_no or m.phase is not Phase.PLAY:
            break
    return m


@pytest.mark.parametrize("v", VARIANTS, ids=lambda v: f"{v.players}{v.kind}")
def test_samples_respect_knowledge(v: Variant) -> None:
    rng = random.Random(0)
    checked = 0
    for seed in range(30):
        m = _random_position(v, seed, rng.randrange(0, 30))
        if m.phase is not Phase.PLAY or m.hand_no != 1:
            continue
        me = m.turn
        view = m.view(me)
        know = Knowledge(view)
        played = view.played
        own = mask_of(view.hand)
        own_discards = mask_of(view.discards)
        for _ in range(20):
            hands = view_sample(view, know, rng)
            assert hands[me] == own
            seen = 0
            for s, h in enumerate(hands):
                assert h.bit_count() == view.hand_sizes[s]
                assert not h & seen
                seen |= h
                assert h & ~deck_mask(view) == 0
                if s == me:
                    continue
                assert not h & played
                assert not h & own
                assert not h & own_discards
                for suit in range(4):
                    if know.voids[s] >> suit & 1:
                        assert not h & SUIT_MASKS[suit]
        # The real hidden hands are one of the consistent deals: voids hold there too.
        for s in range(v.players):
            for suit in range(4):
                if know.voids[s] >> suit & 1:
                    assert not m.hands[s] & SUIT_MASKS[suit]
        checked += 1
    assert checked >= 10


def test_decision_does_not_depend_on_hidden_cards() -> None:
    """Swap cards between two hidden hands (same view for us): same decision."""
    for seed in range(6):
        m = _random_position(Variant.four(), seed, 9)
        me = m.turn
        a, b = (me + 1) % 4, (me + 2) % 4
        ha, hb = m.hands[a], m.hands[b]
        swapped = None
        for suit in range(4):
            ca, cb = ha & SUIT_MASKS[suit], hb & SUIT_MASKS[suit]
            if ca and cb:
                x, y = ca & -ca, cb & -cb
                swapped = m.copy()
                swapped.hands[a] = ha ^ x ^ y
                swapped.hands[b] = hb ^ x ^ y
                break
        if swapped is None:
            continue
        assert swapped.view(me) == m.view(me)
        choices = []
        for match in (m, swapped):
            p = HardPlayer(seed=5, time_budget=10.0)
            p.max_samples = 4
            choices.append(p.act(match.view(me)))
        assert choices[0] == choices[1]


@pytest.mark.parametrize("v", VARIANTS, ids=lambda v: f"{v.players}{v.kind}")
def test_always_legal(v: Variant) -> None:
    decisions = 0
    for seed in range(3):
        m, _ = Match.new(v, seed + 100)
        players = [make_player("hard", seed=s, time_budget=0.01) for s in range(v.players)]
        rng = random.Random(seed)
        while not m.is_over and m.hand_no <= 2:
            view = m.view(m.turn)
            if view.phase is Phase.PLAY and rng.random() < 0.5:
                action = PlayCard(rng.choice(m.legal_cards(m.turn)))  # move on faster
            else:
                action = players[m.turn].act(view)
                assert action in view.legal
                decisions += 1
            m.apply(m.turn, action)
    assert decisions > 20


def test_time_budget() -> None:
    m, _ = Match.new(Variant.four(), seed=42)
    p = make_player("hard", seed=1, time_budget=0.2)
    worst = 0.0
    for _ in range(10):  # trump choice and the first tricks: the slowest decisions
        view = m.view(m.turn)
        t0 = time.perf_counter()
        action = p.act(view)
        worst = max(worst, time.perf_counter() - t0)
        m.apply(m.turn, action)
    assert worst < 0.8


def test_thread_safe_in_worker_threads() -> None:
    """Two hard players deciding at once in worker threads (as the bot does with
    asyncio.to_thread): DDS calls are serialised and results stay legal."""
    import asyncio

    positions = [_random_position(Variant.four(), seed, 5) for seed in (1, 2, 3, 4)]

    async def decide_all() -> list:
        players = [make_player("hard", seed=i, time_budget=0.1) for i in range(4)]
        return await asyncio.gather(
            *(
                asyncio.to_thread(p.act, m.view(m.turn))
                for p, m in zip(players, positions, strict=True)
            )
        )

    actions = asyncio.run(decide_all())
    for a, m in zip(actions, positions, strict=True):
        assert a in m.view(m.turn).legal


@pytest.mark.parametrize("n", [3, 2])
def test_inference_for_few_players_is_blind_and_legal(n: int) -> None:
    """2 and 3 players with inference on (``surprise_2p``, ``surprise_3p``): legal, reproducible,
    and the same decision when cards move between piles the seat cannot see (two
    other hands with 3 players; the opponent's hand and its discards with 2)."""
    v = Variant.three() if n == 3 else Variant.two()
    compared = 0
    for seed in range(12):
        m, _ = Match.new(v, 500 + seed)
        p = make_player("normal", seed=seed)
        while m.phase is not Phase.PLAY:
            m.apply(m.turn, p.act(m.view(m.turn)))
        for _ in range(3 + seed):
            m.apply(m.turn, p.act(m.view(m.turn)))
        if m.phase is not Phase.PLAY or m.hand_no != 1:
            continue
        me = m.turn
        others = [s for s in range(n) if s != me]
        a = others[0]
        ha = m.hands[a]
        hb = m.hands[others[1]] if n == 3 else m.discards[a]
        swapped = None
        for suit in range(4):
            ca, cb = ha & SUIT_MASKS[suit], hb & SUIT_MASKS[suit]
            if ca and cb:
                x, y = ca & -ca, cb & -cb
                swapped = m.copy()
                swapped.hands[a] = ha ^ x ^ y
                if n == 3:
                    swapped.hands[others[1]] = hb ^ x ^ y
                else:
                    swapped.discards[a] = hb ^ x ^ y
                break
        if swapped is None:
            continue
        assert swapped.view(me) == m.view(me)
        choices = []
        for match in (m, m, swapped):
            hp = HardPlayer(seed=5, time_budget=10.0)
            hp.surprise_2p = hp.surprise_3p = 0.1
            hp.max_samples = 6
            choice = hp.act(match.view(me))
            assert choice in match.view(me).legal
            choices.append(choice)
        assert choices[0] == choices[1] == choices[2]
        compared += 1
    assert compared >= 4


def test_leads_by_the_rules_when_lead_search_is_off() -> None:
    """``search_leads`` off (a measurement baseline, benchmarks/dd_errors.py): every
    lead after the opening one is the rule card, and the other cards are searched."""
    from core.players.rules import rule_card, state_from_view

    m, _ = Match.new(Variant.four(), seed=7)
    p = make_player("hard", seed=1, time_budget=0.05)
    assert isinstance(p, HardPlayer)
    p.search_leads = False
    normal = make_player("normal0", seed=2)
    leads = 0
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, normal.act(m.view(m.turn)))
    hand = m.hand_no
    while m.hand_no == hand and m.phase is Phase.PLAY:
        view = m.view(m.turn)
        if m.turn % 2 == 0:
            action = p.act(view)
            if view.tricks and not view.trick:
                assert action == PlayCard(rule_card(state_from_view(view)))
                leads += 1
        else:
            action = normal.act(view)
        m.apply(m.turn, action)
    assert leads > 0


def test_lead_playouts_off_scores_leads_by_double_dummy_alone(monkeypatch) -> None:
    """``lead_playouts`` off: no rule playout is run while hard leads, and follows
    still blend them in; on (the default), leads run them too."""
    import core.players.dds_search as dds_search

    real = dds_search.playout
    calls: list[bool] = []  # for each playout: was the decision a lead?
    leading = [False]

    def counting(*args, **kwargs):
        calls.append(leading[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(dds_search, "playout", counting)

    def play_hand(lead_playouts: bool) -> None:
        calls.clear()
        m, _ = Match.new(Variant.four(), seed=11)
        # A sample cap, not the clock, ends each search: every decision gets its
        # samples however busy the machine is.
        p = make_player("hard", seed=1, time_budget=10.0)
        assert isinstance(p, HardPlayer)
        p.max_samples = 3
        p.playout_weight = 2.0
        p.lead_playouts = lead_playouts
        normal = make_player("normal0", seed=2)
        while m.phase is not Phase.PLAY:
            m.apply(m.turn, normal.act(m.view(m.turn)))
        hand = m.hand_no
        while m.hand_no == hand and m.phase is Phase.PLAY:
            view = m.view(m.turn)
            leading[0] = not view.trick
            m.apply(m.turn, (p if m.turn % 2 == 0 else normal).act(view))

    play_hand(lead_playouts=False)
    assert False in calls and True not in calls
    play_hand(lead_playouts=True)
    assert True in calls and False in calls


def test_first_trick_and_trump_by_the_rules_ask_the_solver_nothing(monkeypatch) -> None:
    """4 players, ``search_trump_4p`` off and a budget under ``first_trick_budget``:
    the trump and every card of the first trick are the rules', chosen without a
    solve; the second trick is searched."""
    from core.players import dds_search, trump_search
    from core.players.rules import choose_trump_rule, rule_card, state_from_view

    solves = []

    def counted(fn):
        def wrapped(*args, **kwargs):
            solves.append(fn.__name__)
            return fn(*args, **kwargs)

        return wrapped

    for module in (dds_search, trump_search):
        monkeypatch.setattr(module, "dds_cards_reaching", counted(module.dds_cards_reaching))
    monkeypatch.setattr(dds_search, "dds_card_tricks", counted(dds_search.dds_card_tricks))
    trumps = firsts = 0
    for seed in range(6):
        m, _ = Match.new(Variant.four(), seed=40 + seed)
        p = make_player("hard", seed=seed, time_budget=0.05)
        assert isinstance(p, HardPlayer)
        p.first_trick_budget = 0.2
        assert p.time_budget < p.first_trick_budget
        p.search_trump_4p = False
        while m.phase is not Phase.PLAY:
            view = m.view(m.turn)
            before = len(solves)
            action = p.act(view)
            assert action.suit == choose_trump_rule(mask_of(view.hand))  # type: ignore[union-attr]
            assert len(solves) == before
            trumps += 1
            m.apply(m.turn, action)
        while len(m.view(0).tricks) < 2:
            view = m.view(m.turn)
            before = len(solves)
            action = p.act(view)
            if not view.tricks:
                assert action == PlayCard(rule_card(state_from_view(view)))
                assert len(solves) == before
                firsts += 1
            m.apply(m.turn, action)
    assert trumps == 6 and firsts == 24
    assert solves  # the second trick was searched


def test_the_first_trick_is_searched_with_budget_enough(monkeypatch) -> None:
    """``first_trick_budget`` 0 (the default): the first trick's cards are searched
    (solves asked), whatever the budget."""
    from core.players import dds_search

    solves = []
    reaching = dds_search.dds_cards_reaching

    def counted(*args, **kwargs):
        solves.append(1)
        return reaching(*args, **kwargs)

    monkeypatch.setattr(dds_search, "dds_cards_reaching", counted)
    m = _random_position(Variant.four(), 3, 0)
    p = make_player("hard", seed=1, time_budget=0.05)
    assert isinstance(p, HardPlayer)
    p.first_trick_budget = 0.0
    while not m.view(0).tricks:
        m.apply(m.turn, p.act(m.view(m.turn)))
    assert solves


@pytest.mark.parametrize("share", [1.0, 0.5])
def test_follows_search_within_their_share_of_the_budget(monkeypatch, share: float) -> None:
    """``follow_share``: a card that follows a lead is searched against that share of
    the decision's budget, from the decision's start; a lead against all of it."""
    from core.players.dds_search import DdsSearch

    budgets: dict[bool, set[float]] = {True: set(), False: set()}  # leading? -> budgets seen
    scores = DdsSearch.scores

    def seen(self, view, know, cards, clock, rng):
        budgets[not view.trick].add(round(clock.budget, 9))
        return scores(self, view, know, cards, clock, rng)

    monkeypatch.setattr(DdsSearch, "scores", seen)
    m, _ = Match.new(Variant.four(), seed=21)
    p = make_player("hard", seed=1, time_budget=0.04)
    assert isinstance(p, HardPlayer)
    p.follow_share = share
    while m.phase is not Phase.OVER and m.hand_no == 1 and len(m.view(0).tricks) < 4:
        m.apply(m.turn, p.act(m.view(m.turn)))
    assert budgets[True] == {0.04}
    assert budgets[False] == {round(0.04 * share, 9)}


def _samples_searched(view, **settings) -> int:
    """How many deals a hard player with ``settings`` scores for ``view`` (fresh
    deals, at most 200; the clock never ends the search)."""
    p = make_player("hard", seed=1, time_budget=100.0)
    assert isinstance(p, HardPlayer)
    p.reuse_deals, p.max_samples = 0, 200
    for name, value in settings.items():
        setattr(p, name, value)
    know = Knowledge(view)
    cards = distinct_cards([a.card for a in view.legal], know)
    out = p.dds_search.scores(view, know, cards, Clock(100.0), random.Random(5))
    assert out is not None
    return out[1]


def test_leads_settle_by_their_own_margin() -> None:
    """``lead_settle_margin`` decides when a lead's search may stop early, and
    ``settle_margin`` when a follow's may (a sample cap, not the clock, ends each)."""
    m, _ = Match.new(Variant.four(), seed=23)
    normal = make_player("normal", seed=2)
    views = {}  # leading? -> a view of the third trick
    while len(views) < 2:
        view = m.view(m.turn)
        if len(view.tricks) == 2 and len(view.legal) > 1:
            views.setdefault(not view.trick, view)
        m.apply(m.turn, normal.act(view))

    def samples(view, lead_margin: float) -> int:
        return _samples_searched(view, settle_margin=100.0, lead_settle_margin=lead_margin)

    # A margin above any card's worth settles a search at its first check.
    assert samples(views[True], 100.0) < samples(views[True], 0.0)
    assert samples(views[False], 100.0) == samples(views[False], 0.0)


def test_the_first_two_tricks_settle_after_their_own_count_of_samples() -> None:
    """``settle_samples_first`` is the samples before a search may settle in the
    first two tricks, ``settle_samples`` from the third on."""
    m, _ = Match.new(Variant.four(), seed=29)
    normal = make_player("normal", seed=3)
    views = {}  # tricks complete -> a follow's view
    while len(views) < 2:
        view = m.view(m.turn)
        if len(view.tricks) in (0, 2) and view.trick and len(view.legal) > 1:
            views.setdefault(len(view.tricks), view)
        m.apply(m.turn, normal.act(view))

    def samples(view, first: int) -> int:
        # settled at the first check that has 8 samples' worth of weight
        return _samples_searched(
            view, settle_margin=100.0, settle_samples=8, settle_samples_first=first
        )

    assert samples(views[0], 8) < samples(views[0], 24)
    assert samples(views[2], 8) == samples(views[2], 24) < 24
