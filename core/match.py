"""The match state machine: a whole match of Hokm from the first ace to the target.

``Match`` is mutable, like python-chess's ``Board``: :meth:`Match.apply` validates
an action completely before changing anything, so a refused action (an
:class:`IllegalAction`) leaves the match exactly as it was.

Seats are numbered 0..n-1 in playing order (a real table plays anticlockwise, so
seat ``s + 1`` is the player to ``s``'s right). With four players, seats 0 and 2
form side 0 and seats 1 and 3 side 1; otherwise each seat is its own side.
"""

from __future__ import annotations

import itertools
from typing import Any

from . import match_codec, scoring
from .actions import (
    Action,
    Bid,
    ChooseTrump,
    DeclareBlind,
    Discard,
    Draw,
    Exchange,
    PlayCard,
)
from .bidding_phases import BiddingPhases
from .cards import (
    CARDS,
    SUIT_MASKS,
    SUIT_PATTERNS,
    Card,
    CardSet,
    Suit,
    cards_in,
)
from .dealing import _BITS, DealingPhases
from .deck import deck_rng
from .errors import ErrorCode, IllegalAction
from .events import CardPlayed, Event, HandEnded, MatchEnded, TrickWon
from .match_codec import FORMAT_VERSION
from .scoring import TRICKS_TO_WIN
from .state import (
    _BID,
    _BLIND,
    _DISCARD,
    _DRAW,
    _EXCHANGE,
    _NEW,
    _OVER,
    _PLAY,
    _STATE,
    _TRUMP,
    Phase,
    SeatView,
    TrickRecord,
    _tuple_new,
)
from .trick import winning_play
from .variant import Kind, Variant

__all__ = ["FORMAT_VERSION", "Match", "Phase", "SeatView", "TrickRecord"]

