"""Play with anyone: the service's calls on the queue (joining, matching, the
computers' offer). The handlers (/online, its buttons) and the tables' set-up call
these; the rules of who sits with whom are in :mod:`.matching`, the ratings in
:mod:`.ratings`, the rows in :mod:`telegram_bot.platform.storage.online`.

Each call runs in the caller's transaction::

    async with Session.begin() as session:
        joined = await online.join(session, user_id, 4, "fa", now)
    async with Session.begin() as session:          # one worker's matching round
        for table in await online.match(session, 4, now):
            ...  # create the table's game in this same transaction

or, a table a transaction (what the bots' matching loop does)::

    async with Session.begin() as guard:            # held while the round seats
        for ids in await online.pick(guard, 4, now):
            async with Session.begin() as session:  # one short transaction a table
                table = await online.claim(session, 4, ids)
                if table is not None:
                    ...  # create the table's game in this same transaction
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage.online import OFFER_AFTER, Joined, Queued
from telegram_bot.service import matching, ratings

__all__ = [
    "OFFER_AFTER",
    "Joined",
    "Queued",
    "claim",
    "due_offers",
    "join",
    "leave",
    "match",
    "pick",
]


async def join(session: Any, user_id: int, players: int, language: str, now: datetime) -> Joined:
    """Queue the person for a game of ``players``, at their rating in that game."""
    skill = await ratings.skill_of(session, user_id, players)
    return await store.join(
        session,
        user_id,
        players,
        language,
        ratings.matching_value(skill),
        matching.BAND_START,
        now,
    )


async def leave(session: Any, user_id: int) -> Queued | None:
    """Out of the queue (the leave button, or taking the computers' offer)."""
    return await store.leave(session, user_id)


async def match(
    session: Any, players: int, now: datetime, policy: matching.Policy = matching.DEFAULT
) -> list[list[Queued]]:
    """Seat the tables that can be made now in a game of ``players``."""
    pick = functools.partial(_pick, players=players, policy=policy)
    return await store.match_tables(session, players, now, pick)


async def pick(
    session: Any,
    players: int,
    now: datetime,
    policy: matching.Policy = matching.DEFAULT,
    *,
    limit: int = 1000,
) -> list[tuple[int, ...]]:
    """The tables to seat now in a game of ``players``, as user ids, from a read of the
    queue that locks no row; ``[]`` if another matcher of this game is at work (its
    lock is then held until the caller's transaction ends). Seat each with
    :func:`claim` in a transaction of its own."""
    if not await store.lock_matcher(session, players):
        return []
    waiting = await store.waiting(session, players, limit=limit)
    return matching.pick_tables(waiting, players, now, policy)


async def claim(session: Any, players: int, user_ids: Sequence[int]) -> list[Queued] | None:
    """Take one picked table out of the queue (None: one of them is gone or busy)."""
    return await store.claim_table(session, players, user_ids)


def _pick(
    waiting: list[Queued], now: datetime, *, players: int, policy: matching.Policy
) -> list[tuple[int, ...]]:
    return matching.pick_tables(waiting, players, now, policy)


async def due_offers(session: Any, now: datetime, after: float = OFFER_AFTER) -> list[Queued]:
    """Those to be offered to start now with computers (each claimed once)."""
    return await store.due_offers(session, now, after)
