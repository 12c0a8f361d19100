"""The pieces of a determinized search that every searching level shares.

Sampling deals of the hidden cards from a seat's view (:func:`sample_hands`,
:func:`view_sample`), a one-hand engine copy (:class:`SearchMatch`), a policy playout
to the end of the hand (:func:`playout`), the value of a finished hand for a seat
(:func:`hand_value`) and the distinct candidate cards of a decision
(:func:`distinct_cards`). "normal" uses them for its light look-ahead, "hard" for its
search; neither imports the other for them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..cards import CARDS, SUIT_MASKS, Card, CardSet, Suit, cards_in, mask_of
from ..match import Match, Phase, SeatView
from ..variant import Kind
from .knowledge import Knowledge
from .rules import PlayState, rule_card, state_from_match
from .runs import distinct_runs

__all__ = [
    "SearchMatch",
    "distinct_cards",
    "hand_from",
    "hand_value",
    "playout",
    "sample_hands",
    "settled",
    "view_sample",
]


# ------------------------------------------------------------------ sampling


def sample_hands(
    rng,
    me: int,
    my_hand: CardSet,
    unseen: CardSet,
    sizes: list[int] | tuple[int, ...],
    voids: list[int],
    prefer: tuple[int, int] | None = None,
    tries: int = 30,
    good: CardSet = 0,
    good_weight: float = 1.0,
) -> list[CardSet]:
    """Deal the ``unseen`` cards to the other seats: ``sizes[s]`` cards to seat s,
    none of a suit the seat is void in. Cards left over (2 players: the stock and
    the opponent's discards) are dropped; a card of ``good`` is ``good_weight`` times
    as likely to be in a hand rather than left over (players keep good cards).

    ``prefer`` = (seat, suit) puts one card of ``suit`` in ``seat``'s hand first when
    it can hold one (a light bias: the hakem chose that suit as trump).
    """
    n = len(sizes)
    cards = list(cards_in(unseen))
    need = sum(sizes[s] for s in range(n) if s != me)
    sink = len(cards) - need
    if sink < 0:
        raise ValueError("fewer unseen cards than hidden hand slots")
    for attempt in range(tries):
        ignore_voids = attempt == tries - 1
        hands = [0] * n
        hands[me] = my_hand
        cap = [0 if s == me else sizes[s] for s in range(n)]
        sink_cap = sink
        rng.shuffle(cards)
        pool = cards
        if prefer is not None:
            pseat, psuit = prefer
            if pseat != me and cap[pseat] and not voids[pseat] >> psuit & 1:
                for i, c in enumerate(pool):
                    if c // 13 == psuit:
                        hands[pseat] |= 1 << c
                        cap[pseat] -= 1
                        pool = pool[:i] + pool[i + 1 :]
                        break

        # The seats that may hold each suit (in seat order), and the most
        # constrained suits first.
        allowed = [
            [s for s in range(n) if s != me and (ignore_voids or not voids[s] >> u & 1)]
            for u in range(4)
        ]
        eligible = [sum(1 for s in allowed[u] if cap[s]) for u in range(4)]
        order = sorted(pool, key=lambda c: eligible[c // 13])
        ok = True
        for c in order:
            suit = c // 13
            seats = [s for s in allowed[suit] if cap[s]]
            total = sink_cap
            for s in seats:
                total += cap[s]
            if total == 0:
                ok = False
                break
            if sink_cap and good >> c & 1:
                w = good_weight
                r = rng.random() * (w * (total - sink_cap) + sink_cap)
                for s in seats:
                    if r < w * cap[s]:
                        hands[s] |= 1 << c
                        cap[s] -= 1
                        break
                    r -= w * cap[s]
                else:
                    sink_cap -= 1
                continue
            r = rng.randrange(total)
            for s in seats:
                if r < cap[s]:
                    hands[s] |= 1 << c
                    cap[s] -= 1
                    break
                r -= cap[s]
            else:
                sink_cap -= 1
        if ok and not any(cap):
            return hands
    raise RuntimeError("could not sample a consistent deal")


def view_sample(view: SeatView, know: Knowledge, rng, prefer_trump: bool = True) -> list[CardSet]:
    """A deal of the hidden cards that agrees with everything ``view`` shows (its
    voids; in 4-player classic play one card of trump to a hakem who has shown
    fewer than two, unless ``prefer_trump`` is off because the caller weighs the
    hakem's trumps itself; with 2 players trump and honours kept from the draw)."""
    sizes = list(view.hand_sizes)
    prefer = None
    hakem = view.hakem
    if (
        prefer_trump
        and view.trump is not None
        and hakem is not None
        and hakem != view.seat
        and view.variant.kind is Kind.CLASSIC
    ):
        shown = sum(
            1 for t in view.tricks for s, c in t.plays if s == hakem and c // 13 == view.trump
        )
        if shown < 2:
            prefer = (hakem, int(view.trump))
    unseen = know.unseen
    voids = know.voids
    fixed = None
    if getattr(know, "shown", None):
        fixed, unseen, prefer = _deal_shown(know, sizes, unseen, prefer, rng)
    elif getattr(know, "lengths", None):
        fixed, unseen, prefer, voids = _deal_lengths(know, sizes, unseen, prefer, rng)
    good = 0
    if view.variant.players == 2 and view.trump is not None:
        # The opponent kept trump and high cards from the draw.
        good = SUIT_MASKS[view.trump]
        for suit in range(4):
            good |= 0b1110000000000 << (13 * suit)  # Q, K, A
    hands = sample_hands(
        rng,
        know.seat,
        know.hand,
        unseen,
        sizes,
        voids,
        prefer,
        good=good,
        good_weight=2.0,
    )
    if fixed is None:
        return hands
    return [h | f for h, f in zip(hands, fixed, strict=True)]


def _deal_shown(know: Knowledge, sizes: list[int], unseen: CardSet, prefer, rng):
    """A diagnostic's (:mod:`.sighted`) ``know.shown``: seat s is shown to hold
    exactly ``cards`` of the cards ``among``, so the others hold the rest of them.
    Those cards are placed (``sizes`` is reduced to the slots left); returns them
    by seat, the cards still to deal, and ``prefer`` unless it names a shown seat."""
    shown: dict[int, tuple[CardSet, CardSet]] = know.shown  # type: ignore[attr-defined]
    fixed = [0] * len(sizes)
    for s, (cards, _) in shown.items():
        fixed[s] = cards
        sizes[s] -= cards.bit_count()
        unseen &= ~cards
        if prefer is not None and prefer[0] == s:
            prefer = None
    for s, (_, among) in shown.items():
        if not sizes[s]:
            continue  # the whole hand is shown: sample_hands deals the rest as usual
        rest = list(cards_in(unseen & among))
        rng.shuffle(rest)
        for c in rest:
            seats = [t for t in range(len(sizes)) if t != know.seat and t not in shown and sizes[t]]
            free = [t for t in seats if not know.voids[t] >> (c // 13) & 1]
            t = (free or seats)[rng.randrange(len(free or seats))]
            fixed[t] |= 1 << c
            sizes[t] -= 1
            unseen &= ~(1 << c)
    return fixed, unseen, prefer


def _deal_lengths(know: Knowledge, sizes: list[int], unseen: CardSet, prefer, rng):
    """A diagnostic's (:mod:`.sighted`) ``know.lengths``: seat s holds between
    ``lengths[s][u]`` = (low, high) cards of suit u. ``low`` of them are dealt to it
    at random among the unseen ones, and a suit whose ``low`` is its ``high`` is
    closed to it for the rest of the deal (as a void). Returns what
    :func:`_deal_shown` does, and the voids to deal the rest by."""
    lengths: dict[int, tuple[tuple[int, int], ...]] = know.lengths  # type: ignore[attr-defined]
    fixed = [0] * len(sizes)
    voids = list(know.voids)
    for s, ranges in lengths.items():
        for suit, (low, high) in enumerate(ranges):
            for c in rng.sample(list(cards_in(unseen & SUIT_MASKS[suit])), low):
                fixed[s] |= 1 << c
            if low == high:
                voids[s] |= 1 << suit
        sizes[s] -= fixed[s].bit_count()
        unseen &= ~fixed[s]
        if prefer is not None and prefer[0] == s:
            prefer = None
    return fixed, unseen, prefer, voids


# ------------------------------------------------------------ engine search


class SearchMatch(Match):
    """A match for searching one hand: when the hand ends it stops (phase OVER)
    instead of dealing the next one."""

    def _start_hand(self, events) -> None:  # type: ignore[override]
        self.phase = Phase.OVER
        self.turn = None

    @classmethod
    def from_view(cls, view: SeatView, hands: list[CardSet]) -> SearchMatch:  # type: ignore[override]
        m = super().from_view(view, hands)
        if view.variant.kind is Kind.BIDDING:
            m.first = 1 - view.dealer  # the engine's hand-end bookkeeping needs it
        return m  # type: ignore[return-value]

    def copy(self) -> SearchMatch:  # type: ignore[override]
        m = Match.copy(self)
        m.__class__ = SearchMatch
        return m  # type: ignore[return-value]


def hand_from(view: SeatView, hands: list[CardSet], trump: int, leader: int) -> SearchMatch:
    """A hand about to be played (scores and hakem from ``view``): ``hands`` dealt,
    ``trump`` named, ``leader`` to lead."""
    m = SearchMatch(view.variant, None)
    m.phase = Phase.PLAY
    m.hakem = view.hakem
    m.dealer = view.dealer
    m.trump = Suit(trump)
    m.turn = m.leader = leader
    m.hands = list(hands)
    m.scores = list(view.scores)
    m.card_points = list(view.card_points)
    return m


def hand_value(m: Match, me: int, points_before: list[int]) -> float:
    """Utility for ``me`` of a finished hand (points; for 3 players own points
    minus half the others')."""
    v = m.variant
    gained = [m.scores[s] - points_before[s] for s in range(v.sides)]
    if v.kind is Kind.BIDDING:
        return (gained[me] - gained[1 - me]) / 100.0
    if v.players == 3:
        return gained[me] - 0.5 * (sum(gained) - gained[me])
    mine = v.side_of(me)
    return gained[mine] - gained[1 - mine]


def playout(m: Match, voids: list[int], policy: Callable[[PlayState], Card] = rule_card) -> None:
    """Finish the hand with every seat playing ``policy``'s card, by default the
    rule-based one (in place)."""
    live = 0
    for h in m.hands:
        live |= h
    voids = list(voids)
    play_phase = Phase.PLAY
    while m.phase is play_phase:
        seat = m.turn
        card = policy(state_from_match(m, voids, live))
        if m.trick:
            led = m.trick[0][1] // 13
            if card // 13 != led:
                voids[seat] |= 1 << led  # type: ignore[index]
        m.play(seat, card)  # type: ignore[arg-type]
        live &= ~(1 << card)


def distinct_cards(legal: list[Card], know: Knowledge) -> list[Card]:
    """The seat's ``legal`` cards without those equivalent to a lower one kept: no
    card the seat has not seen ranks between them, so playing either gives the same
    result (ascending)."""
    return [CARDS[c] for c in distinct_runs(mask_of(legal), know.unseen)]


def settled(
    rows: list[tuple[float, dict[Any, float]]], totals: dict[Any, float], margin: float = 0.0
) -> bool:
    """Whether more samples would hardly change the choice: the leading option beats
    every other option by more than two standard errors of the paired (same deal)
    difference, or the two gave the same value on every deal so far, or (``margin``
    above 0) the other option's advantage, two standard errors above its mean, would
    still be under ``margin``: choosing the leader costs less than that."""
    best = max(totals, key=totals.__getitem__)
    sw = sum(w for w, _ in rows)
    sw2 = sum(w * w for w, _ in rows)
    ess = sw * sw / sw2 if sw2 else 0.0
    if ess < 8:
        return False
    for c in totals:
        if c == best:
            continue
        diffs = [(w, r[best] - r[c]) for w, r in rows]
        if all(d == 0 for _, d in diffs):
            continue
        mean = sum(w * d for w, d in diffs) / sw
        var = sum(w * (d - mean) ** 2 for w, d in diffs) / sw
        two_se = 2.0 * math.sqrt(var / ess)
        if mean <= two_se and two_se - mean >= margin:
            return False
    return True
