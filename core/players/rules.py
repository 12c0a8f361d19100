"""The rule-based player (lobby levels "normal" and "easy").

Trick play follows the rules a good club player states out loud: win a trick as
cheaply as possible, never overtake a partner who is already winning, throw the
lowest card when the trick is lost, lead trump when long in trump (حکم لازم), cash
master cards in suits where no opponent is known to be void, and remember voids.

The card logic works on a small :class:`PlayState` (masks and ints), not on a
:class:`~core.match.SeatView`, so the determinized search in :mod:`.hard` can use the
same policy for fast playouts on engine copies.
"""

from __future__ import annotations

from ..cards import CARDS, SUIT_MASKS, Card, CardSet, Suit, mask_of
from ..match import Match, SeatView
from ..trick import winning_index
from ..variant import Kind
from .base import ComputerPlayer
from .knowledge import Knowledge

__all__ = [
    "EasyPlayer",
    "PlayState",
    "RulePlayer",
    "bid_estimate",
    "choose_discards_rule",
    "choose_trump_rule",
    "keep_rule",
    "rule_card",
    "state_from_match",
    "state_from_view",
]

_TOP = 0x1FFF
_HONOUR = {12: 4.0, 11: 3.0, 10: 2.0, 9: 1.0}  # A, K, Q, J (index within suit)


def _bits(mask: CardSet, suit: int) -> int:
    return mask >> (13 * suit) & _TOP


def _lowest(mask: CardSet) -> Card:
    return CARDS[(mask & -mask).bit_length() - 1]


def _highest(mask: CardSet) -> Card:
    return CARDS[mask.bit_length() - 1]


def _iter(mask: CardSet):
    while mask:
        low = mask & -mask
        yield CARDS[low.bit_length() - 1]
        mask ^= low


class PlayState:
    """What the card policy needs to know, from the point of view of ``seat``."""

    __slots__ = (
        "bidding",
        "bids",
        "hakem",
        "hand",
        "leads",
        "legal",
        "n",
        "seat",
        "trick",
        "tricks_won",
        "trump",
        "unseen",
        "voids",
    )

    def __init__(
        self,
        *,
        n: int,
        seat: int,
        hand: CardSet,
        legal: CardSet,
        trick: list[tuple[int, int]] | tuple[tuple[int, int], ...],
        trump: int | None,
        unseen: CardSet,
        voids: list[int],
        tricks_won: list[int] | tuple[int, ...],
        hakem: int | None,
        bidding: bool = False,
        bids: tuple[int | None, ...] | list[int | None] = (),
        leads: tuple[tuple[int, int], ...] = (),
    ) -> None:
        self.n = n
        self.seat = seat
        self.hand = hand
        self.legal = legal
        self.trick = trick
        self.trump = trump
        self.unseen = unseen  # cards that may be in other players' hands
        self.voids = voids
        self.tricks_won = tricks_won
        self.hakem = hakem
        self.bidding = bidding
        self.bids = bids
        #: The first play (seat, card) of each complete trick before this one, in
        #: order; only the inference sets it (the yardstick's model reads it).
        self.leads = leads


def state_from_view(view: SeatView, know: Knowledge | None = None) -> PlayState:
    know = know or Knowledge(view)
    legal = mask_of(a.card for a in view.legal)  # type: ignore[union-attr]
    return PlayState(
        n=view.variant.players,
        seat=view.seat,  # type: ignore[arg-type]
        hand=know.hand,
        legal=legal,
        trick=view.trick,
        trump=view.trump,
        unseen=know.unseen,
        voids=know.voids,
        tricks_won=view.tricks_won,
        hakem=view.hakem,
        bidding=view.variant.kind is Kind.BIDDING,
        bids=view.bids,
    )


