"""Helpers for the engine tests.

- Reference implementations of RULES.md written independently of ``core.trick`` and
  ``core.scoring`` (they only use a card's public ``suit`` and ``rank``).
- :func:`build_position`: a match in the middle of a hand, built through
  ``Match.to_dict``/``Match.from_dict``, for worked examples.
- :class:`Sim`: a match played with random legal actions that checks every invariant
  after every action (used by the property tests).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any

from core import (
    CARDS,
    BidMade,
    BlindDeclared,
    Card,
    CardPlayed,
    CardsDealt,
    ChooseTrump,
    Discarded,
    Drew,
    ErrorCode,
    Event,
    Exchanged,
    HakemDrawn,
    HakemRule,
    HandEnded,
    HandKind,
    HandStarted,
    IllegalAction,
    Kind,
    Match,
    MatchEnded,
    Phase,
    PlayCard,
    Rank,
    SeatsArranged,
    SeatView,
    Suit,
    TrickWon,
    TrumpChosen,
    Variant,
    cards_in,
    parse_card,
)

# --------------------------------------------------------------------- basics


def card(text: str) -> Card:
    return parse_card(text)


def cards(text: str) -> list[Card]:
    """``"AS KS 10H"`` -> three cards."""
    return [parse_card(t) for t in text.split()]


def deck_of(variant: Variant) -> set[Card]:
    """The cards a hand of ``variant`` is played with (RULES.md: 51 with 2 or 3
    classic players, the removed 2 missing; otherwise 52)."""
    deck = {Card.of(r, s) for s in Suit for r in Rank}
    if variant.kind is Kind.CLASSIC and variant.players in (2, 3):
        deck.discard(variant.removed_two)
    return deck


_SCALARS = (int, bool, str, float, type(None))
_FIELDS: dict[type, tuple[str, ...]] = {}


def cards_in_obj(obj: Any, out: set[Card] | None = None) -> set[Card]:
    """Every :class:`Card` reachable from ``obj`` (dataclasses, tuples, lists, dicts).

    Raises TypeError on a type it does not know, so a new kind of field is looked at.
    """
    if out is None:
        out = set()
    _walk(obj, out)
    return out


def _walk(obj: Any, out: set[Card]) -> None:
    t = type(obj)
    if t is Card:
        out.add(obj)
    elif t in _SCALARS or isinstance(obj, Enum):
        return
    elif isinstance(obj, tuple | list | set | frozenset):
        for x in obj:
            tx = type(x)
            if tx is Card:
                out.add(x)
            elif tx is not int:
                _walk(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _walk(x, out)
    else:
        names = _FIELDS.get(t)
        if names is None:
            if not dataclasses.is_dataclass(obj):
                raise TypeError(f"cards_in_obj: unexpected {t.__name__}")
            names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(obj))
        for name in names:
            _walk(getattr(obj, name), out)


def view_cards(view: SeatView) -> set[Card]:
    """The cards a view shows of the hand in progress: every field but the face-up
    draw for the first hakem (an earlier, separate deck) and the table settings."""
    out: set[Card] = set()
    for f in dataclasses.fields(view):
        if f.name not in ("first_draw", "variant"):
            _walk(getattr(view, f.name), out)
    return out


def refused(m: Match, seat: Any, action: Any) -> IllegalAction:
    """Apply an action that must be refused; check the match did not change at all."""
    before = m.to_json()
    ply = m.ply
    try:
        m.apply(seat, action)
    except IllegalAction as e:
        assert m.to_json() == before, f"refused {action!r} changed the match"
        assert m.ply == ply
        return e
    raise AssertionError(f"{action!r} by seat {seat} was accepted")


def refused_play(m: Match, seat: int, card_: Any) -> IllegalAction:
    """The same through the hot path :meth:`Match.play`."""
    before = m.to_json()
    try:
        m.play(seat, card_)
    except IllegalAction as e:
        assert m.to_json() == before
        return e
    raise AssertionError(f"play of {card_!r} by seat {seat} was accepted")


# ------------------------------------------------------- reference rule book


def ref_trick_winner(plays: Sequence[tuple[int, Card]], trump: Suit | None) -> int:
    """RULES.md: the highest trump wins; with no trump, the highest card of the led
    suit. Off-suit cards never win."""
    led = plays[0][1].suit
    trumps = [(c.rank, seat) for seat, c in plays if trump is not None and c.suit == trump]
    if trumps:
        return max(trumps)[1]
    return max((c.rank, seat) for seat, c in plays if c.suit == led)[1]


def ref_legal(
    hand: Iterable[Card], trick: Sequence[tuple[int, Card]], bidding: bool, broken: bool
) -> set[Card]:
    """The cards a seat may play (follow suit; bidding: no spade lead until broken)."""
    hand = set(hand)
    if trick:
        led = trick[0][1].suit
        follow = {c for c in hand if c.suit == led}
        return follow or hand
    if bidding and not broken:
        others = {c for c in hand if c.suit != Suit.SPADES}
        return others or hand
    return hand


def ref_side(variant: Variant, seat: int) -> int:
    """Teams are seats {1,3} and {2,4} (0-based: 0,2 and 1,3); otherwise one per seat."""
    if variant.players == 4:
        return 0 if seat in (0, 2) else 1
    return seat


def ref_hand_outcome(
    variant: Variant, tricks: Sequence[int], hakem: int | None
) -> tuple[int, HandKind, tuple[int, ...]] | None:
    """(winning side, kind, points per side) once a classic hand is over, else None."""
    n = variant.players
    sides = 2 if n == 4 else n
    if n == 3:
        played = sum(tricks)
        left = 17 - played
        result: tuple[int, HandKind, int] | None = None
        if played == 7 and 7 in tricks:  # 7-0-0: one player took the first seven
            w = tricks.index(7)
            result = (w, HandKind.KOT, 2) if w == hakem else (w, HandKind.HAKEM_KOT, 3)
        else:
            for s in range(3):
                if all(tricks[o] + left < tricks[s] for o in range(3) if o != s):
                    result = (s, HandKind.NORMAL, 1)
            if result is None and left == 0:
                top = max(tricks)
                tied = [s for s in range(3) if tricks[s] == top]
                assert len(tied) == 2
                (third,) = (s for s in range(3) if s not in tied)
                result = (third, HandKind.NORMAL, 1)
        if result is None:
            return None
        w, kind, p = result
        return w, kind, tuple(p if s == w else 0 for s in range(3))
    by_side = [0] * sides
    for seat, t in enumerate(tricks):
        by_side[ref_side(variant, seat)] += t
    for side in range(sides):
        if by_side[side] >= 7:
            assert by_side[side] == 7
            hakem_side = ref_side(variant, hakem)  # type: ignore[arg-type]
            others = sum(by_side) - by_side[side]
            if others == 0 and side == hakem_side:
                kind, p = HandKind.KOT, 2
            elif others == 0:
                kind, p = HandKind.HAKEM_KOT, 3
            else:
                kind, p = HandKind.NORMAL, 1
            return side, kind, tuple(p if s == side else 0 for s in range(sides))
    return None


def ref_bidding_points(
    bids: Sequence[int], blind: Sequence[bool], tricks: Sequence[int], bags: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    points, new_bags = [], []
    for bid, is_blind, took, carried in zip(bids, blind, tricks, bags, strict=True):
        if bid == 0:
            value = 200 if is_blind else 100
            p = value if took == 0 else -value
        elif took >= bid:
            p = 10 * bid + (took - bid)
            carried += took - bid
        else:
            p = -10 * bid
        p -= 100 * (carried // 10)
        carried %= 10
        points.append(p)
        new_bags.append(carried)
    return tuple(points), tuple(new_bags)


def ref_next_hakem(variant: Variant, hakem: int, winner_side: int) -> int:
    n = variant.players
    if ref_side(variant, hakem) == winner_side:
        return hakem
    if n == 3 and variant.hakem_rule is HakemRule.WINNER:
        return winner_side
    return (hakem + 1) % n


def ref_match_winner(variant: Variant, scores: Sequence[int]) -> int | None:
    over = [s for s in range(len(scores)) if scores[s] >= variant.target]
    if not over:
        return None
    if len(over) == 1:
        return over[0]
    best = max(scores[s] for s in over)
    top = [s for s in over if scores[s] == best]
    return top[0] if len(top) == 1 else None


def card_value(c: Card) -> int:
    return int(c.rank)


# ------------------------------------------------------------------ positions


def build_position(
    variant: Variant,
    *,
    tricks_won: Sequence[int],
    hakem: int | None = 0,
    trump: Suit | None = Suit.SPADES,
    hands: dict[int, Iterable[Card]] | None = None,
    leader: int | None = None,
    trick: Sequence[tuple[int, Card]] = (),
    scores: Sequence[int] | None = None,
    bids: Sequence[int | None] | None = None,
    blind: Sequence[bool] | None = None,
    bags: Sequence[int] | None = None,
    first: int = 0,
    spades_broken: bool = False,
    hand_no: int = 1,
    seed: int = 1,
) -> Match:
    """A match in trick play with ``tricks_won`` already taken this hand.

    ``hands`` fixes some cards of some seats; every hand is filled up to the size the
    trick count implies with other cards, and the already played tricks and (two
    players) the discards and stock take the rest, so every card of the deck is in
    exactly one place.
    """
    n = variant.players
    bidding = variant.kind is Kind.BIDDING
    total = variant.tricks_per_hand
    played = sum(tricks_won)
    trick = [(s, c) for s, c in trick]
    in_trick = {s for s, _ in trick}
    hands = {s: list(cs) for s, cs in (hands or {}).items()}
    pool = sorted(
        deck_of(variant) - {c for cs in hands.values() for c in cs} - {c for _, c in trick}
    )
    full: list[list[Card]] = []
    for seat in range(n):
        size = total - played - (seat in in_trick)
        mine = hands.get(seat, [])
        assert len(mine) <= size, f"seat {seat} can hold only {size} cards"
        need = size - len(mine)
        full.append(mine + pool[:need])
        pool = pool[need:]
    if bidding:
        hakem = None
        trump = Suit.SPADES
    # Completed tricks: winners as tricks_won says; each led by the previous winner.
    winners = [s for s in range(n) for _ in range(tricks_won[s])]
    lead = hakem if not bidding else 1 - first
    records = []
    for w in winners:
        plays = [((lead + i) % n, pool[i].ascii) for i in range(n)]  # type: ignore[operator]
        pool = pool[n:]
        records.append([lead, plays, w])
        lead = w
    if leader is None:
        leader = trick[0][0] if trick else lead
    turn = (trick[-1][0] + 1) % n if trick else leader
    discards: list[list[Card]] = [[] for _ in range(n)]
    stock: list[Card] = []
    pile: list[Card] = []
    if bidding:
        pile = list(pool)
        for i, c in enumerate(pool):
            discards[i % 2].append(c)
    elif n == 2:
        stock = pool[:1]
        for i, c in enumerate(pool[1:]):
            discards[i % 2].append(c)
    else:
        assert not pool
    m = Match(variant, seed)
    m.start()
    d = m.to_dict()
    d.update(
        phase=str(Phase.PLAY),
        hand_no=hand_no,
        hakem=hakem,
        dealer=(1 - first) if bidding else (hakem - 1) % n,  # type: ignore[operator]
        first=first if bidding else None,
        trump=trump.letter if trump is not None else None,
        turn=turn,
        leader=leader,
        hands=[[c.ascii for c in h] for h in full],
        stock=[c.ascii for c in stock],
        discards=[[c.ascii for c in h] for h in discards],
        pile=[c.ascii for c in pile],
        trick=[[s, c.ascii] for s, c in trick],
        tricks=records,
        tricks_won=list(tricks_won),
        scores=list(scores) if scores is not None else [0] * variant.sides,
        card_points=[0] * variant.sides,
        bags=list(bags) if bags is not None else [0] * n,
        bids=list(bids) if bids is not None else [None] * n,
        blind=list(blind) if blind is not None else [False] * n,
        spades_broken=spades_broken,
        winner=None,
    )
    return Match.from_dict(d)


def play_trick(m: Match, lead: Card) -> list[Event]:
    """The seat to move leads ``lead``; the others play their first legal card."""
    events = m.apply(m.turn, PlayCard(lead))  # type: ignore[arg-type]
    while m.phase is Phase.PLAY and m.trick:
        seat = m.turn
        events += m.apply(seat, PlayCard(m.legal_cards(seat)[0]))  # type: ignore[arg-type]
    return events


def of_type(events: Iterable[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def play_random_until(m: Match, rng: random.Random, stop, limit: int = 100_000) -> list[Event]:
    """Random legal actions until ``stop(m)`` holds (checked before each action)."""
    events: list[Event] = []
    for _ in range(limit):
        if stop(m) or m.is_over:
            return events
        seat = m.turn
        events += m.apply(seat, rng.choice(m.legal_actions(seat)))  # type: ignore[arg-type]
    raise AssertionError("stop condition never reached")


# ------------------------------------------------------------------ simulation

_PUBLIC_EVENTS = (HakemDrawn, CardPlayed, TrickWon)


class Sim:
    """One match played with random legal actions, checked after every action.

    ``full`` adds the expensive checks: the views of the seat to move and of a random
    seat or spectator after every action, refused actions (at ``illegal_rate``) with
    the match unchanged, and a JSON fork at step ``fork_at`` (or at the end) that must
    continue with the same events into the same final state.
    """

    def __init__(
        self,
        variant: Variant,
        seed: int | None,
        rng: random.Random,
        *,
        full: bool = True,
        fork_at: int | None = None,
        max_hands: int | None = None,
        illegal_rate: float = 0.05,
    ) -> None:
        self.v = variant
        self.rng = rng
        self.full = full
        self.fork_at = fork_at
        self.max_hands = max_hands
        self.illegal_rate = illegal_rate
        self.n = variant.players
        self.bidding = variant.kind is Kind.BIDDING
        self.deck = deck_of(variant)
        self.deck_mask = sum(1 << c for c in self.deck)
        self.total = variant.tricks_per_hand
        self.steps = 0
        self.twin: Match | None = None
        self.hands_played = 0
        self.scores = [0] * variant.sides
        self.card_points = [0] * variant.sides
        self.bags = [0] * self.n
        self.m, events = Match.new(variant, seed)
        self._check_start(events)

    # ---------------------------------------------------------------- start

    def _new_hand_ref(self) -> None:
        self.broken = False
        self.bids: list[int | None] = [None] * self.n
        self.blind = [False] * self.n
        self.won = [0] * self.n

    def _check_start(self, events: list[Event]) -> None:
        m, n = self.m, self.n
        self._new_hand_ref()
        self.public = set()
        if self.bidding:
            assert events == [HandStarted(1, None, 1 - m.first, m.first)]  # type: ignore[operator]
            self.hakem = None
            self.first = m.first
            self._check_hand_started(events[0])
            return
        drawn = events[0]
        assert isinstance(drawn, HakemDrawn)
        check_first_draw(self.v, drawn)
        self.public = {c for _, c in drawn.draw}
        self.hakem = drawn.hakem
        self.first = None
        rest = events[1:]
        if drawn.partner is not None:
            assert isinstance(rest[0], SeatsArranged)
            assert rest[0].order[(drawn.hakem + 2) % 4] == drawn.partner
            rest = rest[1:]
        assert rest[0] == HandStarted(1, self.hakem, (self.hakem - 1) % n)
        self._check_hand_started(rest[0])
        assert rest[1:] == [CardsDealt(_counts(m))]

    def _check_hand_started(self, e: HandStarted) -> None:
        """The state right after a hand starts (before any action)."""
        m, n = self.m, self.n
        assert m.hand_no == e.hand_no
        if self.bidding:
            assert e.first == self.first and e.dealer == 1 - self.first  # type: ignore[operator]
            assert m.phase is Phase.BLIND and m.turn == 1 - self.first  # type: ignore[operator]
            assert all(h == 0 for h in m.hands) and len(m.stock) == 52
            assert m.trump is Suit.SPADES
        else:
            assert e.hakem == self.hakem and e.dealer == (self.hakem - 1) % n  # type: ignore[operator]
            assert m.phase is Phase.TRUMP and m.turn == self.hakem and m.trump is None
            sizes = [h.bit_count() for h in m.hands]
            if n == 2:
                assert sizes == [5, 5]
            else:  # only the hakem holds cards before trump is chosen
                assert sizes == [5 if s == self.hakem else 0 for s in range(n)]

    # ----------------------------------------------------------------- play

    def run(self) -> Match:
        m = self.m
        while not m.is_over and (self.max_hands is None or self.hands_played < self.max_hands):
            self.step()
        if self.full:
            if self.twin is None:  # the match ended before the fork point: fork at the end
                self._fork()
            assert self.twin is not None
            assert self.twin.to_json() == m.to_json()
            for s in [None, *range(self.n)]:
                assert self.twin.view(s) == m.view(s)
            if m.is_over:
                assert refused(m, 0, ChooseTrump(Suit.SPADES)).code is ErrorCode.MATCH_OVER
                assert refused(m, 0, PlayCard(CARDS[0])).code is ErrorCode.MATCH_OVER
        return m

    def _fork(self) -> None:
        text = self.m.to_json()
        self.twin = Match.from_json(text)
        assert self.twin.to_json() == text
        assert self.twin.to_dict() == self.m.to_dict()

    def step(self) -> None:
        m, rng, n = self.m, self.rng, self.n
        if self.full and self.twin is None and self.steps == self.fork_at:
            self._fork()
        seat = m.turn
        assert seat is not None
        phase = m.phase
        legal = m.legal_actions(seat)
        assert legal
        for other in range(n):
            if other != seat:
                assert m.legal_actions(other) == [] and m.legal_cards(other) == ()
        if phase is Phase.PLAY:
            allowed = ref_legal(m.hand_of(seat), m.trick, self.bidding, self.broken)
            assert set(m.legal_cards(seat)) == allowed
            assert {a.card for a in legal} == allowed and len(legal) == len(allowed)
            action: Any = PlayCard(rng.choice(sorted(allowed)))
        else:
            action = rng.choice(legal)
        if self.full and rng.random() < self.illegal_rate:
            self._try_illegal(seat, action)
        pre = _Snapshot(m)
        events = m.apply(seat, action)
        if self.twin is not None:
            assert self.twin.apply(seat, action) == events
        self._check_events(seat, action, events, pre)
        self._check_structure()
        if self.full:
            self._check_views()
        self.steps += 1

    def _try_illegal(self, seat: int, action: Any) -> None:
        m, n, rng = self.m, self.n, self.rng
        others = [s for s in range(n) if s != seat]
        other = rng.choice(others)
        assert refused(m, other, action).code is ErrorCode.NOT_YOUR_TURN
        if m.phase is Phase.PLAY:
            # Another seat playing one of its own cards: not its turn.
            own = m.hand_of(other)
            if own:
                assert refused(m, other, PlayCard(own[0])).code is ErrorCode.NOT_YOUR_TURN
            hand = m.hand_of(seat)
            allowed = set(m.legal_cards(seat))
            bad = [c for c in hand if c not in allowed]
            if bad:
                e = refused(m, seat, PlayCard(rng.choice(bad)))
                if m.trick:
                    assert e.code is ErrorCode.MUST_FOLLOW_SUIT
                    assert e.info["led_suit"] == m.trick[0][1].suit
                else:
                    assert self.bidding and not self.broken
                    assert e.code is ErrorCode.SPADES_NOT_BROKEN
            foreign = [c for c in self.deck if not m.hands[seat] >> c & 1]
            e = refused(m, seat, PlayCard(rng.choice(foreign)))
            assert e.code is ErrorCode.CARD_NOT_IN_HAND
            assert refused(m, seat, ChooseTrump(Suit.HEARTS)).code is ErrorCode.WRONG_PHASE
        else:
            assert refused(m, seat, PlayCard(CARDS[0])).code is ErrorCode.WRONG_PHASE

    # --------------------------------------------------------------- events

    def _check_events(self, seat: int, action: Any, events: list[Event], pre: _Snapshot) -> None:
        m, n = self.m, self.n
        assert events
        # Events only ever show public cards: the face-up hakem draw and played cards.
        played_now = {action.card} if isinstance(action, PlayCard) else set()
        for e in events:
            found = cards_in_obj(e)
            if found:
                assert isinstance(e, _PUBLIC_EVENTS), e
                assert not isinstance(e, HakemDrawn)
                assert found <= self.public | set(pre.trick_cards) | played_now, e
        phase = pre.phase
        if phase is Phase.TRUMP:
            assert seat == self.hakem
            assert events[0] == TrumpChosen(seat, action.suit)
            assert m.trump == action.suit
            if n == 2:
                assert events[1:] == [] and m.phase is Phase.DISCARD and m.turn == seat
            else:
                assert events[1:] == [CardsDealt((self.total,) * n)]
                assert m.phase is Phase.PLAY and m.turn == m.leader == self.hakem
                assert not m.stock
        elif phase is Phase.DISCARD:
            assert events == [Discarded(seat, 2)]
            picked = set(action.cards)
            assert len(picked) == 2 and picked <= pre.hands[seat]
            assert set(m.hand_of(seat)) == pre.hands[seat] - picked
            if pre.discard_counts[1 - seat] == 0:
                assert seat == self.hakem and m.phase is Phase.DISCARD and m.turn == 1 - seat
            else:
                assert m.phase is Phase.DRAW and m.turn == self.hakem
        elif phase is Phase.DRAW:
            top, nxt = pre.stock[0], pre.stock[1]
            kept, dropped = (top, nxt) if action.keep else (nxt, top)
            assert set(m.hand_of(seat)) == pre.hands[seat] | {kept}
            assert m.discards[seat] >> dropped & 1
            assert m.stock == pre.stock[2:]
            if self.bidding:
                assert m.pile[-1] == dropped
            assert events[0] == Drew(seat, len(pre.stock) - 2)
            sizes = [h.bit_count() for h in m.hands]
            if sizes == [13, 13]:
                assert events[1] == CardsDealt((13, 13))
                if self.bidding:
                    assert not m.stock and len(m.pile) == 26
                    self._after_bidding_draw(events[2:])
                else:
                    assert len(m.stock) == 1 and events[2:] == []
                    assert m.phase is Phase.PLAY and m.turn == m.leader == self.hakem
            else:
                assert events[1:] == [] and m.turn == 1 - seat and m.phase is Phase.DRAW
        elif phase is Phase.BLIND:
            assert events == [BlindDeclared(seat, action.blind)]
            self.blind[seat] = action.blind
            if action.blind:
                self.bids[seat] = 0
            if seat == 1 - self.first:  # the second player declares first
                assert m.phase is Phase.BLIND and m.turn == self.first
            else:
                assert seat == self.first
                assert m.phase is Phase.DRAW and m.turn == self.first
        elif phase is Phase.EXCHANGE:
            given = set(action.cards)
            assert self.blind[seat] and len(given) <= 3
            assert events == [Exchanged(seat, len(given))]
            now = set(m.hand_of(seat))
            assert len(now) == 13 and not now & given
            assert now - pre.hands[seat] <= pre.pile
            assert given <= set(m.pile) and len(m.pile) == 26
            if seat == 1 - self.first and self.blind[self.first]:  # type: ignore[index]
                assert m.phase is Phase.EXCHANGE and m.turn == self.first
            else:
                self._expect_bidding_or_play()
        elif phase is Phase.BID:
            assert events == [BidMade(seat, action.tricks, False)]
            assert self.bids[seat] is None
            self.bids[seat] = action.tricks
            self._expect_bidding_or_play()
        elif phase is Phase.PLAY:
            self._check_play_events(seat, action.card, events, pre)
        else:  # pragma: no cover
            raise AssertionError(phase)

    def _after_bidding_draw(self, rest: list[Event]) -> None:
        m = self.m
        assert rest == []
        blinds = [s for s in (1 - self.first, self.first) if self.blind[s]]  # type: ignore[operator]
        if blinds:
            assert m.phase is Phase.EXCHANGE and m.turn == blinds[0]
        else:
            self._expect_bidding_or_play()

    def _expect_bidding_or_play(self) -> None:
        m = self.m
        second = 1 - self.first  # type: ignore[operator]
        waiting = [s for s in (second, self.first) if self.bids[s] is None]
        if waiting:
            assert m.phase is Phase.BID and m.turn == waiting[0]
        else:
            assert m.phase is Phase.PLAY and m.turn == m.leader == second
            assert tuple(m.bids) == tuple(self.bids)

    def _check_play_events(self, seat: int, c: Card, events: list[Event], pre: _Snapshot) -> None:
        m, n, v = self.m, self.n, self.v
        assert events[0] == CardPlayed(seat, c)
        if len(pre.trick) < n - 1 or len(events) == 2:
            assert set(m.hand_of(seat)) == pre.hands[seat] - {c}
        if len(pre.trick) < n - 1:
            assert events[1:] == []
            assert m.turn == (seat + 1) % n and m.trick == [*pre.trick, (seat, c)]
            return
        plays = (*pre.trick, (seat, c))
        assert [s for s, _ in plays] == [(plays[0][0] + i) % n for i in range(n)]
        winner = ref_trick_winner(plays, pre.trump)
        self.won[winner] += 1
        trick_no = pre.tricks_done + 1
        assert events[1] == TrickWon(winner, plays, trick_no, tuple(self.won))
        led_spade = plays[0][1].suit == Suit.SPADES
        if self.bidding and not led_spade and any(x.suit == Suit.SPADES for _, x in plays):
            self.broken = True  # a spade was played on another suit
        if v.card_points:
            self.card_points[ref_side(v, winner)] += sum(card_value(x) for _, x in plays)
        self.public |= {x for _, x in plays}
        outcome = self._outcome(trick_no)
        if outcome is None:
            assert events[2:] == []
            assert m.phase is Phase.PLAY and m.turn == m.leader == winner and not m.trick
            assert m.spades_broken == self.broken
            assert list(m.card_points) == self.card_points
            return
        side, kind, points = outcome
        for s, p in enumerate(points):
            self.scores[s] += p
        ended = events[2]
        assert ended == HandEnded(
            pre.hand_no, side, kind, points, tuple(self.won), tuple(self.scores), pre.hakem
        ), (ended, outcome)
        assert list(m.scores) == self.scores
        assert list(m.card_points) == self.card_points
        self.hands_played += 1
        champion = ref_match_winner(v, self.scores)
        if champion is not None:
            assert events[3:] == [MatchEnded(champion, tuple(self.scores))]
            assert m.phase is Phase.OVER and m.winner == champion and m.turn is None
            return
        assert m.phase is not Phase.OVER and m.winner is None
        if self.bidding:
            self.first = 1 - self.first  # type: ignore[operator]
        else:
            self.hakem = ref_next_hakem(v, self.hakem, side)  # type: ignore[arg-type]
        started = events[3]
        assert isinstance(started, HandStarted)
        if self.bidding:
            assert started == HandStarted(pre.hand_no + 1, None, 1 - self.first, self.first)
            assert events[4:] == []
        else:
            assert started == HandStarted(pre.hand_no + 1, self.hakem, (self.hakem - 1) % n)
            assert events[4:] == [CardsDealt(_counts(m))]
        self._check_hand_started(started)
        self._new_hand_ref()
        self.public = {c for _, c in m.first_draw}

    def _outcome(self, trick_no: int) -> tuple[int, HandKind, tuple[int, ...]] | None:
        v = self.v
        if self.bidding:
            if trick_no < 13:
                return None
            points, bags = ref_bidding_points(self.bids, self.blind, self.won, self.bags)  # type: ignore[arg-type]
            self.bags = list(bags)
            winner = max(range(2), key=lambda s: points[s]) if points[0] != points[1] else None
            assert list(self.m.bags) == self.bags
            return winner, HandKind.NORMAL, points  # type: ignore[return-value]
        return ref_hand_outcome(v, self.won, self.hakem)

    # ------------------------------------------------------------ structure

    def _check_structure(self) -> None:
        m, n = self.m, self.n
        if m.is_over:
            return
        parts = [*m.hands, mask_of_list(m.stock)]
        parts.append(mask_of_list(m.pile) if self.bidding else _or(m.discards))
        parts.append(mask_of_list(c for _, c in m.trick))
        parts.extend(mask_of_list(c for _, c in t.plays) for t in m.tricks)
        union = _or(parts)
        # Every card of the variant's deck is in exactly one place.
        assert union == self.deck_mask
        assert sum(p.bit_count() for p in parts) == len(self.deck)
        assert len(m.stock) == len(set(m.stock)) and len(m.pile) == len(set(m.pile))
        if m.phase is Phase.PLAY:
            done = len(m.tricks)
            assert list(m.tricks_won) == self.won and sum(self.won) == done
            in_trick = {s for s, _ in m.trick}
            for s in range(n):
                assert m.hands[s].bit_count() == self.total - done - (s in in_trick)
            expected = m.leader if not m.trick else (m.trick[-1][0] + 1) % n
            assert m.turn == expected

    def _check_views(self) -> None:
        """The seat to move and one random seat (or a spectator) after every action."""
        m, n = self.m, self.n
        seats = {m.turn, self.rng.choice([None, *range(n)])}
        public = {c for _, c in m.trick} | self.public | {self.v.removed_two}
        sizes = tuple(h.bit_count() for h in m.hands)
        tricks, trick = tuple(m.tricks), tuple(m.trick)
        for s in seats:
            view = m.view(s)
            assert view.seat == s and view.hand_sizes == sizes
            assert view.phase is m.phase and view.turn == m.turn
            assert view.tricks == tricks and view.trick == trick
            assert view.first_draw == m.first_draw and view.variant == self.v
            assert view.scores == tuple(m.scores) and view.tricks_won == tuple(m.tricks_won)
            deciding = s is not None and m.phase is Phase.DRAW and s == m.turn
            assert view.top_card == (m.stock[0] if deciding else None)
            if s is None:
                assert view.hand == () and view.discards == () and view.legal == ()
                known = public
            else:
                own = set(m.hand_of(s))
                mine = set(cards_in(m.discards[s]))
                assert set(view.hand) == own and len(view.hand) == len(own)
                assert set(view.discards) == mine
                assert list(view.legal) == m.legal_actions(s)
                known = public | own | mine
                if deciding:
                    known.add(view.top_card)
            found: set[Card] = set()
            for name in _VIEW_WALKED:
                _walk(getattr(view, name), found)
            if view.phase is Phase.PLAY:  # the common case, without walking each action
                found |= {a.card for a in view.legal}
            else:
                _walk(view.legal, found)
            leaked = found - known
            assert not leaked, (s, leaked)


# SeatView's fields by what they may hold. Any new field fails the check below until
# it is put in one of these groups.
_VIEW_PRIVATE = ("hand", "discards", "top_card", "legal")  # walked for cards
_VIEW_PUBLIC = ("variant", "trick", "tricks", "first_draw")  # compared with the match's
_VIEW_SCALAR = (
    "seat",
    "phase",
    "turn",
    "hand_no",
    "hakem",
    "dealer",
    "trump",
    "hand_sizes",
    "leader",
    "tricks_won",
    "scores",
    "card_points",
    "stock_size",
    "bids",
    "blind",
    "spades_broken",
    "order",
)
assert {f.name for f in dataclasses.fields(SeatView)} == {
    *_VIEW_PRIVATE,
    *_VIEW_PUBLIC,
    *_VIEW_SCALAR,
}, "SeatView has a new field: decide whether it may hold cards"
_VIEW_WALKED = ("hand", "discards", "top_card")


class _Snapshot:
    __slots__ = (
        "discard_counts",
        "hakem",
        "hand_no",
        "hands",
        "phase",
        "pile",
        "stock",
        "trick",
        "trick_cards",
        "tricks_done",
        "trump",
    )

    def __init__(self, m: Match) -> None:
        self.phase = m.phase
        self.hands = [set(m.hand_of(s)) for s in range(m.n)]
        self.stock = list(m.stock)
        self.pile = set(m.pile)
        self.trick = list(m.trick)
        self.trick_cards = [c for _, c in m.trick]
        self.tricks_done = len(m.tricks)
        self.trump = m.trump
        self.hakem = m.hakem
        self.hand_no = m.hand_no
        self.discard_counts = [d.bit_count() for d in m.discards]


def _counts(m: Match) -> tuple[int, ...]:
    return tuple(h.bit_count() for h in m.hands)


def mask_of_list(cs: Iterable[int]) -> int:
    m = 0
    for c in cs:
        bit = 1 << c
        assert not m & bit, f"{CARDS[c]} twice"
        m |= bit
    return m


def _or(masks: Iterable[int]) -> int:
    out = 0
    for x in masks:
        out |= x
    return out


def check_first_draw(variant: Variant, drawn: HakemDrawn) -> None:
    """RULES.md: cards dealt face up one at a time in playing order from some seat;
    the first to receive an ace is hakem (teams by aces: the second ace, to another
    player, names the partner; the hakem receives no more cards)."""
    n = variant.players
    draw = drawn.draw
    assert draw and len({c for _, c in draw}) == len(draw)
    aces = [i for i, (_, c) in enumerate(draw) if c.rank == Rank.ACE]
    by_aces = variant.players == 4 and variant.teams_by_aces
    assert aces[-1] == len(draw) - 1
    assert len(aces) == (2 if by_aces else 1)
    first_ace = aces[0]
    assert drawn.hakem == draw[first_ace][0]
    seat = draw[0][0]
    for i, (s, _) in enumerate(draw):
        if i > first_ace and seat == drawn.hakem:
            seat = (seat + 1) % n
        assert s == seat, draw
        seat = (seat + 1) % n
    if by_aces:
        assert drawn.partner == draw[-1][0] != drawn.hakem
    else:
        assert drawn.partner is None


__all__ = [
    "Sim",
    "build_position",
    "card",
    "cards",
    "cards_in_obj",
    "check_first_draw",
    "deck_of",
    "of_type",
    "play_random_until",
    "play_trick",
    "ref_bidding_points",
    "ref_hand_outcome",
    "ref_legal",
    "ref_match_winner",
    "ref_next_hakem",
    "ref_trick_winner",
    "refused",
    "refused_play",
    "view_cards",
]
