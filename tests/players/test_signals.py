"""The partnership's discard signal (``signal_discards``): a discard comes from the
longest side suit holding its ace or king; hard signals only among cards its search finds
equally good, and reads its partner's discards so; with ``signal_counts``, a count
signal when following suit too."""

from __future__ import annotations

from core.cards import SUIT_MASKS, mask_of, parse_card
from core.players import make_player
from core.players.hard import HardPlayer
from core.players.knowledge import Knowledge
from core.players.rules import PlayState, rule_card, state_from_view
from core.players.runs import same_choice
from core.players.signals import sequence_card, signal_discard, signal_follow, signalling_model
from core.variant import Variant

from .helpers import played

S, H, D, C = 0, 1, 2, 3


def _m(*cards: str) -> int:
    return mask_of(parse_card(c) for c in cards)


def test_the_longest_side_suit_with_ace_or_king_its_lowest_card() -> None:
    hand = _m("A♥", "4♥", "K♦", "9♦", "3♦", "7♣", "2♣", "5♠")
    # spades led and held: it follows, no signal
    assert signal_discard(hand, _m("5♠"), S, trump=C) is None
    hand = _m("A♥", "4♥", "K♦", "9♦", "3♦", "7♣", "2♣")
    # spades led, void: diamonds (K, three cards) are longer than hearts (A, two)
    assert signal_discard(hand, hand, S, trump=C) == parse_card("3♦")
    # diamonds trump: hearts
    assert signal_discard(hand, hand, S, trump=D) == parse_card("4♥")
    # no side suit with an ace or king and a lower card: no signal
    hand = _m("A♥", "Q♦", "3♦", "7♣")
    assert signal_discard(hand, hand, S, trump=C) is None


def _state(seat: int, hand: int, trick, trump: int) -> PlayState:
    led = trick[0][1] // 13
    legal = hand & SUIT_MASKS[led] or hand
    return PlayState(
        n=4,
        seat=seat,
        hand=hand,
        legal=legal,
        trick=trick,
        trump=trump,
        unseen=((1 << 52) - 1) & ~hand,
        voids=[0, 0, 0, 0],
        tricks_won=[0, 0, 0, 0],
        hakem=0,
    )


def test_the_model_reads_the_partners_discards_only() -> None:
    hand = _m("A♥", "4♥", "Q♦", "9♦", "3♦", "8♣", "7♣")
    trick = ((1, parse_card("K♠")),)
    model = signalling_model(rule_card, partner=2)
    for seat in (2, 3):
        st = _state(seat, hand, trick, trump=S)
        ruled = rule_card(st)
        if seat == 2:
            assert model(st) == parse_card("4♥")  # hearts: the ace's suit
            assert ruled != model(st)  # the rules would have thrown another card
        else:
            assert model(st) == ruled
    # following suit: the rules' card
    st = _state(2, hand | _m("2♠"), trick, trump=H)
    assert model(st) == rule_card(st) == parse_card("2♠")


def _equal_scores(monkeypatch) -> None:
    """Every card scored the same: the search stubbed, so only the tie-break acts."""
    from core.players.dds_search import DdsSearch

    monkeypatch.setattr(
        DdsSearch,
        "scores",
        lambda self, view, know, cards, clock, rng: (dict.fromkeys(cards, 0.0), 8),
    )


def _views(seeds: range):
    """Each view to play in the first hand of each seeded deal, played by the rules."""
    for seed in seeds:
        rules = make_player("normal0", seed=seed)
        m = played(Variant.four(), seed, 0, rules)
        hand = m.hand_no
        while m.hand_no == hand:
            view = m.view(m.turn)
            yield view
            m.apply(m.turn, rules.act(view))


