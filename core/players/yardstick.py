"""An independent rule-based yardstick for the arena (``--b yardstick``); not a lobby level.

The hard player's strength is read as the share of the oracle's edge it takes
against an opponent (core/players/RESULTS.md). Against "normal" alone that figure
could be inflated by exploiting normal's own rules, which hard's playouts and
inference model. This player is written apart from :mod:`.rules` and :mod:`.normal`
(it shares none of their card code) from plain Hokm table habits:

* follow suit cheaply: the lowest card when the trick is lost or the partner holds
  it safely, the lowest winning card when last, second hand low unless a sure
  winner, third hand plays a card no one left can beat when it has one;
* void in the suit led: ruff an opponent's winner with the lowest trump that wins
  (the highest, if a later opponent may overruff and it is master), never the
  partner's safe winner; else throw from the shortest side suit, keeping masters
  and a guarded king;
* lead: the hakem's side draws trumps when long in them; cash masters no opponent
  can ruff; give the partner a ruff; lead a side singleton early to ruff later;
  return the partner's suit; else the longest side suit, top of a sequence or low;
* trump from the first five cards by length and honours (A 3, K 2, Q 1, J ½).

**Frozen.** It exists to measure the hard player, so it must not be tuned against
hard (or against anything): a change would make old and new figures incomparable.
Fix only outright bugs (an illegal card), and say so in RESULTS.md.
"""

from __future__ import annotations

from ..cards import SUIT_MASKS, Card, CardSet, Suit, mask_of
from ..match import SeatView
from ..trick import winning_index
from .base import ComputerPlayer
from .knowledge import Knowledge

__all__ = ["YardstickPlayer", "yardstick_trump"]

_HONOURS = {12: 3.0, 11: 2.0, 10: 1.0, 9: 0.5}


