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

from ..cards import SUIT_MASKS, Card, CardSet, mask_of
from ..match import SeatView
from ..trick import winning_index
from ..variant import Kind
from .knowledge import Knowledge
from .rules import PlayState, rule_card
from .runs import same_choice
from .search import view_sample
from .signals import sequence_card, signal_follow
from .trump_prior import choice_weight

__all__ = ["Plays", "play_likelihood", "unseen_by_others", "weighted_deal"]


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

    Weighing many deals against one view: :class:`Plays`, which replays the hand
    once for all of them.
    """
    return Plays(view, surprise, policy, hidden).likelihood(hands, start)


class Plays:
    """The judged plays of one view, replayed once: everything a past play's state
    holds but the player's hand is the same in every sampled deal (the trick, the
    voids shown, the tricks won, and the live cards apart from the sample's own),
    so weighing a deal (:meth:`likelihood`) costs the model's calls and little more.
    """

    __slots__ = (
        "_count_style",
        "_count_surprise",
        "_counts",
        "_judged",
        "_n",
        "_policy",
        "_prior",
        "_prior_played",
        "_sequence_surprise",
        "_sequences",
        "_surprise",
        "hakem",
        "hidden",
        "trump",
    )

    def __init__(
        self,
        view: SeatView,
        surprise: tuple[float, ...],
        policy: Callable[[PlayState], Card] = rule_card,
        hidden: CardSet = 0,
        trump_prior: float = 0.0,
    ) -> None:
        me = view.seat
        trump = self.trump = int(view.trump)  # type: ignore[arg-type]
        self.hakem = view.hakem
        self.hidden = hidden
        self._surprise = surprise
        self._policy = policy
        # the seat that signals by which card of a run it plays (:mod:`.signals`)
        self._sequence_surprise = _found(policy, "sequence_surprise", 1.0)
        self._sequences = _found(policy, "sequence_seat", -1) if self._sequence_surprise < 1 else -1
        # the seat that signals its length when following (:class:`.signals.CountModel`)
        self._count_surprise = _found(policy, "count_surprise", 1.0)
        self._counts = _found(policy, "count_seat", -1) if self._count_surprise < 1 else -1
        self._count_style = _found(policy, "count_style", 0)
        n = self._n = len(view.hand_sizes)
        plays_by_trick = [t.plays for t in view.tricks]
        if view.trick:
            plays_by_trick.append(view.trick)
        flat = [(s, c) for plays in plays_by_trick for s, c in plays]
        # Cards played from each index on: by anyone (live then), and by each seat
        # (in its hand then, with what the sample leaves it).
        rest = [0] * (len(flat) + 1)
        rest_by = [[0] * n for _ in range(len(flat) + 1)]
        for i in range(len(flat) - 1, -1, -1):
            s, c = flat[i]
            rest[i] = rest[i + 1] | 1 << c
            rest_by[i] = list(rest_by[i + 1])
            rest_by[i][s] |= 1 << c
        judged = []
        voids = [0] * n
        won = [0] * n
        leads: tuple[tuple[int, int], ...] = ()
        index = -1
        for plays in plays_by_trick:
            trick: list[tuple[int, int]] = []
            for s, c in plays:
                index += 1
                led = trick[0][1] // 13 if trick else -1
                if s != me and surprise[s] < 1.0:
                    judged.append(
                        (
                            index,
                            s,
                            c,
                            tuple(trick),
                            led,
                            rest[index],
                            rest_by[index][s],
                            tuple(voids),
                            tuple(won),
                            leads,
                        )
                    )
                if led >= 0 and c // 13 != led:
                    voids[s] |= 1 << led
                trick.append((s, c))
            if len(trick) == n:
                won[trick[winning_index([c for _, c in trick], trump)][0]] += 1
                leads = (*leads, trick[0])
        self._judged = judged
        # The trump choice is judged once, with the first play (a weight kept from
        # an earlier decision holds it already).
        hakem = self.hakem
        classic = view.variant.kind is Kind.CLASSIC and n == 4
        self._prior = trump_prior if classic and hakem is not None and hakem != me else 0.0
        self._prior_played = sum(1 << c for s, c in flat if s == hakem)

    @property
    def weighs_trump(self) -> bool:
        """Whether a deal's weight holds the hakem's trump choice (:mod:`.trump_prior`):
        then the deals to weigh need no trump put in the hakem's hand first."""
        return self._prior > 0

    def likelihood(self, hands: list[CardSet], start: int = 0) -> float:
        """Weight of a sampled deal: ``hands`` the cards each seat holds now; only
        the plays from index ``start`` on are judged (see :func:`play_likelihood`)."""
        base = self.hidden
        for h in hands:
            base |= h
        n, trump, hakem = self._n, self.trump, self.hakem
        surprise, policy = self._surprise, self._policy
        weight = 1.0
        if self._prior and start == 0:
            dealt = hands[hakem] | self._prior_played  # type: ignore[index]
            weight = choice_weight(dealt, trump) ** self._prior
        for index, s, c, trick, led, rest, later, voids, won, leads in self._judged:
            if index < start:
                continue
            h = hands[s] | later
            legal = (h & SUIT_MASKS[led] or h) if led >= 0 else h
            if not legal & (legal - 1):
                continue
            live = base | rest
            others = live & ~h
            if s == self._sequences and sequence_card(c, h, others, not trick) != c:
                weight *= self._sequence_surprise
                continue
            if s == self._counts and c // 13 == led:
                cards = [p for _, p in trick]
                signal = signal_follow(h, legal, trick, trump, self._count_style)
                if signal is not None and winning_index([*cards, c], trump) != len(cards):
                    if not same_choice(signal, c, h, live):
                        weight *= self._count_surprise
                    continue
            if legal >> c & 1:
                # All the legal cards one run of a suit (nothing another seat may
                # hold between them): whatever the model picks, it is the same choice.
                lo = (legal & -legal).bit_length() - 1
                hi = legal.bit_length() - 1
                if lo // 13 == hi // 13 and not ((1 << hi) - 1) & ~((2 << lo) - 1) & others:
                    continue
            st = PlayState(
                n=n,
                seat=s,
                hand=h,
                legal=legal,
                trick=trick,
                trump=trump,
                unseen=others,
                voids=list(voids),
                tricks_won=won,
                hakem=hakem,
                leads=leads,
            )
            if not same_choice(policy(st), c, h, live):
                weight *= surprise[s]
        return weight


