"""Review of a finished 4-player hand: what double dummy says each side could take,
and which plays cost tricks.

``review_hand(deal, trump, plays)`` replays the hand card by card. Before each play
the double-dummy solver (DDS, as the hard player uses it) gives, for every card the
player could play, the tricks its side would take from there on with every seat
seeing every card and playing perfectly. A play that gives fewer than the best card
"cost" the difference.

Double dummy counts all 13 tricks, although a Hokm hand stops once a side has 7:
"tricks" here are the tricks a side would take if the hand were played to the end
(7 or more of them win the hand). It is a yardstick, not a judgement: a play can
cost a trick double dummy and still be the right play when the cards are hidden.

Typical use (the bot side keeps the deal as it stood when play began, because the
engine deals the next hand as soon as one ends)::

    deal = list(match.hands)            # once trump is named and play begins
    ...                                 # play the hand; collect (seat, card) in order
    review = review_hand(deal, trump, plays)
    review.par[side], review.taken[side], review.costly_plays(side)

Only 4-player Hokm is reviewed (DDS solves four hands).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import CARDS, SUIT_MASKS, Card, CardSet
from .players.double_dummy import dds_card_tricks
from .trick import winning_play

__all__ = ["CostlyPlay", "HandReview", "review_hand"]


@dataclass(frozen=True, slots=True)
class CostlyPlay:
    """A play that gave away tricks, double dummy."""

    #: 1 for the first trick.
    trick: int
    seat: int
    played: Card
    #: A card that kept the most tricks (in the suit played when one did).
    best: Card
    #: Tricks the seat's side lost by this play (best card's tricks minus the played one's).
    lost: int


@dataclass(frozen=True, slots=True)
class HandReview:
    """``par[side]``: tricks that side could take from the first trick, double
    dummy, with both sides playing perfectly (the two add up to 13, or to the cards
    in a hand when a shorter ending is reviewed).
    ``taken[side]``: tricks it took in the hand as played (the hand may stop at 7).
    ``costly``: every play of either side that cost its side tricks, in order."""

    trump: int
    par: tuple[int, int]
    taken: tuple[int, int]
    costly: tuple[CostlyPlay, ...]

    def costly_plays(self, side: int) -> tuple[CostlyPlay, ...]:
        """The plays of ``side`` (seats ``side`` and ``side + 2``) that cost it tricks."""
        return tuple(p for p in self.costly if p.seat % 2 == side)

    def tricks_lost(self, side: int) -> int:
        return sum(p.lost for p in self.costly_plays(side))


def review_hand(
    deal: Sequence[CardSet], trump: int, plays: Sequence[tuple[int, int]]
) -> HandReview:
    """Review a hand: ``deal`` the four hands when play began (bit masks, seats in
    playing order), ``trump`` the trump suit, ``plays`` the cards played in order as
    ``(seat, card)``, from the first lead to the last card of the hand (or fewer).

    Raises ``ValueError`` when the plays do not fit the deal (a card not in the
    hand, a seat out of turn, a revoke)."""
    if len(deal) != 4:
        raise ValueError("only 4-player hands are reviewed")
    hands = list(deal)
    if any(h & g for i, h in enumerate(hands) for g in hands[i + 1 :]):
        raise ValueError("a card is in two hands")
    if len({h.bit_count() for h in hands}) != 1:
        raise ValueError("the hands hold different numbers of cards")
    len_hand = hands[0].bit_count()
    if not plays:
        raise ValueError("no plays")
    trick: list[tuple[int, Card]] = []
    leader = plays[0][0]
    taken = [0, 0]
    costly: list[CostlyPlay] = []
    par: tuple[int, int] | None = None
    tricks_done = 0
    for seat, raw in plays:
        card = CARDS[raw]
        turn = (leader + len(trick)) % 4
        if seat != turn:
            raise ValueError(f"seat {seat} played out of turn (seat {turn} was to play)")
        hand = hands[seat]
        if not hand >> card & 1:
            raise ValueError(f"{card} is not in seat {seat}'s hand")
        if trick:
            led = trick[0][1] // 13
            if card // 13 != led and hand & SUIT_MASKS[led]:
                raise ValueError(f"seat {seat} did not follow suit with {card}")
        values = dds_card_tricks(hands, trick, leader, trump)
        best_tricks = max(values.values())
        if par is None:
            side = seat % 2
            other = len_hand - best_tricks
            par = (best_tricks, other) if side == 0 else (other, best_tricks)
        lost = best_tricks - values[card]
        if lost > 0:
            costly.append(
                CostlyPlay(tricks_done + 1, seat, card, _best_card(values, best_tricks, card), lost)
            )
        hands[seat] = hand & ~(1 << card)
        trick.append((seat, card))
        if len(trick) == 4:
            winner = winning_play(trick, trump)[0]
            taken[winner % 2] += 1
            tricks_done += 1
            trick = []
            leader = winner
    assert par is not None
    return HandReview(trump, par, (taken[0], taken[1]), tuple(costly))


def _best_card(values: dict[int, int], best: int, played: Card) -> Card:
    """A card worth ``best`` tricks: the nearest in rank in the suit played if one
    is, else the lowest such card."""
    good = [c for c, v in values.items() if v == best]
    same = [c for c in good if c // 13 == played // 13]
    if same:
        return CARDS[min(same, key=lambda c: (abs(c - played), c))]
    return CARDS[min(good, key=lambda c: (c % 13, c))]
