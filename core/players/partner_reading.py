"""Reading the partner's plays by double dummy: a sampled deal in which a card the
partner chose would have thrown away a hand its side could still take is less
likely (as GIB's card-play inference rejects deals that make a seat's past play an
error).

Shown the partner's hand, hard takes 54% of the oracle's edge over the yardstick
instead of 24% (RESULTS.md, "Issue 25, fourteenth session"), while an exact model of
the opponents' play moved nothing: what the partner holds is what hard misses most.
The rule model of the inference (:mod:`.inference`) reads the partner as a rule
player; a partner who searches, as hard does, plays the card that keeps the hand on
most of its deals, so a deal on which its card would not have kept the hand, while
another would, explains its play worse.

The judgement is one yes/no solve of the position before each of the partner's
plays (can the partner's side still take 7 tricks, and with which cards?), once per
kept deal and play: the deals of a pool (:mod:`.particles`) are judged when they are
drawn, and the factor is kept with the deal.
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, CardSet
from ..scoring import TRICKS_TO_WIN
from ..trick import winning_index
from .clock import Clock
from .double_dummy import dds_cards_reaching

__all__ = ["PartnerReading"]


class PartnerReading:
    """The judged deals of one pool: for each deal (its hands as dealt), how many of
    the partner's plays have been judged and the factor they give."""

    __slots__ = ("_judged", "_key", "factor", "solves")

    def __init__(self, factor: float) -> None:
        #: The weight's factor for each play that would have thrown the hand away.
        self.factor = factor
        self._judged: dict[tuple[CardSet, ...], tuple[int, float]] = {}
        self._key: tuple | None = None
        #: Solves made (a measurement).
        self.solves = 0

    def weight(
        self,
        key: tuple,
        dealt: list[CardSet],
        plays: list[tuple[int, int]],
        me: int,
        trump: int,
        clock: Clock | None,
    ) -> float:
        """The factor of the deal ``dealt`` (each seat's hand as dealt) for the
        partner's plays among ``plays`` (the hand's plays so far, in order);
        :class:`~.clock.OutOfTime` if a solve would not fit. ``key`` names the hand
        (:func:`.particles.hand_key`): judgements of another hand are forgotten."""
        if key != self._key:
            self._key = key
            self._judged = {}
        partner = (me + 2) % 4
        name = tuple(dealt)
        done, f = self._judged.get(name, (0, 1.0))
        held = list(dealt)
        won = [0, 0]
        for j, (s, c) in enumerate(plays):
            k = j - j % 4  # the trick's first play
            if j % 4 == 0 and j:
                trick = [card for _, card in plays[j - 4 : j]]
                won[plays[j - 4 + winning_index(trick, trump)][0] % 2] += 1
            if s == partner and j >= done and f > 0.0:
                f *= self._judge(held, plays[k:j], plays[k][0], s, c, won, trump, clock)
            held[s] &= ~(1 << c)
        self._judged[name] = (len(plays), f)
        return f

    def _judge(self, held, trick, leader, seat, card, won, trump, clock) -> float:
        hand = held[seat]
        led = trick[0][1] // 13 if trick else -1
        legal = hand & SUIT_MASKS[led] if led >= 0 else 0
        legal = legal or hand
        if not legal & (legal - 1):
            return 1.0  # forced: it tells nothing
        need = TRICKS_TO_WIN - won[seat % 2]
        self.solves += 1
        keeping = dds_cards_reaching(list(held), tuple(trick), leader, trump, need, clock)
        if keeping and not keeping >> card & 1:
            return self.factor
        return 1.0
