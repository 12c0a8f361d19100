"""Finished hands, kept so that their players can review them (telegram_bot.service.review).

The engine deals the next hand in the same move that ends one, so the stored match
never shows a finished hand's cards again. :func:`record_finished` is called by the
game service in the transaction of every accepted move, before the match state is
overwritten: when the move ended a 4-player hand, it rebuilds that hand (the deal as
it stood when play began, and every card played, in order) from the stored state the
move started from and the move's events, and keeps one row per human player.

Only each player's last :data:`KEEP` hands are kept: a review button of an older
hand is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from core import (
    CARDS,
    CardPlayed,
    CardSet,
    ChooseTrump,
    Event,
    HandEnded,
    Kind,
    Match,
    Phase,
    Suit,
    TrumpChosen,
    cards_in,
    mask_of,
    parse_card,
)
from telegram_bot.platform.storage.models import Game, HandRecord

__all__ = [
    "KEEP",
    "FinishedHand",
    "finished_hand",
    "get",
    "latest",
    "record_finished",
    "reviewable",
    "unpack",
]

#: Hands kept per player (the newest ones).
KEEP = 3


@dataclass(frozen=True, slots=True)
class FinishedHand:
    hand_no: int
    trump: Suit
    #: Per seat, the cards held when play began.
    deal: tuple[CardSet, ...]
    #: The cards played, in order: (seat, card index).
    plays: tuple[tuple[int, int], ...]


def reviewable(match: Match) -> bool:
    """Only 4-player Hokm hands are reviewed (the double-dummy solver plays four)."""
    return match.n == 4 and match.variant.kind is not Kind.BIDDING


def finished_hand(prior_state: str | None, events: Sequence[Event]) -> FinishedHand | None:
    """The hand that ``events`` ended, rebuilt from the stored state before them
    (``prior_state``, the match JSON the move was applied to); None when they end no
    reviewable hand.

    One move may span a whole hand (computers playing for an away hakem from the
    trump call on), so a trump call among the events is replayed to see the deal
    it completes."""
    ended = next((e for e in events if isinstance(e, HandEnded)), None)
    if ended is None or prior_state is None:
        return None
    match = Match.from_json(prior_state)
    if not reviewable(match) or match.hand_no != ended.hand_no:
        return None
    deal: list[CardSet] | None = None
    plays: list[tuple[int, int]] = []
    if match.phase is Phase.PLAY:
        plays = [(s, int(c)) for t in match.tricks for s, c in t.plays]
        plays += [(s, int(c)) for s, c in match.trick]
        deal = list(match.hands)
        for seat, card in plays:
            deal[seat] |= 1 << card
    for e in events:
        if isinstance(e, TrumpChosen):
            match.apply(e.seat, ChooseTrump(e.suit))
            deal = list(match.hands)
        elif isinstance(e, CardPlayed):
            plays.append((e.seat, int(e.card)))
        elif isinstance(e, HandEnded):
            break
    if deal is None or match.trump is None or not plays:
        return None
    return FinishedHand(ended.hand_no, match.trump, tuple(deal), tuple(plays))


async def record_finished(
    s: AsyncSession, game: Game, match: Match, events: Sequence[Event]
) -> None:
    """Keep the hand ``events`` ended for each of its human players. Call it before
    ``game.state`` is overwritten with ``match`` (the state after the move)."""
    if not any(isinstance(e, HandEnded) for e in events):
        return
    hand = finished_hand(game.state, events)
    if hand is None:
        return
    players = [_player(game.seats[match.order[seat]], match.order[seat]) for seat in range(4)]
    deal = [[c.ascii for c in cards_in(h)] for h in hand.deal]
    plays = [[seat, CARDS[card].ascii] for seat, card in hand.plays]
    for seat, info in enumerate(players):
        uid = info["user_id"]
        if uid is None:
            continue
        s.add(
            HandRecord(
                user_id=uid,
                game_id=game.id,
                hand_no=hand.hand_no,
                seat=seat,
                trump=hand.trump.letter,
                deal=deal,
                plays=plays,
                players=players,
            )
        )
        await s.flush()
        await _keep_newest(s, uid)


def _player(info: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "user_id": info.get("user_id"),
        "name": info.get("name") or "",
        "bot": info.get("bot"),
        # A computer is named by its seat in the lobby ("Computer 4").
        "number": index + 1,
    }


async def _keep_newest(s: AsyncSession, user_id: int) -> None:
    newest = (
        select(HandRecord.id)
        .where(HandRecord.user_id == user_id)
        .order_by(HandRecord.id.desc())
        .limit(KEEP)
    )
    ids = list(await s.scalars(newest))
    await s.execute(
        delete(HandRecord).where(HandRecord.user_id == user_id, HandRecord.id.not_in(ids))
    )


async def get(s: AsyncSession, user_id: int, game_id: str, hand_no: int) -> HandRecord | None:
    return await s.scalar(
        select(HandRecord).where(
            HandRecord.user_id == user_id,
            HandRecord.game_id == game_id,
            HandRecord.hand_no == hand_no,
        )
    )


async def latest(s: AsyncSession, user_id: int) -> HandRecord | None:
    """The player's most recently finished hand."""
    return await s.scalar(
        select(HandRecord)
        .where(HandRecord.user_id == user_id)
        .order_by(HandRecord.id.desc())
        .limit(1)
    )


def unpack(record: HandRecord) -> FinishedHand:
    """The stored hand as the reviewer needs it."""
    return FinishedHand(
        record.hand_no,
        Suit.parse(record.trump),
        tuple(mask_of(parse_card(c) for c in hand) for hand in record.deal),
        tuple((int(seat), int(parse_card(card))) for seat, card in record.plays),
    )
