"""A diagnostic for the arena (``--a hard-sighted``): the hard player shown some
cards of the real deal, never offered at a table.

The oracle (:mod:`.oracle`) is shown every hand and plays double dummy. This player
searches exactly as hard does but its sampled deals hold the real cards of the seats
it is shown (``sighted``: 1 its partner's hand, 2 both opponents', 3 only which
aces, kings and queens its partner holds, 4 only its partner's trumps, 5 only which
aces its partner holds, 6 only how many cards of each suit its partner holds, 7
only which suits it holds at most one card of, and how many; 8 and 9 as 6 and 7,
but each suit only once the partner has played a card of it, as a perfect count
signal would tell it; 10 the partner's cards of each suit once it has played a
card of it), so what it gains over hard bounds what
perfect understanding with the partner (signals), or perfect reading of the
opponents (inference), could be worth to hard's search.
"""

from __future__ import annotations

from ..cards import FULL_DECK, SUIT_MASKS, CardSet
from ..match import Match, SeatView
from .hard import HardPlayer
from .knowledge import Knowledge

__all__ = ["ACES", "HONOURS", "SightedHardPlayer"]

#: Every ace, king and queen.
HONOURS: CardSet = sum(0b1110000000000 << (13 * suit) for suit in range(4))
#: Every ace.
ACES: CardSet = sum(1 << (13 * suit + 12) for suit in range(4))


class _Shown(Knowledge):
    """A seat's knowledge plus the current hands of the seats it is shown."""

    __slots__ = ("lengths", "shown")

    def __init__(
        self,
        view: SeatView,
        shown: dict[int, tuple[CardSet, CardSet]],
        lengths: dict[int, tuple[tuple[int, int], ...]] | None = None,
    ) -> None:
        super().__init__(view)
        #: seat -> (the cards it holds of ``among``, ``among``): :func:`.search.view_sample`.
        self.shown = shown
        #: seat -> how many cards of each suit it holds, (at least, at most).
        self.lengths = lengths


class SightedHardPlayer(HardPlayer):
    """hard, whose samples hold the real hands of the seats it is shown (4 players)."""

    name = "sighted"
    #: 1: the partner's hand; 2: both opponents' hands; 3: which aces, kings and
    #: queens the partner holds (and so that the opponents hold the others); 4: the
    #: partner's trumps; 5: which aces the partner holds; 6: how many cards of each
    #: suit the partner holds; 7: which suits it holds at most one card of (and so
    #: that it holds two or more of the others); 8, 9: as 6, 7, for the suits the
    #: partner has played a card of this hand (nothing of the others); 10: its
    #: cards of the suits it has played a card of.
    sighted = 1

    def __init__(self, seed: int | None = None, time_budget: float = 1.0) -> None:
        super().__init__(seed, time_budget)
        self._match: Match | None = None

    def see(self, match: Match) -> None:
        """The real match, before a decision (the arena's hook)."""
        self._match = match

    def _knowledge(self, view: SeatView) -> Knowledge:
        m = self._match
        if m is None or view.variant.players != 4 or view.seat is None:
            return super()._knowledge(view)
        me = view.seat
        partner = (me + 2) % 4
        told = 0b1111
        if self.sighted >= 8:
            told = 0
            for plays in [t.plays for t in view.tricks] + [view.trick]:
                for seat, card in plays:
                    if seat == partner:
                        told |= 1 << (card // 13)
        if self.sighted == 10:
            among = sum(SUIT_MASKS[u] for u in range(4) if told >> u & 1)
            return _Shown(view, {partner: (m.hands[partner] & among, among)})
        if self.sighted in (6, 7, 8, 9):
            held = m.hands[partner]
            exact = self.sighted in (6, 8)
            ranges = []
            for u in range(4):
                k = (held & SUIT_MASKS[u]).bit_count()
                if not told >> u & 1:
                    ranges.append((0, 13))
                else:
                    ranges.append((k, k) if exact or k <= 1 else (2, 13))
            return _Shown(view, {}, {partner: tuple(ranges)})
        among = {3: HONOURS, 4: SUIT_MASKS[int(view.trump or 0)], 5: ACES}.get(self.sighted)
        if among is not None:
            return _Shown(view, {partner: (m.hands[partner] & among, among)})
        seats = [partner] if self.sighted == 1 else [(me + 1) % 4, (me + 3) % 4]
        return _Shown(view, {s: (m.hands[s], FULL_DECK) for s in seats})