_SPADES = SUIT_MASKS[Suit.SPADES]
_S, _H, _D, _C = SUIT_PATTERNS
_SHIFT = (0, 13, 26, 39)
#: ``_FOLLOW[card led]``: the shift of its suit's 13 bits in a hand, and that suit's
#: pattern table (one lookup instead of a division and two lookups per card).
_FOLLOW = tuple((_SHIFT[c // 13], SUIT_PATTERNS[c // 13]) for c in range(52))


class Match(DealingPhases, BiddingPhases):
    """One match of Hokm. Create it, call :meth:`start`, then :meth:`apply`.

    The phases before the first trick live in :mod:`core.dealing` and
    :mod:`core.bidding_phases`, the JSON layout in :mod:`core.match_codec`; who
    wins a trick in :mod:`core.trick`, what a hand scores in :mod:`core.scoring`.
    """

    # Slots: a search reads and writes these on every card, and a slot is cheaper
    # than an instance dict of this many keys. ``__dict__`` keeps subclasses and
    # callers free to add attributes of their own.
    __slots__ = (*_STATE, "__dict__", "__weakref__")

    def __init__(self, variant: Variant | None = None, seed: int | None = None) -> None:
        v = variant or Variant()
        self.variant = v
        #: None for a live match (secure shuffles); an int makes every deal reproducible.
        self.seed = seed
        n = v.players
        self.n = n
        self._bidding = v.kind is Kind.BIDDING
        self._card_points = v.card_points
        #: The seat after each seat, and whether a completed trick needs more than
        #: its winner (spades broken, card points): both read on every card.
        self._next = tuple((s + 1) % n for s in range(n))
        self._trick_extras = self._bidding or self._card_points
        self._without = v.removed_two if v.deck_size == 51 else None  # the removed 2
        self.phase = _NEW
        self.order: tuple[int, ...] = tuple(range(n))
        self.first_draw: tuple[tuple[int, Card], ...] = ()
        self.hand_no = 0
        self.hakem: int | None = None
        self.dealer = 0
        self.first: int | None = None  # bidding variant: who draws first
        self.trump: Suit | None = None
        self.turn: int | None = None
        self.leader: int | None = None
        self.hands: list[CardSet] = [0] * n
        self.stock: list[Card] = []  # undealt cards, top first
        self.discards: list[CardSet] = [0] * n
        self.pile: list[Card] = []  # bidding variant: the shared discard pile
        self.trick: list[tuple[int, Card]] = []
        self.tricks: list[TrickRecord] = []
        self.tricks_won: list[int] = [0] * n
        self.scores: list[int] = [0] * v.sides
        self.card_points: list[int] = [0] * v.sides
        self.bags: list[int] = [0] * n
        self.bids: list[int | None] = [None] * n
        self.blind: list[bool] = [False] * n
        self.spades_broken = False
        self.winner: int | None = None
        #: Summaries of finished hands, oldest first.
        self.history: list[dict[str, Any]] = []
        #: Actions applied so far (a move number for stale-button checks).
        self.ply = 0

    # ------------------------------------------------------------------ queries

    @classmethod
    def new(
        cls, variant: Variant | None = None, seed: int | None = None
    ) -> tuple[Match, list[Event]]:
        m = cls(variant, seed)
        return m, m.start()

    @property
    def is_over(self) -> bool:
        return self.phase is _OVER

    def side_of(self, seat: int) -> int:
        return self.variant.side_of(seat)

    def hand_of(self, seat: int) -> list[Card]:
        return cards_in(self.hands[seat])

    def legal_cards(self, seat: int | None = None) -> tuple[Card, ...]:
        """The cards ``seat`` (by default the seat on turn) may play now, lowest
        first; empty when it is not its turn."""
        turn = self.turn
        if self.phase is not _PLAY or (seat is not None and seat != turn):
            return ()
        hand = self.hands[turn]  # type: ignore[index]
        trick = self.trick
        if trick:
            shift, table = _FOLLOW[trick[0][1]]  # by the card led: its suit's place and table
            follow = hand >> shift & 0x1FFF
            if follow:
                return table[follow]
        elif self._bidding and not self.spades_broken and hand & ~_SPADES:
            hand &= ~_SPADES  # spades not broken: lead another suit while one is held
        # cards_in, inlined: this is half of a search's inner loop.
        return (
            _S[hand & 0x1FFF] + _H[hand >> 13 & 0x1FFF] + _D[hand >> 26 & 0x1FFF] + _C[hand >> 39]
        )

    def _playable(self, seat: int) -> CardSet:
        hand = self.hands[seat]
        if self.trick:
            follow = hand & SUIT_MASKS[self.trick[0][1] // 13]
            return follow or hand
        if self._bidding and not self.spades_broken:
            return (hand & ~_SPADES) or hand
        return hand

    def legal_actions(self, seat: int) -> list[Action]:
        if seat != self.turn:
            return []
        p = self.phase
        if p is _PLAY:
            return [PlayCard(c) for c in cards_in(self._playable(seat))]
        if p is _TRUMP:
            return [ChooseTrump(s) for s in Suit]
        if p is _DISCARD:
            return [Discard(pair) for pair in itertools.combinations(self.hand_of(seat), 2)]
        if p is _DRAW:
            return [Draw(True), Draw(False)]
        if p is _BLIND:
            return [DeclareBlind(False), DeclareBlind(True)]
        if p is _EXCHANGE:
            hand = self.hand_of(seat)
            return [Exchange(cs) for k in range(4) for cs in itertools.combinations(hand, k)]
        if p is _BID:
            return [Bid(t) for t in range(14)]
        return []

    def view(self, seat: int | None) -> SeatView:
        """Everything ``seat`` may know; ``None`` gives a spectator's view."""
        if seat is not None and not 0 <= seat < self.n:
            raise IllegalAction(ErrorCode.NO_SUCH_SEAT)
        mine = seat is not None
        top = (
            self.stock[0]
            if mine and self.phase is _DRAW and seat == self.turn and self.stock
            else None
        )
        return SeatView(
            variant=self.variant,
            seat=seat,
            phase=self.phase,
            turn=self.turn,
            hand_no=self.hand_no,
            hakem=self.hakem,
            dealer=self.dealer,
            trump=self.trump,
            hand=tuple(self.hand_of(seat)) if mine else (),
            hand_sizes=tuple(h.bit_count() for h in self.hands),
            trick=tuple(self.trick),
            leader=self.leader,
            tricks=tuple(self.tricks),
            tricks_won=tuple(self.tricks_won),
            scores=tuple(self.scores),
            card_points=tuple(self.card_points),
            stock_size=len(self.stock),
            top_card=top,
            discards=tuple(cards_in(self.discards[seat])) if mine else (),
            bids=tuple(self.bids),
            blind=tuple(self.blind),
            spades_broken=self.spades_broken,
            order=self.order,
            first_draw=self.first_draw,
            legal=tuple(self.legal_actions(seat)) if mine else (),
        )

    # ----------------------------------------------------------------- actions

    def start(self) -> list[Event]:
        """Choose the first hakem (or first drawer) and deal the first hand."""
        if self.phase is not _NEW:
            raise IllegalAction(ErrorCode.WRONG_PHASE, "already started")
        events: list[Event] = []
        if self._bidding:
            self.first = deck_rng(self.seed, "first").randrange(2)
        else:
            self._draw_for_hakem(events)
        self._start_hand(events)
        return events

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Apply ``seat``'s action and return what happened.

        Raises :class:`IllegalAction` (with the match unchanged) when the rules
        refuse it.
        """
        if not isinstance(seat, int) or not 0 <= seat < self.n:
            raise IllegalAction(ErrorCode.NO_SUCH_SEAT)
        if self.phase is _OVER:
            raise IllegalAction(ErrorCode.MATCH_OVER)
        events: list[Event] = []
        kind = type(action)
        if kind is PlayCard:
            self.play(seat, action.card, events)  # type: ignore[union-attr]
            return events
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise IllegalAction(ErrorCode.UNKNOWN_ACTION, repr(action))
        phase = _PHASE_OF[kind]
        if self.phase is not phase:
            raise IllegalAction(ErrorCode.WRONG_PHASE, f"{self.phase} not {phase}")
        if seat != self.turn:
            raise IllegalAction(ErrorCode.NOT_YOUR_TURN)
        handler(self, seat, action, events)
        self.ply += 1
        return events

    def play(self, seat: int, card: int, events: list[Event] | None = None) -> None:
        """Play a card: the hot path of :meth:`apply`, usable directly by searches.

        Events are appended to ``events`` when it is given.
        """
        if self.phase is not _PLAY:
            raise IllegalAction(ErrorCode.WRONG_PHASE)
        if seat != self.turn:
            raise IllegalAction(ErrorCode.NOT_YOUR_TURN)
        if card.__class__ is not Card:  # a plain int (or junk) from outside
            if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card < 52:
                raise IllegalAction(ErrorCode.UNKNOWN_CARD)
            card = CARDS[card]
        hand = self.hands[seat]
        bit = 1 << card
        if not hand & bit:
            raise IllegalAction(ErrorCode.CARD_NOT_IN_HAND)
        trick = self.trick
        if trick:
            led = trick[0][1] // 13
            if card // 13 != led and hand & SUIT_MASKS[led]:
                raise IllegalAction(ErrorCode.MUST_FOLLOW_SUIT, led_suit=Suit(led))
        elif self._bidding and card < 13 and not self.spades_broken and hand & ~_SPADES:
            raise IllegalAction(ErrorCode.SPADES_NOT_BROKEN)
        self.push(card, events)

    def push(self, card: Card, events: list[Event] | None = None) -> None:
        """Play ``card`` for the seat on turn *without* checking it, like python-chess's
        ``Board.push``: for searches and self-play that took the card from
        :meth:`legal_cards`. Anything from outside goes through :meth:`apply`."""
        seat: int = self.turn  # type: ignore[assignment]
        self.hands[seat] ^= _BITS[card]
        trick = self.trick
        trick.append((seat, card))
        self.ply += 1
        if events is not None:
            events.append(CardPlayed(seat, card))
        if len(trick) < self.n:
            self.turn = self._next[seat]
            return
        # The trick is complete. (core.trick decides who wins it, the one place that
        # does; writing the rule out here again would gain about 2%.)
        plays = tuple(trick)
        winner = winning_play(plays, self.trump)[0]
        if self._trick_extras:
            self._trick_extras_done(plays, winner)
        won = self.tricks_won
        won[winner] += 1
        # tuple.__new__ skips NamedTuple's Python-level constructor (hot path).
        self.tricks.append(_tuple_new(TrickRecord, (self.leader, plays, winner)))
        self.trick = []
        self.leader = self.turn = winner
        if events is not None:
            events.append(TrickWon(winner, plays, len(self.tricks), tuple(won)))
        if self.n == 4:  # most tricks cannot end a hand: two sums say so
            ours, theirs = won[0] + won[2], won[1] + won[3]
            if ours < TRICKS_TO_WIN and theirs < TRICKS_TO_WIN:
                return
            result = scoring.four_player_result(ours, theirs, self.hakem)  # type: ignore[arg-type]
        elif len(self.tricks) < TRICKS_TO_WIN:  # no variant's hand ends sooner
            return
        else:
            result = scoring.hand_result(self)
        if result is not None:
            self._end_hand(result, events)

    # ------------------------------------------------------------- internals

    def _trick_extras_done(self, plays: tuple[tuple[int, Card], ...], winner: int) -> None:
        if (
            self._bidding
            and not self.spades_broken
            and plays[0][1] >= 13
            and any(c < 13 for _, c in plays)
        ):
            self.spades_broken = True  # a spade went on another suit
        if self._card_points:
            self.card_points[self.variant.side_of(winner)] += sum(c % 13 + 2 for _, c in plays)

    # End of a hand ---------------------------------------------------------

    def _end_hand(self, result: scoring.HandResult, events: list[Event] | None) -> None:
        v = self.variant
        for side, p in enumerate(result.points):
            self.scores[side] += p
        self.bags = list(result.bags) if result.bags is not None else self.bags
        if events is not None:
            events.append(
                HandEnded(
                    self.hand_no,
                    result.winner,
                    result.kind,
                    result.points,
                    tuple(self.tricks_won),
                    tuple(self.scores),
                    self.hakem,
                )
            )
        self.history.append(
            {
                "hand": self.hand_no,
                "hakem": self.hakem,
                "trump": self.trump.letter if self.trump is not None else None,
                "winner": result.winner,
                "kind": str(result.kind),
                "points": list(result.points),
                "tricks": list(self.tricks_won),
            }
        )
        winner = scoring.match_winner(v, self.scores)
        if winner is not None:
            self.winner = winner
            self.phase = _OVER
            self.turn = None
            if events is not None:
                events.append(MatchEnded(winner, tuple(self.scores)))
            return
        if self._bidding:
            self.first = 1 - self.first  # type: ignore[operator]
        else:
            self.hakem = scoring.next_hakem(v, self.hakem, result.winner)  # type: ignore[arg-type]
        self._start_hand(events)

    # ---------------------------------------------------------- serialization

    def to_dict(self) -> dict[str, Any]:
        return match_codec.to_dict(self)

    def to_json(self) -> str:
        return match_codec.to_json(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Match:
        return match_codec.from_dict(cls, d)

    @classmethod
    def from_json(cls, text: str) -> Match:
        return match_codec.from_json(cls, text)

    def copy(self) -> Match:
        """An independent copy (cheap: lists are copied, values are immutable).

        Written out attribute by attribute (about 3.5 times faster than a loop over
        the names): searches copy a match for every card they try."""
        m = object.__new__(self.__class__)
        m.variant = self.variant
        m.seed = self.seed
        m.n = self.n
        m._bidding = self._bidding
        m._card_points = self._card_points
        m._next = self._next
        m._trick_extras = self._trick_extras
        m._without = self._without
        m.phase = self.phase
        m.order = self.order
        m.first_draw = self.first_draw
        m.hand_no = self.hand_no
        m.hakem = self.hakem
        m.dealer = self.dealer
        m.first = self.first
        m.trump = self.trump
        m.turn = self.turn
        m.leader = self.leader
        m.hands = list(self.hands)
        m.stock = list(self.stock)
        m.discards = list(self.discards)
        m.pile = list(self.pile)
        m.trick = list(self.trick)
        m.tricks = list(self.tricks)
        m.tricks_won = list(self.tricks_won)
        m.scores = list(self.scores)
        m.card_points = list(self.card_points)
        m.bags = list(self.bags)
        m.bids = list(self.bids)
        m.blind = list(self.blind)
        m.spades_broken = self.spades_broken
        m.winner = self.winner
        m.history = list(self.history)
        m.ply = self.ply
        extra = self.__dict__  # anything a subclass or a caller added
        if extra:
            m.__dict__.update(extra)
        return m

    @classmethod
    def from_view(cls, view: SeatView, hands: list[CardSet]) -> Match:
        """A match consistent with ``view`` in which the hidden hands are ``hands``.

        Computer players use this to search sampled deals with the engine's own
        rules. The stock and other private piles are left empty, so the result is
        only for trick play.
        """
        v = view.variant
        m = cls(v, None)
        m.phase = view.phase
        m.order = view.order
        m.hand_no = view.hand_no
        m.hakem = view.hakem
        m.dealer = view.dealer
        m.trump = view.trump
        m.turn = view.turn
        m.leader = view.leader
        m.hands = list(hands)
        m.trick = list(view.trick)
        m.tricks = list(view.tricks)
        m.tricks_won = list(view.tricks_won)
        m.scores = list(view.scores)
        m.card_points = list(view.card_points)
        m.bids = list(view.bids)
        m.blind = list(view.blind)
        m.spades_broken = view.spades_broken
        return m

    def __repr__(self) -> str:
        return (
            f"<Match {self.variant.players}p {self.variant.kind} hand {self.hand_no} "
            f"{self.phase} turn={self.turn} scores={self.scores}>"
        )


_HANDLERS = {
    ChooseTrump: Match._choose_trump,
    Discard: Match._discard,
    Draw: Match._draw,
    DeclareBlind: Match._declare_blind,
    Exchange: Match._exchange,
    Bid: Match._bid,
}
_PHASE_OF = {
    ChooseTrump: Phase.TRUMP,
    Discard: Phase.DISCARD,
    Draw: Phase.DRAW,
    DeclareBlind: Phase.BLIND,
    Exchange: Phase.EXCHANGE,
    Bid: Phase.BID,
}
