"""Inference from the cards others chose to play: how plausible is a sampled deal?

Sampling only by voids treats every deal that fits the voids as equally likely. But
players do not play at random: a player who threw a low card under a partner's
winner, or led a king rather than an ace, tells something about the rest of the
hand. Following the inference used in strong Skat and bridge programs, a sampled
deal is weighted by how well it explains what each other seat played: each past play
that the rule-based policy (:func:`.rules.rule_card`) would also have made from the
sampled hand keeps the weight, each play it would not have made multiplies the weight
by a factor below one. The factor is soft (people do not play like the rules), so a
surprising play lowers a deal's weight without ruling it out.

Only the seat's own view and the sampled hands are used; the sampled hands are the
seat's guess, never the real cards.
"""

from __future__ import annotations

from collections.abc import Callable

from ..cards import SUIT_MASKS, Card, CardSet
from ..match import SeatView
from ..trick import winning_index
from .rules import PlayState, rule_card

__all__ = ["play_likelihood"]


def _same_choice(a: int, b: int, hand: CardSet, live: CardSet) -> bool:
    """Whether playing ``a`` or ``b`` from ``hand`` gives away the same thing: same
    suit and no live card of another seat ranks between them."""
    if a == b:
        return True
    if a // 13 != b // 13:
        return False
    lo, hi = (a, b) if a < b else (b, a)
    between = ((1 << hi) - 1) & ~((2 << lo) - 1)
    return not between & live & ~hand


def play_likelihood(
    view: SeatView,
    hands: list[CardSet],
    surprise: tuple[float, ...],
    policy: Callable[[PlayState], Card] = rule_card,
    start: int = 0,
    hidden: CardSet = 0,
) -> float:
    """Weight of a sampled deal (classic play phase, 2, 3 or 4 players).

    ``hands`` are the cards each seat holds now in the sample (this seat's own hand
    included); ``surprise[s]`` is the factor for each play by seat ``s`` that the
    rules would not have made (1.0: no inference about ``s``). ``policy`` is the
    model of the others' play, by default the rules. ``start``: only the plays from
    this one on (counted over the hand, 0 the opening lead) are judged, the earlier
    ones only replayed (a weight kept from an earlier decision is brought up to date
    at the cost of the new plays, :mod:`.particles`). ``hidden``: cards in no hand
    of the sample and not yet played (2 players: the stock and the discards), unseen
    by every seat all hand long.
    """
    me = view.seat
    trump = int(view.trump)  # type: ignore[arg-type]
    plays_by_trick = [t.plays for t in view.tricks]
    if view.trick:
        plays_by_trick.append(view.trick)
    held = list(hands)
    for plays in plays_by_trick:
        for s, c in plays:
            held[s] |= 1 << c
    n = len(hands)
    live = hidden
    for h in held:
        live |= h
    voids = [0] * n
    won = [0] * n
    weight = 1.0
    hakem = view.hakem
    index = -1
    for plays in plays_by_trick:
        trick: list[tuple[int, int]] = []
        for s, c in plays:
            index += 1
            h = held[s]
            if trick:
                led = trick[0][1] // 13
                legal = h & SUIT_MASKS[led] or h
            else:
                led = -1
                legal = h
            if index >= start and s != me and surprise[s] < 1.0 and legal & (legal - 1):
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
                    hakem=hakem,
                )
                if not _same_choice(policy(st), c, h, live):
                    weight *= surprise[s]
            if led >= 0 and c // 13 != led:
                voids[s] |= 1 << led
            trick.append((s, c))
            held[s] = h & ~(1 << c)
            live &= ~(1 << c)
        if len(trick) == n:
            won[trick[winning_index([c for _, c in trick], trump)][0]] += 1
    return weight