def test_hard_signals_when_its_search_finds_the_cards_equal(monkeypatch) -> None:
    """Every card scored the same (the search stubbed): a hard player that cannot
    follow throws the signal's card; with the setting off, the rules' card."""
    _equal_scores(monkeypatch)
    signalled = 0
    for view in _views(range(700, 712)):
        legal = mask_of(a.card for a in view.legal)
        signal = None
        if view.trick:
            signal = signal_discard(mask_of(view.hand), legal, view.trick[0][1] // 13, view.trump)
        if signal is not None and legal & (legal - 1):
            on, off = HardPlayer(seed=1, time_budget=30.0), HardPlayer(seed=1, time_budget=30.0)
            on.signal_discards = True
            assert on.act(view).card == signal
            ruled = rule_card(state_from_view(view))
            assert off.act(view).card == ruled
            signalled += 1
    assert signalled >= 3


def test_the_search_reads_the_partners_discards_by_the_signal(monkeypatch) -> None:
    import core.players.dds_search as dds_search

    read_for = []

    def spy(model, partner, counts, discards):
        read_for.append((partner, counts, discards))
        return signalling_model(model, partner, counts, discards)

    monkeypatch.setattr(dds_search, "signalling_model", spy)
    m = played(Variant.four(), 720, 8, make_player("normal0", seed=1))  # two tricks
    assert len(m.tricks) == 2
    view = m.view(m.turn)
    for on, counts in ((False, 0), (True, 0), (True, 1), (False, 2)):
        p = HardPlayer(seed=1, time_budget=30.0)
        p.max_samples, p.signal_discards, p.signal_counts = 4, on, counts
        p.act(view)
    partner = (m.turn + 2) % 4
    assert read_for == [(partner, 0, True), (partner, 1, True), (partner, 2, False)]


def test_the_count_signal_high_from_even_low_from_odd() -> None:
    trick = ((0, parse_card("A♦")),)
    even = _m("9♦", "5♦", "3♦", "2♦", "K♣")
    assert signal_follow(even, even & SUIT_MASKS[D], trick, trump=S) == parse_card("9♦")
    odd = _m("9♦", "5♦", "3♦", "K♣")
    assert signal_follow(odd, odd & SUIT_MASKS[D], trick, trump=S) == parse_card("3♦")
    # the cards that would win the trick are not signalled with
    trick = ((0, parse_card("6♦")),)
    assert signal_follow(even, even & SUIT_MASKS[D], trick, trump=S) == parse_card("5♦")
    # one losing card: nothing to choose; cannot follow: no count signal
    assert signal_follow(_m("9♦", "2♦"), _m("9♦", "2♦"), trick, trump=S) is None
    assert signal_follow(_m("K♣", "2♣"), _m("K♣", "2♣"), trick, trump=S) is None


def test_the_short_count_signal_high_from_a_doubleton_low_from_more() -> None:
    trick = ((0, parse_card("A♦")),)
    doubleton = _m("9♦", "3♦", "K♣")
    assert signal_follow(doubleton, doubleton & SUIT_MASKS[D], trick, S, 2) == parse_card("9♦")
    for more in (_m("9♦", "5♦", "3♦"), _m("9♦", "5♦", "3♦", "2♦", "K♣")):
        assert (
            signal_follow(more, more & SUIT_MASKS[D], trick, S, 2)
            == (more & -more).bit_length() - 1
        )
    # parity would have played the 9 from four
    four = _m("9♦", "5♦", "3♦", "2♦")
    assert signal_follow(four, four, trick, S, 1) == parse_card("9♦")
    # a doubleton with a card that would win: one losing card, no signal
    trick = ((0, parse_card("6♦")),)
    assert signal_follow(doubleton, doubleton & SUIT_MASKS[D], trick, S, 2) is None


def test_the_count_read_without_the_discard_signal() -> None:
    hand = _m("9♦", "3♦", "K♣")
    st = _state(2, hand, ((1, parse_card("A♦")),), trump=S)
    assert signalling_model(rule_card, partner=2, counts=2, discards=False)(st) == parse_card("9♦")
    st = _state(2, _m("9♣", "2♣", "K♥", "3♥"), ((1, parse_card("A♦")),), trump=S)
    # cannot follow: the discard signal (the 3 of hearts, under the king) read
    # only when it is on
    assert signalling_model(rule_card, 2, counts=2)(st) == parse_card("3♥")
    assert rule_card(st) != parse_card("3♥")
    assert signalling_model(rule_card, 2, counts=2, discards=False)(st) == rule_card(st)


def test_the_model_reads_the_partners_count_only_when_asked() -> None:
    hand = _m("9♦", "5♦", "3♦", "2♦", "K♣")
    trick = ((1, parse_card("A♦")),)
    st = _state(2, hand, trick, trump=S)
    assert signalling_model(rule_card, partner=2, counts=True)(st) == parse_card("9♦")
    assert signalling_model(rule_card, partner=2)(st) == rule_card(st)
    assert signalling_model(rule_card, partner=3, counts=True)(st) == rule_card(st)


def test_hard_gives_the_count_when_its_search_finds_the_cards_equal(monkeypatch) -> None:
    _equal_scores(monkeypatch)
    given = 0
    for view in _views(range(730, 740)):
        if not view.trick:
            continue
        legal = mask_of(a.card for a in view.legal)
        signal = signal_follow(mask_of(view.hand), legal, view.trick, view.trump)
        if signal is not None:
            p = HardPlayer(seed=1, time_budget=30.0)
            p.signal_discards = p.signal_counts = True
            card = p.act(view).card
            # the signal, or a card of its run (the same choice to any reader)
            know = Knowledge(view)
            assert same_choice(card, signal, know.hand, know.unseen | know.hand)
            given += card == signal
    assert given >= 5


def test_the_signal_may_give_up_no_more_than_the_tolerance(monkeypatch) -> None:
    """The signal's suit scored a little below the others: signalled with a
    tolerance above the gap, not with one below it."""
    from core.players.dds_search import DdsSearch

    gap = 0.03
    signal_of: dict[int, int] = {}

    def scores(self, view, know, cards, clock, rng):
        signal = signal_of.get(id(view))
        return {
            c: -gap if signal is not None and c // 13 == signal // 13 else 0.0 for c in cards
        }, 8

    monkeypatch.setattr(DdsSearch, "scores", scores)
    checked = 0
    for view in _views(range(700, 712)):
        if not view.trick:
            continue
        legal = mask_of(a.card for a in view.legal)
        signal = signal_discard(mask_of(view.hand), legal, view.trick[0][1] // 13, view.trump)
        if signal is None or not legal & ~SUIT_MASKS[signal // 13]:
            continue  # no signal, or nothing but its suit to throw
        signal_of[id(view)] = signal
        for tolerance, signals in ((gap + 0.01, True), (gap - 0.01, False), (0.0, False)):
            p = HardPlayer(seed=1, time_budget=30.0)
            p.signal_discards, p.signal_tolerance = True, tolerance
            assert (p.act(view).card == signal) is signals
        checked += 1
    assert checked >= 3


def test_a_run_is_led_from_the_top_and_followed_from_the_bottom() -> None:
    hand = _m("K♠", "Q♠", "9♠", "7♠", "4♥")
    unseen = ((1 << 52) - 1) & ~hand & ~_m("8♠")  # the 8 of spades is played
    for card in ("K♠", "Q♠"):
        assert sequence_card(parse_card(card), hand, unseen, leading=True) == parse_card("K♠")
        assert sequence_card(parse_card(card), hand, unseen, leading=False) == parse_card("Q♠")
    # 9 and 7 are one run once the 8 is played; the jack and ten split it from K Q
    assert sequence_card(parse_card("7♠"), hand, unseen, leading=True) == parse_card("9♠")
    assert sequence_card(parse_card("9♠"), hand, unseen, leading=False) == parse_card("7♠")
    assert sequence_card(parse_card("4♥"), hand, unseen, leading=True) == parse_card("4♥")


def test_hard_plays_a_run_by_the_sequence_signal(monkeypatch) -> None:
    """Every card scored the same: with ``sequence_signals`` the card played is the
    top of its run when leading and the bottom when following."""
    _equal_scores(monkeypatch)
    checked = 0
    for view in _views(range(730, 736)):
        legal = [a.card for a in view.legal]
        if len(legal) < 2:
            continue
        know = Knowledge(view)
        on = HardPlayer(seed=1, time_budget=30.0)
        on.sequence_signals = True
        card = on.act(view).card
        assert sequence_card(card, know.hand, know.unseen, not view.trick) == card
        checked += 1
    assert checked >= 20


def test_the_inference_reads_the_partners_run_by_the_signal() -> None:
    """The partner led the lower of two touching cards: a deal where it also holds
    the higher one breaks the signal and weighs less, only with the signal read;
    a deal where another seat holds it does not."""
    from core.players.inference import Plays
    from core.players.signals import SequenceModel

    for seed in range(740, 760):
        m = played(Variant.four(), seed, 0, make_player("normal0", seed=1))
        leader = m.turn
        hand = mask_of(m.view(leader).hand)
        # the partner leads the lower of two touching cards of a suit
        runs = [c for c in range(52) if c % 13 != 12 and hand >> c & 1 and hand >> (c + 1) & 1]
        if runs:
            break
    me = (leader + 2) % 4
    low = runs[0]
    m.apply(leader, next(a for a in m.view(leader).legal if a.card == low))
    view = m.view(me)
    surprise = tuple(1.0 if s == me else 0.5 for s in range(4))
    real = [mask_of(m.view(s).hand) if s != me else mask_of(view.hand) for s in range(4)]

    def model(st: PlayState) -> int:  # the lead the model expects is the one made
        return low if st.legal >> low & 1 else rule_card(st)

    plain = Plays(view, surprise, model)
    read = Plays(view, surprise, SequenceModel(model, leader, 0.5))
    # in the real deal the partner still holds the card above the one it led
    assert real[leader] >> (low + 1) & 1
    assert plain.likelihood(real) == 1.0
    assert read.likelihood(real) == 0.5
    # a deal where the card above is with another seat keeps the lead unsurprising
    holder = next(s for s in range(4) if s not in (leader, me))
    moved = list(real)
    moved[leader] &= ~(1 << (low + 1))
    moved[holder] |= 1 << (low + 1)
    others = moved[holder] & ~SUIT_MASKS[low // 13]
    spare = others & -others  # a card back, so each hand keeps its size
    assert spare
    moved[holder] &= ~spare
    moved[leader] |= spare
    assert read.likelihood(moved) == 1.0


def test_the_count_read_apart_weighs_a_deal_whose_partner_breaks_it() -> None:
    """The partner follows low from a doubleton under an opponent's lead: with
    the doubleton count (style 2) read apart, that deal weighs ``count_surprise``;
    a deal giving it a third, higher card of the suit (low from three keeps the
    signal) weighs 1; the model's other reading is unchanged."""
    from core.players.inference import Plays
    from core.players.signals import CountModel

    for seed in range(760, 900):
        m = played(Variant.four(), seed, 0, make_player("normal0", seed=1))
        leader = m.turn
        lead = max(m.view(leader).hand, key=lambda c: c % 13)
        partner = (leader + 1) % 4
        suit = mask_of(m.view(partner).hand) & SUIT_MASKS[lead // 13]
        low = (suit & -suit).bit_length() - 1
        # two cards of the suit, both under the lead and not touching
        if suit.bit_count() == 2 and low + 1 < suit.bit_length() - 1 < lead:
            break
    m.apply(leader, next(a for a in m.view(leader).legal if a.card == lead))
    m.apply(partner, next(a for a in m.view(partner).legal if a.card == low))
    me = (partner + 2) % 4
    view = m.view(me)
    real = [mask_of(m.view(s).hand) for s in range(4)]
    surprise = tuple(1.0 if s == me else 0.5 for s in range(4))
    plays = {leader: lead, partner: low}

    def model(st: PlayState) -> int:  # the model expects the plays made
        return plays[st.seat]

    assert Plays(view, surprise, model).likelihood(real) == 1.0
    read = Plays(view, surprise, CountModel(model, partner, 2, 0.25))
    assert read.likelihood(real) == 0.25
    # a third card of the suit, above the one played, from a seat that holds one
    higher = [
        c for c in range(low + 1, 13 * (low // 13 + 1)) if not (real[partner] | 1 << lead) >> c & 1
    ]
    holder = next(s for s in range(4) if s not in (partner, leader) and real[s] & (1 << higher[0]))
    moved = list(real)
    moved[holder] &= ~(1 << higher[0])
    moved[partner] |= 1 << higher[0]
    spare = moved[partner] & ~SUIT_MASKS[low // 13]
    spare &= -spare
    moved[partner] &= ~spare
    moved[holder] |= spare
    assert read.likelihood(moved) == 1.0