def _cards(mask: CardSet) -> list[Card]:
    """Ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _in_suit(mask: CardSet, suit: int) -> list[Card]:
    return _cards(mask & SUIT_MASKS[suit])


def yardstick_trump(hand: CardSet) -> Suit:
    """The suit with the most length and honours (ties: the lower suit index)."""

    def score(suit: int) -> float:
        cards = _in_suit(hand, suit)
        return 2.0 * len(cards) + sum(_HONOURS.get(c % 13, 0.0) for c in cards)

    return Suit(max(range(4), key=lambda s: (score(s), -s)))


class _Seat:
    """What the seat knows for one card decision."""

    def __init__(self, view: SeatView) -> None:
        know = Knowledge(view)
        self.view = view
        self.n = view.variant.players
        self.seat: int = view.seat  # type: ignore[assignment]
        self.hand = know.hand
        self.legal = mask_of(a.card for a in view.legal)  # type: ignore[union-attr]
        self.unseen = know.unseen
        self.voids = know.voids
        self.trump: int | None = None if view.trump is None else int(view.trump)
        self.partner = (self.seat + 2) % 4 if self.n == 4 else None
        self.opponents = [s for s in range(self.n) if s != self.seat and s != self.partner]
        self.trick = list(view.trick)

    # ---------------------------------------------------------- facts

    def master(self, card: Card) -> bool:
        """No card this seat has not seen ranks above ``card`` in its suit."""
        higher = SUIT_MASKS[card // 13] & ~((2 << card) - 1)
        return not self.unseen & higher

    def may_ruff(self, seat: int, suit: int) -> bool:
        t = self.trump
        if t is None or suit == t or not self.voids[seat] >> suit & 1:
            return False
        return not self.voids[seat] >> t & 1 and bool(self.unseen & SUIT_MASKS[t])

    def later(self) -> list[int]:
        """Seats still to play to the trick after this one."""
        return [(self.seat + i) % self.n for i in range(1, self.n - len(self.trick))]

    def beats(self, card: Card) -> bool:
        cards = [c for _, c in self.trick]
        return winning_index([*cards, card], self.trump) == len(cards)

    def holds(self, card: Card, led: int, later_opps: list[int]) -> bool:
        """Whether ``card``, winning now, is sure to win the trick."""
        t = self.trump
        if card // 13 == t and led != t:
            higher = self.unseen & SUIT_MASKS[t] & ~((2 << card) - 1)  # type: ignore[index]
            return not higher or not any(
                self.voids[s] >> led & 1 and not self.voids[s] >> t & 1  # type: ignore[operator]
                for s in later_opps
            )
        return self.master(card) and not any(self.may_ruff(s, led) for s in later_opps)

    # ---------------------------------------------------------- cards

    def throw(self) -> Card:
        """A card to give up: from the shortest side suit, not a master, not the
        guard of a king; else the lowest trump."""
        t = self.trump
        legal = self.legal
        side = legal & ~SUIT_MASKS[t] if t is not None else legal
        if not side:
            return _cards(legal)[0]

        def cost(c: Card) -> tuple[float, int]:
            suit_cards = _in_suit(self.hand, c // 13)
            v = float(c % 13) + 0.6 * len(suit_cards)
            if self.master(c):
                v += 15
            if len(suit_cards) == 2 and any(
                x % 13 == 11 and not self.master(x) for x in suit_cards
            ):
                v += 6  # Kx: the small card guards the king
            return (v, c)

        return min(_cards(side), key=cost)

    def follow(self) -> Card:
        trick = self.trick
        cards = [c for _, c in trick]
        led = cards[0] // 13
        wi = winning_index(cards, self.trump)
        wseat, wcard = trick[wi]
        later = self.later()
        later_opps = [s for s in later if s != self.partner]
        legal = self.legal
        following = bool(legal & SUIT_MASKS[led])
        winners = [c for c in _cards(legal) if self.beats(c)]
        partner_wins = wseat == self.partner
        if partner_wins and (not later_opps or self.holds(wcard, led, later_opps)):
            return _cards(legal & SUIT_MASKS[led])[0] if following else self.throw()
        if following:
            if not winners:
                return _cards(legal)[0]
            if not later_opps:
                return winners[0]
            sure = [c for c in winners if self.holds(c, led, later_opps)]
            if sure:
                return sure[0]
            if partner_wins:
                return _cards(legal)[0]
            if self.partner is not None and self.partner in later:
                return _cards(legal)[0]  # second hand low: the partner plays after us
            return winners[-1] if winners[-1] % 13 >= 9 else winners[0]
        # Void in the suit led.
        if partner_wins or not winners:
            return self.throw()
        # Second hand: ruff only a high card; the partner may still win a low one.
        if (
            self.partner is not None
            and self.partner in later
            and later_opps
            and cards[0] % 13 < 9
            and not any(self.may_ruff(s, led) for s in later_opps)
        ):
            return self.throw()
        if later_opps and any(
            self.voids[s] >> led & 1 and not self.voids[s] >> self.trump & 1  # type: ignore[operator]
            for s in later_opps
        ):
            top = winners[-1]
            if self.holds(top, led, later_opps):
                return next(c for c in winners if self.holds(c, led, later_opps))
        return winners[0]

    def lead(self) -> Card:
        t = self.trump
        legal = self.legal
        view = self.view
        opps = self.opponents
        side_suits = [s for s in range(4) if s != t and legal & SUIT_MASKS[s]]

        def opp_ruffs(suit: int) -> bool:
            return any(self.may_ruff(o, suit) for o in opps)

        # The hakem's side draws trumps when long in them.
        if t is not None and legal & SUIT_MASKS[t]:
            mine = _in_suit(legal, t)
            out = (self.unseen & SUIT_MASKS[t]).bit_count()
            ours = view.hakem is not None and (
                view.hakem == self.seat or view.hakem == self.partner
            )
            opp_has = any(not self.voids[o] >> t & 1 for o in opps)
            if ours and out and opp_has and (len(mine) > out or len(mine) >= 5):
                return mine[-1] if self.master(mine[-1]) else mine[0]
        # Cash a master no opponent can ruff, where most cards are still out.
        cash = [
            (((self.unseen & SUIT_MASKS[s]).bit_count()), _in_suit(legal, s)[-1])
            for s in side_suits
            if self.master(_in_suit(legal, s)[-1]) and not opp_ruffs(s)
        ]
        if cash:
            return max(cash)[1]
        # Give the partner a ruff.
        if self.partner is not None and t is not None:
            for s in side_suits:
                p = self.partner
                if self.voids[p] >> s & 1 and not self.voids[p] >> t & 1 and not opp_ruffs(s):
                    return _in_suit(legal, s)[0]
        # A side singleton early, to ruff it later.
        if t is not None and len(_in_suit(legal, t)) >= 2 and len(view.tricks) < 6:
            singles = [
                _in_suit(legal, s)[0]
                for s in side_suits
                if len(_in_suit(legal, s)) == 1 and _in_suit(legal, s)[0] % 13 < 11
            ]
            if singles:
                return min(singles)
        # Return the partner's suit.
        if self.partner is not None:
            for rec in reversed(view.tricks):
                lead_seat, card = rec.plays[0]
                s = card // 13
                if lead_seat == self.partner and s != t and legal & SUIT_MASKS[s]:
                    mine = _in_suit(legal, s)
                    return mine[-1] if self.master(mine[-1]) else mine[0]
        pool = [s for s in side_suits if not opp_ruffs(s)] or side_suits
        if pool:

            def key(s: int) -> tuple[int, int]:
                mine = _in_suit(legal, s)
                bare_king = len(mine) == 2 and mine[-1] % 13 == 11 and not self.master(mine[-1])
                return (len(mine) - (3 if bare_king else 0), -mine[0])

            s = max(pool, key=key)
            mine = _in_suit(legal, s)
            # Top of a sequence headed just below a master (K from K-Q, A out).
            if len(mine) >= 2 and mine[-1] - mine[-2] == 1 and mine[-1] % 13 >= 9:
                above = SUIT_MASKS[s] & ~((2 << mine[-1]) - 1) & self.unseen
                if above.bit_count() <= 1:
                    return mine[-1]
            return mine[0]
        mine = _cards(legal)
        return mine[-1] if self.master(mine[-1]) else mine[0]


class YardstickPlayer(ComputerPlayer):
    """An independent, frozen rule-based player (the arena's yardstick)."""

    name = "yardstick"

    def choose_card(self, view: SeatView) -> Card:
        legal = [a.card for a in view.legal]  # type: ignore[union-attr]
        if len(legal) == 1:
            return legal[0]
        seat = _Seat(view)
        return seat.follow() if view.trick else seat.lead()

    def choose_trump(self, view: SeatView) -> Suit:
        return yardstick_trump(mask_of(view.hand))

    def choose_discards(self, view: SeatView) -> tuple[Card, Card]:
        """Two players: put away the two lowest side cards (trump and aces kept)."""
        t = None if view.trump is None else int(view.trump)
        ranked = sorted(view.hand, key=lambda c: (c // 13 == t, c % 13 == 12, c % 13, c))
        a, b = sorted(ranked[:2])
        return a, b

    def choose_keep(self, view: SeatView) -> bool:
        """Two players: keep a trump or a jack and above."""
        top = view.top_card
        if top is None:
            return True
        return (view.trump is not None and top // 13 == int(view.trump)) or top % 13 >= 9

    def choose_bid(self, view: SeatView) -> int:
        """Seed 004 (spades trump): aces, guarded kings and long spades; never nil."""
        hand = mask_of(view.hand)
        tricks = 0.0
        for s in range(4):
            cards = _in_suit(hand, s)
            ranks = {c % 13 for c in cards}
            tricks += 12 in ranks
            tricks += 11 in ranks and len(cards) >= 2
        tricks += max(0, len(_in_suit(hand, 0)) - 3)
        return max(1, min(13, int(tricks)))
