"""A partnership's signal: what a discard says about the discarder's hand.

Shown its partner's hand, hard takes 54% of the oracle's edge over the yardstick
instead of 24% (RESULTS.md, "Issue 25, fourteenth session"): the partner's cards are
what its search misses most. People pass some of that by signals; this module is
one, an encouraging discard: **a discard comes from a side suit holding its ace or
king**, the longest such suit, its lowest card. So a discard tells the partner
where the discarder's top cards are, which the cards people throw anyway (the
lowest of a worthless suit) do not.

* The player signals only among cards its search finds equally good
  (:meth:`.hard.HardPlayer.choose_card`), so it never gives up a trick to signal.
* The inference reads it (:func:`signalling_model`): the model of the partner's
  play is the rules', but where the rules would discard, the signal's card, so a
  sampled deal in which the partner's discard breaks the signal counts as a
  surprise of the partner (``surprise_partner``).

A second signal (``signal_counts``) tells lengths: following suit without taking
the trick, the highest of the cards that would not win it from an even number of
cards in the suit, the lowest from an odd number (style 1), or the highest from a
doubleton, the lowest from more (style 2).
"""

from __future__ import annotations

from collections.abc import Callable

from ..cards import SUIT_MASKS, Card, CardSet
from ..trick import winning_index
from .rules import PlayState
from .runs import run_of

__all__ = [
    "CountModel",
    "SequenceModel",
    "sequence_card",
    "signal_discard",
    "signal_follow",
    "signalling_model",
]

#: The ace and king of each suit.
_TOP = 0b1100000000000


def signal_discard(hand: CardSet, legal: CardSet, led: int, trump: int | None) -> Card | None:
    """The card a seat that cannot follow ``led`` signals with: the lowest card of
    its longest side suit (neither led nor trump) that holds the ace or king and a
    lower card to throw (ties: the lower suit); None when it can follow or no side
    suit qualifies."""
    if legal & SUIT_MASKS[led]:
        return None
    best: tuple[int, int] | None = None
    for suit in range(4):
        if suit == trump:
            continue
        cards = legal & SUIT_MASKS[suit]
        low = cards & -cards
        if not (hand >> (13 * suit)) & _TOP or not low or (low.bit_length() - 1) % 13 >= 11:
            continue
        key = (-cards.bit_count(), suit)
        if best is None or key < best:
            best = key
    if best is None:
        return None
    cards = legal & SUIT_MASKS[best[1]]
    return (cards & -cards).bit_length() - 1


def signal_follow(
    hand: CardSet,
    legal: CardSet,
    trick: list[tuple[int, int]] | tuple,
    trump: int | None,
    style: int = 1,
) -> Card | None:
    """The card a seat following suit without taking the trick signals its length
    with (a count signal): of the cards of the suit led that would not win the
    trick, style 1 the highest from an even number of cards in the suit, the lowest
    from an odd number; style 2 the highest from two cards (it will be void after
    one more round), the lowest from more. None when it cannot follow or has fewer
    than two such cards.

    Parity tells little of a length whose likely values are neighbours (3 or 4
    cards: the two halves have about the same mean), so style 2 splits where a
    length matters most to the partner: whether the suit can be ruffed soon."""
    led = trick[0][1] // 13
    suit = legal & SUIT_MASKS[led]
    if not suit:
        return None
    cards = [c for _, c in trick]
    losing = [
        c for c in range(52) if suit >> c & 1 and winning_index([*cards, c], trump) != len(cards)
    ]
    if len(losing) < 2:
        return None
    n = (hand & SUIT_MASKS[led]).bit_count()
    high = n == 2 if style == 2 else not n % 2
    return losing[-1] if high else losing[0]


def signalling_model(
    model: Callable[[PlayState], Card], partner: int, counts: int = 0, discards: bool = True
) -> Callable[[PlayState], Card]:
    """``model`` for every seat, but the partner discarding by the signal where
    ``model`` would discard a side card (``discards``), and (``counts``, the count signal's
    style: :func:`signal_follow`) following by the count signal where ``model``
    would follow without taking the trick."""

    def play(st: PlayState) -> Card:
        card = model(st)
        if st.seat != partner or not st.trick:
            return card
        led = st.trick[0][1] // 13
        if card // 13 == led:
            if not counts:
                return card
            cards = [c for _, c in st.trick]
            if winning_index([*cards, card], st.trump) == len(cards):
                return card  # it takes the trick: no signal
            signal = signal_follow(st.hand, st.legal, st.trick, st.trump, counts)
            return card if signal is None else signal
        if card // 13 == st.trump or not discards:
            return card  # ruffing, or discards not read: no discard signal
        signal = signal_discard(st.hand, st.legal, led, st.trump)
        return card if signal is None else signal

    return play


def sequence_card(card: Card, hand: CardSet, unseen: CardSet, leading: bool) -> Card:
    """The card of ``card``'s run in ``hand`` (:func:`.runs.run_of`, with the
    ``unseen`` cards) that the sequence signal plays: the highest when leading, the
    lowest otherwise. Which card of a run is played costs nothing, so it can tell
    the partner something: a lead denies the next higher card, a follow the next
    lower one."""
    run = run_of(card, hand, unseen)
    return run.bit_length() - 1 if leading else (run & -run).bit_length() - 1  # type: ignore[return-value]


class SequenceModel:
    """A model of the others' play whose ``sequence_seat`` (the partner) also plays
    by the sequence signal (:func:`sequence_card`): the inference
    (:class:`.inference.Plays`) weighs a deal by ``sequence_surprise`` for each play
    of the partner's that breaks it there."""

    __slots__ = ("model", "sequence_seat", "sequence_surprise")

    def __init__(self, model: Callable[[PlayState], Card], partner: int, surprise: float) -> None:
        self.model = model
        self.sequence_seat = partner
        self.sequence_surprise = surprise

    def __call__(self, st: PlayState) -> Card:
        return self.model(st)


class CountModel:
    """A model of the others' play whose ``count_seat`` (the partner) follows by the
    count signal of ``count_style`` (:func:`signal_follow`) whenever it does not
    take the trick: the inference (:class:`.inference.Plays`) weighs a deal by
    ``count_surprise`` for each such play of the partner's that breaks it there,
    apart from the partner's factor for the rest of its play."""

    __slots__ = ("count_seat", "count_style", "count_surprise", "model")

    def __init__(
        self, model: Callable[[PlayState], Card], partner: int, style: int, surprise: float
    ) -> None:
        self.model = model
        self.count_seat = partner
        self.count_style = style
        self.count_surprise = surprise

    def __call__(self, st: PlayState) -> Card:
        return self.model(st)
