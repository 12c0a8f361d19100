"""The floor of ``core.bench``'s ratio for an engine called as python-chess is.

A search calls the engine twice per card (``legal_cards`` then ``push``). The bare
loop of :func:`core.bench.bitmask_match` calls nothing. :class:`TwoCalls` is the
least an engine of that shape can be: a hand's state in slots and the two methods,
keeping no records at all (no trick records, move count, history or events, no
phase checks), with the loop's own arithmetic inside. :func:`floor_match` plays
the bench's hands through it; ``python -m core.bench --floor`` times it against the
loop as the engine is timed, to show what is left once the calls themselves are
paid for.
"""

from __future__ import annotations

import random

from .cards import SUIT_PATTERNS
from .deck import deal, deck_rng, owners, shuffled_deck

__all__ = ["TwoCalls", "floor_match"]

#: ``_DEAL_PLANS[hakem]``: the seat receiving each card of a 4-player deck: five
#: each from the hakem, then two rounds of four.
_DEAL_PLANS = tuple(
    owners([(h + i // 5) & 3 for i in range(20)] + [(h + i // 4) & 3 for i in range(32)])
    for h in range(4)
)

_S, _H, _D, _C = SUIT_PATTERNS
_FOLLOW = tuple((13 * (c // 13), SUIT_PATTERNS[c // 13]) for c in range(52))


class TwoCalls:
    """One 4-player hand: ``legal_cards()`` and ``push(card)``, nothing else."""

    __slots__ = ("best", "hands", "led", "over", "played", "top", "trump", "turn", "winner", "won")

    def __init__(self, hands: list[int], leader: int, trump: int) -> None:
        self.hands = hands
        self.turn = leader
        self.trump = trump
        self.played = 0  # cards of the trick on the table
        self.led = self.best = self.top = self.winner = 0
        self.won = [0, 0, 0, 0]
        self.over = False

    def legal_cards(self) -> tuple:
        if self.over:
            return ()
        hand = self.hands[self.turn]
        if self.played:
            shift, table = _FOLLOW[self.led]
            follow = hand >> shift & 0x1FFF
            if follow:
                return table[follow]
        return (
            _S[hand & 0x1FFF] + _H[hand >> 13 & 0x1FFF] + _D[hand >> 26 & 0x1FFF] + _C[hand >> 39]
        )

    def push(self, card: int) -> None:
        seat = self.turn
        self.hands[seat] ^= 1 << card
        played = self.played
        if not played:
            self.led = self.best = card
            self.top = card // 13
            self.winner = seat
        else:
            suit = card // 13
            if suit == self.top:
                if card > self.best:
                    self.best, self.winner = card, seat
            elif suit == self.trump:
                self.best, self.winner, self.top = card, seat, suit
        if played < 3:
            self.played = played + 1
            self.turn = (seat + 1) & 3
            return
        self.played = 0
        winner = self.turn = self.winner
        won = self.won
        won[winner] += 1
        side = winner & 1
        if won[side] + won[side + 2] == 7:
            self.over = True


def floor_match(seed: int, tricks: list[tuple[int, ...]] | None = None) -> int:
    """The bench's match (:func:`core.bench.engine_match`'s hands) through :class:`TwoCalls`."""
    rnd = random.Random(seed).random
    seat = deck_rng(seed, "hakem-seat").randrange(4)
    for card in shuffled_deck(seed, "hakem"):
        if card % 13 == 12:  # the first ace names the hakem
            break
        seat = (seat + 1) & 3
    hakem = seat
    scores = [0, 0]
    hand_no = 0
    while True:
        hand_no += 1
        deck = shuffled_deck(seed, f"hand:{hand_no}")
        table = TwoCalls(deal(deck, _DEAL_PLANS[hakem], 4), hakem, int(rnd() * 4))
        legal_cards, push = table.legal_cards, table.push
        options = legal_cards()
        while options:
            push(options[int(rnd() * len(options))])
            options = legal_cards()
        won = table.won
        if tricks is not None:
            tricks.append(tuple(won))
        side = 0 if won[0] + won[2] == 7 else 1
        lost_all = won[1 - side] + won[3 - side] == 0
        scores[side] += (2 if side == hakem & 1 else 3) if lost_all else 1
        if scores[side] >= 7:
            return hand_no
        if side != hakem & 1:
            hakem = (hakem + 1) & 3