def state_from_match(m: Match, voids: list[int], live: CardSet) -> PlayState:
    """The policy's state for the seat to play in a (sampled) match.

    ``live`` is every card still in some hand; ``voids`` the voids shown so far.
    """
    seat = m.turn
    hand = m.hands[seat]
    return PlayState(
        n=m.n,
        seat=seat,  # type: ignore[arg-type]
        hand=hand,
        legal=m._playable(seat),  # type: ignore[arg-type]
        trick=m.trick,
        trump=m.trump,
        unseen=live & ~hand,
        voids=voids,
        tricks_won=m.tricks_won,
        hakem=m.hakem,
        bidding=m._bidding,
        bids=m.bids,
    )


# ---------------------------------------------------------------- trick play


def _beats(cards: list[int], card: int, trump: int | None) -> bool:
    return winning_index([*cards, card], trump) == len(cards)


def _beaters(winning: int, trump: int | None) -> CardSet:
    """The cards that would take a trick whose winning card so far is ``winning``:
    :func:`_beats` for all cards at once (the follow rule asks it for every past
    play of every deal the hard player weighs)."""
    suit = winning // 13
    out = SUIT_MASKS[suit] & ~((2 << winning) - 1)
    if trump is not None and suit != trump:
        out |= SUIT_MASKS[trump]
    return out


def _is_master(card: int, unseen: CardSet) -> bool:
    """No unseen card of the same suit ranks higher."""
    suit = card // 13
    higher = SUIT_MASKS[suit] & ~((2 << card) - 1)
    return not unseen & higher


def _opponents(st: PlayState) -> list[int]:
    if st.n == 4:
        return [(st.seat + 1) % 4, (st.seat + 3) % 4]
    return [s for s in range(st.n) if s != st.seat]


def _may_ruff(st: PlayState, seat: int, suit: int) -> bool:
    """``seat`` is known void in ``suit`` and may still hold a trump."""
    t = st.trump
    if t is None or suit == t or not st.voids[seat] >> suit & 1:
        return False
    return bool(not st.voids[seat] >> t & 1 and st.unseen & SUIT_MASKS[t])


def _want_win(st: PlayState) -> bool:
    """Bidding variant: whether taking tricks helps (nil bids want none)."""
    if not st.bidding or not st.bids or st.bids[st.seat] is None:
        return True
    me, opp = st.seat, 1 - st.seat
    my_bid = st.bids[me] or 0
    opp_bid = st.bids[opp]
    if my_bid == 0:
        return False
    if st.tricks_won[me] < my_bid:
        return True
    if opp_bid == 0:
        return st.tricks_won[opp] > 0  # let a nil bidder take a trick
    return opp_bid is not None and st.tricks_won[opp] < opp_bid


def _discard_value(st: PlayState, card: int) -> float:
    """How much we would regret throwing ``card`` away (lower: throw it)."""
    suit = card // 13
    r = card % 13
    v = float(r)
    if suit == st.trump:
        v += 20
    if _is_master(card, st.unseen):
        v += 8
    # Throwing from a short suit makes a void for ruffing later.
    length = _bits(st.hand, suit).bit_count()
    v += 0.4 * length
    return v


def _throw(st: PlayState) -> Card:
    """The cheapest card to give up."""
    legal = st.legal
    return min(_iter(legal), key=lambda c: _discard_value(st, c))


