"""Hand-built positions for player tests."""

from __future__ import annotations

import random
import time

from core.cards import CardSet, Suit, mask_of, parse_card
from core.match import Match, Phase, TrickRecord
from core.variant import Variant


def cards(text: str) -> list:
    return [parse_card(t) for t in text.split()]


def position(
    hands: dict[int, str],
    *,
    trump: str = "S",
    trick: str = "",
    leader: int = 0,
    tricks: list[tuple[int, str]] = (),  # type: ignore[assignment]
    players: int = 4,
    hakem: int = 0,
) -> Match:
    """A play-phase match: ``hands`` per seat, earlier ``tricks`` as (leader, cards
    in playing order) and the current ``trick`` (cards from ``leader`` on)."""
    v = Variant(players=players)
    m = Match(v)
    m.phase = Phase.PLAY
    m.trump = Suit.parse(trump)
    m.hakem = hakem
    m.hands = [mask_of(cards(hands.get(s, ""))) for s in range(players)]
    won = [0] * players
    from core.trick import trick_winner

    for lead, text in tricks:
        plays = tuple(((lead + i) % players, c) for i, c in enumerate(cards(text)))
        w = trick_winner(plays, m.trump)
        m.tricks.append(TrickRecord(lead, plays, w))
        won[w] += 1
    m.tricks_won = won
    played = cards(trick)
    m.trick = [((leader + i) % players, c) for i, c in enumerate(played)]
    m.leader = leader
    m.turn = (leader + len(played)) % players
    return m


def slow_full_deal(seed: int = 3, deals: int = 40) -> tuple[float, list[CardSet]]:
    """The slowest of a few random full deals to ask "can the side on lead take 7?"
    (tens of ms and more), with the seconds it took. Another deal is solved after it,
    so the next solve of it cannot reuse DDS's tables."""
    from core.players.double_dummy import dds_cards_reaching

    rng = random.Random(seed)
    cards = list(range(52))

    def deal() -> list[CardSet]:
        rng.shuffle(cards)
        return [sum(1 << c for c in cards[13 * s : 13 * s + 13]) for s in range(4)]

    slowest: tuple[float, list[CardSet]] | None = None
    for _ in range(deals):
        hands = deal()
        t0 = time.perf_counter()
        dds_cards_reaching(hands, (), 0, 0, 7)
        took = time.perf_counter() - t0
        if slowest is None or took > slowest[0]:
            slowest = (took, hands)
    assert slowest is not None
    dds_cards_reaching(deal(), (), 0, 0, 7)
    return slowest


def played(variant: Variant, seed: int, plays: int, player) -> Match:
    """The first hand of ``Match.new(variant, seed)``, trump named and ``plays``
    cards played by ``player``."""
    m, _ = Match.new(variant, seed)
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, player.act(m.view(m.turn)))
    for _ in range(plays):
        m.apply(m.turn, player.act(m.view(m.turn)))
    return m
