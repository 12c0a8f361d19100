"""The reactions' rate limit is in the database: one reaction per person per gap at a
table, however many workers take the presses (PostgreSQL and SQLite, two engines as
two worker processes would have)."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage import repo, session_factory
from telegram_bot.service.online_seats import ONLINE_CHAT_BASE

TABLE, OTHER_TABLE = ONLINE_CHAT_BASE - 5, ONLINE_CHAT_BASE - 6
NOW, GAP = 1_800_000_000.0, 5.0


async def test_one_reaction_per_gap_across_two_workers(workers: list[AsyncEngine]) -> None:
    sessions = [session_factory(engine) for engine in workers[:2]]
    async with sessions[0].begin() as s:
        for chat in (TABLE, OTHER_TABLE):
            await repo.get_or_create_chat(s, chat, "online")

    async def claim(worker: int, user: int, now: float, chat: int = TABLE) -> bool:
        async with sessions[worker].begin() as s:
            return await store.claim_reaction(s, chat, user, now, GAP)

    # Six presses of one person at once, on two workers: one reaction goes.
    results = await asyncio.gather(*(claim(i % 2, 7, NOW + i / 100) for i in range(6)))
    assert sorted(results) == [False] * 5 + [True]
    # Within the gap, on either worker: refused; another person has their own.
    assert not await claim(0, 7, NOW + GAP - 0.5)
    assert not await claim(1, 7, NOW + GAP - 0.5)
    assert await claim(1, 8, NOW + 1)
    assert await claim(0, 7, NOW + 1, chat=OTHER_TABLE)  # and another table its own
    # After the gap (from the one that went), again one.
    first = NOW + max(i / 100 for i, ok in enumerate(results) if ok)
    later = await asyncio.gather(claim(0, 7, first + GAP), claim(1, 7, first + GAP))
    assert sorted(later) == [False, True]
    # The table's chat row keeps its other settings.
    async with sessions[0].begin() as s:
        chat = await repo.get_chat(s, TABLE)
    assert chat is not None and set(chat.settings["reacted"]) == {"7", "8"}