def _found(policy, name: str, default):
    """``policy``'s attribute ``name``, or that of the model it wraps (``.model``)."""
    while policy is not None:
        if hasattr(policy, name):
            return getattr(policy, name)
        policy = getattr(policy, "model", None)
    return default


def unseen_by_others(view: SeatView, know: Knowledge) -> CardSet:
    """Cards no seat of a sampled deal holds that every other seat has never seen. 2
    players: the opponent saw the stock go by but not our discards, so they are
    unseen to it all hand long, as our hand is (the others' discards it knows:
    leaving them out matched its real choices on 37 of 40 positions, counting them
    as unseen on 25)."""
    return mask_of(view.discards) & ~know.played


def weighted_deal(
    view: SeatView,
    know: Knowledge,
    rng,
    judge: Plays | None,
    least: int,
    enough: float,
    most: int,
) -> tuple[list[CardSet], float]:
    """Importance resampling: draw candidate deals, weigh each by how well it
    explains the plays seen (``judge``; None: no inference, weight 1), keep one
    chosen in proportion to its weight; the kept deal's weight is the candidates'
    mean. At least ``least`` candidates, more (up to ``most``) while their weights
    add up to less than ``enough`` (late in a hand most random deals explain the
    plays badly). The count depends on weights, not on measured times, so that a
    decision with a sample cap is reproducible."""
    cands: list[tuple[list[CardSet], float]] = []
    total_w = 0.0
    while len(cands) < least or (total_w < enough and len(cands) < most):
        hands = view_sample(view, know, rng, judge is None or not judge.weighs_trump)
        w = judge.likelihood(hands) if judge is not None else 1.0
        cands.append((hands, w))
        total_w += w
    r = rng.random() * total_w
    hands = cands[-1][0]
    for h, w in cands:
        if r < w:
            hands = h
            break
        r -= w
    return hands, total_w / len(cands)