def _play_to_lose(st: PlayState) -> Card:
    """Highest card that does not take the trick (nil play); else the lowest."""
    legal = st.legal
    if not st.trick:
        # Lead the lowest card, preferring a non-trump.
        side = legal & ~SUIT_MASKS[st.trump] if st.trump is not None else legal
        pool = side or legal
        return min(_iter(pool), key=lambda c: (c % 13, c // 13 == st.trump))
    cards = [c for _, c in st.trick]
    losers = [c for c in _iter(legal) if not _beats(cards, c, st.trump)]
    if losers:
        return max(losers, key=lambda c: (c // 13 == st.trump, c % 13))
    return min(_iter(legal), key=lambda c: c % 13)


def rule_card(st: PlayState) -> Card:
    """The rule-based choice of card to play."""
    legal = st.legal
    if legal & (legal - 1) == 0:
        return CARDS[legal.bit_length() - 1]
    if not _want_win(st):
        return _play_to_lose(st)
    if not st.trick:
        return _lead(st)
    return _follow(st)


def _follow(st: PlayState) -> Card:
    n, seat, trump = st.n, st.seat, st.trump
    trick = st.trick
    cards = [c for _, c in trick]
    wi = winning_index(cards, trump)
    wseat = trick[wi][0]
    led = cards[0] // 13
    later = [(seat + i) % n for i in range(1, n - len(trick))]
    if n == 4 and wseat == (seat + 2) % 4:
        return _throw(st)  # never overtake a partner who is winning
    winners = list(_iter(st.legal & _beaters(cards[wi], trump)))
    if not winners:
        return _throw(st)
    opp_later = [s for s in later if n != 4 or s % 2 != seat % 2]
    if not opp_later:
        return winners[0]  # last (or only partner still to come): cheapest winner
    # Someone after us may overtake: prefer the cheapest winner that is safe.
    for c in winners:
        if _safe(st, c, led, opp_later):
            return c
    return winners[0]


def _safe(st: PlayState, card: int, led: int, opp_later: list[int]) -> bool:
    trump = st.trump
    unseen = st.unseen
    if card // 13 == trump and led != trump:
        # A ruff: safe unless a later opponent is void in the led suit and may hold
        # a higher trump.
        higher_trumps = unseen & SUIT_MASKS[trump] & ~((2 << card) - 1)  # type: ignore[index]
        if not higher_trumps:
            return True
        return not any(st.voids[s] >> led & 1 and not st.voids[s] >> trump & 1 for s in opp_later)  # type: ignore[operator]
    if not _is_master(card, unseen):
        return False
    return not any(_may_ruff(st, s, led) for s in opp_later)


def _lead(st: PlayState) -> Card:
    n, seat, trump, unseen = st.n, st.seat, st.trump, st.unseen
    legal = st.legal
    opps = _opponents(st)
    partner = (seat + 2) % 4 if n == 4 else None
    trumps_out = unseen & SUIT_MASKS[trump] if trump is not None else 0
    my_trumps = legal & SUIT_MASKS[trump] if trump is not None else 0

    # Trump lead (حکم لازم): long in trump while opponents may still hold some.
    if trump is not None and my_trumps and trumps_out:
        opp_hold = any(not st.voids[s] >> trump & 1 for s in opps)
        n_mine = my_trumps.bit_count()
        n_out = trumps_out.bit_count()
        if opp_hold and (
            n_mine >= n_out or (n_mine >= 3 and _is_master(_highest(my_trumps), unseen))
        ):
            top = _highest(my_trumps)
            return top if _is_master(top, unseen) else _lowest(my_trumps)

    side_suits = [s for s in range(4) if s != trump and legal & SUIT_MASKS[s]]

    def opp_ruffs(s: int) -> bool:
        return any(_may_ruff(st, o, s) for o in opps)

    # Cash a master card in a suit where no opponent will ruff; the suit with the
    # most cards still out first (opponents are then likely to follow).
    best = None
    for s in side_suits:
        top = _highest(legal & SUIT_MASKS[s])
        if _is_master(top, unseen) and not opp_ruffs(s) and unseen & SUIT_MASKS[s]:
            key = (unseen & SUIT_MASKS[s]).bit_count()
            if best is None or key > best[0]:
                best = (key, top)
    if best is not None:
        return best[1]
    # Give the partner a ruff: a suit the partner is void in, no opponent is.
    if partner is not None and trump is not None:
        for s in side_suits:
            if (
                st.voids[partner] >> s & 1
                and not st.voids[partner] >> trump & 1
                and not opp_ruffs(s)
            ):
                return _lowest(legal & SUIT_MASKS[s])
    # Otherwise lead low from the longest suit no opponent ruffs, avoiding a
    # suit whose top card we would be leading away from an honour.
    safe = [s for s in side_suits if not opp_ruffs(s)] or side_suits
    if safe:

        def lead_key(s: int) -> tuple[float, int]:
            bits = _bits(legal, s)
            length = bits.bit_count()
            honours = sum(1 for r in range(9, 13) if bits >> r & 1)
            # A lone honour is a poor lead.
            lone = 1 if length == 1 and honours else 0
            return (length - 3 * lone, -(bits & -bits).bit_length())

        s = max(safe, key=lead_key)
        return _lowest(legal & SUIT_MASKS[s])
    # Only trumps left.
    top = _highest(legal)
    return top if _is_master(top, unseen) else _lowest(legal)


# ---------------------------------------------------------- other decisions


def suit_strength(hand: CardSet, suit: int) -> float:
    bits = _bits(hand, suit)
    length = bits.bit_count()
    honours = sum(v for r, v in _HONOUR.items() if bits >> r & 1)
    mid = sum(0.3 for r in range(5, 9) if bits >> r & 1)  # 7..10
    return 2.2 * length + honours + mid


def choose_trump_rule(hand: CardSet) -> Suit:
    """Trump by the length and strength of the first five cards."""
    return Suit(max(range(4), key=lambda s: (suit_strength(hand, s), -s)))


def card_value(card: int, trump: int | None) -> float:
    """A card's worth when deciding what to keep: trump and high cards."""
    r = card % 13  # 0..12
    v = float(r)
    if card // 13 == trump:
        v += 9.0
    if r >= 11:  # A, K: tricks on their own
        v += 3.0
    return v


def choose_discards_rule(
    hand: tuple[Card, ...] | list[Card], trump: int | None
) -> tuple[Card, Card]:
    """Two players: put away the two least useful cards, keeping trump and honours."""
    ranked = sorted(hand, key=lambda c: (card_value(c, trump), c))
    a, b = sorted(ranked[:2])
    return a, b


def keep_rule(view: SeatView, know: Knowledge | None = None) -> bool:
    """Keep the top card when it beats what the next card is worth on average."""
    top = view.top_card
    if top is None:
        return True
    know = know or Knowledge(view)
    return keeps_top(top, know.unseen, view.trump)


def keeps_top(top: Card, unseen: CardSet, trump: int | None) -> bool:
    """:func:`keep_rule` on masks: ``unseen`` the cards the drawing seat has not seen."""
    values = [card_value(c, trump) for c in _iter(unseen)]
    expected = sum(values) / len(values) if values else 0.0
    return card_value(top, trump) >= expected


def bid_estimate(hand: CardSet) -> float:
    """Seed 004: expected tricks from high cards and spade length (spades trump)."""
    est = 0.0
    spades = _bits(hand, 0)
    ns = spades.bit_count()
    for r, v in ((12, 1.0), (11, 0.85), (10, 0.6), (9, 0.35)):
        if spades >> r & 1:
            est += v
    est += max(0, ns - 3) * 0.75
    for s in (1, 2, 3):
        bits = _bits(hand, s)
        length = bits.bit_count()
        if bits >> 12 & 1:
            est += 0.95 if length <= 6 else 0.7
        if bits >> 11 & 1:
            est += 0.7 if length >= 2 else 0.35
        if bits >> 10 & 1 and length >= 3:
            est += 0.35
        if length <= 1 and ns >= 2:
            est += 0.5 * (2 - length) * min(1.0, (ns - 1) / 3)
    return est


def _nil_ok(hand: CardSet) -> bool:
    """No card that is hard to get rid of: a spade ten or higher, a side ace or
    king, a queen without three cards under it."""
    spades = _bits(hand, 0)
    if spades >> 8:  # any spade 10 or higher
        return False
    for s in (1, 2, 3):
        bits = _bits(hand, s)
        if bits >> 11:  # A or K
            return False
        if bits >> 10 & 1 and bits.bit_count() <= 3:
            return False
    return True


#: Nil when the expected tricks (:func:`bid_estimate`) are under this; more when
#: far behind, where a safe small bid cannot catch up anyway. Nil pays +100 / -100,
#: so it needs better than even chances: forced nils of the rule player with 1 to
#: 2.5 expected tricks were made 0-40% of the time (seeds 0-5999), and the draw
#: keeps good cards, so :func:`_nil_ok` hands are rare and nil is rarely bid.
NIL_TRICKS = 1.6
NIL_TRICKS_BEHIND = 2.2


def nil_rule(view: SeatView) -> bool:
    """Bid nil from the expected tricks of the hand and the score: a hand expected
    to take almost nothing and holding no card that is hard to lose; never when a
    plain bid would already take us to the target."""
    me = view.seat
    assert me is not None
    hand = mask_of(view.hand)
    if not _nil_ok(hand):
        return False
    est = bid_estimate(hand)
    mine, theirs = view.scores[me], view.scores[1 - me]
    target = view.variant.target
    if mine + 10 * max(1, int(est + 0.3)) >= target:
        return False
    limit = NIL_TRICKS_BEHIND if theirs - mine >= 150 else NIL_TRICKS
    return est < limit


def bid_rule(view: SeatView) -> int:
    if nil_rule(view):
        return 0
    return max(1, min(13, int(bid_estimate(mask_of(view.hand)) + 0.3)))


def blind_rule(view: SeatView) -> bool:
    """Blind nil (declared before seeing a card: +200 or -200; the rule player makes
    it about one time in twelve) only as a last chance: the opponent is about to
    reach the target, and only a blind nil's 200 points could take us there in the
    same hand. Declaring it whenever far behind failed hand after hand, and the
    scores drifted down instead of ending the match."""
    me = view.seat
    assert me is not None
    mine, theirs = view.scores[me], view.scores[1 - me]
    target = view.variant.target
    return theirs >= target - 60 and mine + 130 < target <= mine + 200


def exchange_rule(view: SeatView) -> tuple[Card, ...]:
    """After a blind nil: give away up to three of the most dangerous cards."""

    def danger(c: int) -> float:
        r = c % 13
        return r + (6 if c < 13 else 0)

    ranked = sorted(view.hand, key=danger, reverse=True)
    return tuple(sorted(c for c in ranked[:3] if danger(c) >= 10))


class RulePlayer(ComputerPlayer):
    """Level "normal": the rule-based player."""

    name = "normal"

    def choose_card(self, view: SeatView) -> Card:
        return rule_card(state_from_view(view))

    def choose_trump(self, view: SeatView) -> Suit:
        return choose_trump_rule(mask_of(view.hand))

    def choose_discards(self, view: SeatView) -> tuple[Card, Card]:
        return choose_discards_rule(view.hand, view.trump)

    def choose_keep(self, view: SeatView) -> bool:
        return keep_rule(view)

    def choose_blind(self, view: SeatView) -> bool:
        return blind_rule(view)

    def choose_exchange(self, view: SeatView) -> tuple[Card, ...]:
        return exchange_rule(view)

    def choose_bid(self, view: SeatView) -> int:
        return bid_rule(view)


class EasyPlayer(RulePlayer):
    """Level "easy": the rule-based player, but a random legal card 30% of the time."""

    name = "easy"
    randomness = 0.3

    def choose_card(self, view: SeatView) -> Card:
        if self.rng.random() < self.randomness:
            return self.rng.choice([a.card for a in view.legal])  # type: ignore[union-attr]
        return super().choose_card(view)

    def choose_trump(self, view: SeatView) -> Suit:
        if self.rng.random() < self.randomness:
            return Suit(self.rng.randrange(4))
        return super().choose_trump(view)
