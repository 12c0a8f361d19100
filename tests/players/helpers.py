"""Hand-built positions for player tests."""

from __future__ import annotations

from core.cards import Suit, mask_of, parse_card
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
