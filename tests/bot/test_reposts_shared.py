"""The table comes back into view by what every worker saw in the group, not only
the worker that ends the hand (telegram_bot.service.reposts, PostgreSQL)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from core import HandEnded, HandKind
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage import create_engine, migrate, repo
from telegram_bot.platform.storage.db import session_factory
from telegram_bot.service import reposts
from tests.dbutil import fresh_database_url

GROUP = -100777


async def _shared(outbox, sessions) -> None:
    """One round of a worker's sharing: cancelled at once, it writes what it saw."""
    task = asyncio.create_task(reposts.share_newest(outbox, sessions, interval=3600))
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_the_worker_ending_a_hand_counts_what_the_others_saw(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        engine = create_engine(url)
        sessions = session_factory(engine)
        try:
            async with sessions.begin() as s:
                await repo.get_or_create_chat(s, GROUP, "supergroup", "G")
            seen_by_a = Outbox(None, sessions, shared=True)  # type: ignore[arg-type]
            ending = Outbox(None, sessions, shared=True)  # type: ignore[arg-type]
            alone = Outbox(None, sessions, shared=False)  # type: ignore[arg-type]
            game = SimpleNamespace(chat_id=GROUP, table_message_id=13)
            match = SimpleNamespace(is_over=False)
            ended = [HandEnded(1, 0, HandKind.NORMAL, (1, 0), (7, 0, 6, 0), (1, 0), 0)]

            async def due(outbox) -> bool:
                async with sessions() as s:
                    return await reposts.due(outbox, s, game, match, ended)

            # Worker A sent the table (13) and saw two more messages below it.
            for mid in (13, 14, 15):
                seen_by_a.note_message(GROUP, mid)
            assert await due(seen_by_a) and not await due(ending)
            await _shared(seen_by_a, sessions)
            assert await due(ending)
            # A single process keeps to what it saw itself.
            assert not await due(alone)

            # Stored ids only go up: a worker that saw less does not lower them.
            ending.note_message(GROUP, 12)
            await _shared(ending, sessions)
            async with sessions() as s:
                assert (await repo.get_chat(s, GROUP)).newest_message_id == 15
        finally:
            await engine.dispose()
