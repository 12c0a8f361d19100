"""Issue 22, defect 12: a move's writes and the outbox's cleanup lock the games' rows
before the outbox's (one lock order), so two workers racing on one game cannot
deadlock (they did: ``UPDATE games SET private_messages = …`` against the outbox's
``DELETE``, right after a worker was killed).

Two workers, each with its own engine, on one PostgreSQL database. Worker A flushes
what its drain did (a hand message's bind, and the deletion of an edit carried out);
worker B makes a move on the same game, replacing that edit. A barrier stops A after
its first statement until B is waiting on a lock, then lets A go on: with the old
order (the deletion first) A then waits for B's game row while B waits for A's
outbox row, and PostgreSQL aborts one of them.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.outbox.cleanup import LOCK_ORDER, bind_order
from telegram_bot.platform.outbox.rows import _Batch
from telegram_bot.platform.storage import create_engine, migrate, repo
from telegram_bot.platform.storage.db import session_factory
from tests.dbutil import fresh_database_url

CHAT = -100777
USER = 42


class _Paused(AsyncSession):
    """A session that, after its first statement, tells ``first_done`` and waits for
    ``go`` (the barrier between the two workers)."""

    first_done: asyncio.Event
    go: asyncio.Event
    statements: list[str]

    async def execute(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        result = await super().execute(statement, *args, **kwargs)
        type(self).statements.append(str(statement).split()[0].upper())
        if not type(self).first_done.is_set():
            type(self).first_done.set()
            await type(self).go.wait()
        return result


async def _waiting_on_a_lock(engine) -> int:
    async with engine.connect() as c:
        return await c.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            )
        )


async def test_a_move_and_a_cleanup_racing_on_one_game_do_not_deadlock(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        engines = [create_engine(url, pool_size=2, max_overflow=0) for _ in range(3)]
        try:
            await _race(*engines)
        finally:
            for e in engines:
                await e.dispose()


async def _race(engine_a, engine_b, watcher) -> None:
    setup = session_factory(watcher)
    async with setup.begin() as s:
        await repo.get_or_create_chat(s, CHAT, "supergroup", "Race")
        game = await repo.create_game(s, CHAT, USER, status="playing")
        slot_t, slot_h = f"t:{game.id}", f"h:{game.id}:{USER}"
        ids = (
            await s.execute(
                text(
                    "INSERT INTO outbox (chat_id, op, slot, text, created_at) VALUES "
                    "(:c, 'edit', :t, 'old table', now()), (:c, 'send', :h, 'hand', now()) "
                    "RETURNING id"
                ),
                {"c": CHAT, "t": slot_t, "h": slot_h},
            )
        ).scalars()
        edit_id, send_id = list(ids)

    class Paused(_Paused):
        first_done = asyncio.Event()
        go = asyncio.Event()
        statements: ClassVar[list[str]] = []

    worker_a = Outbox(
        None, async_sessionmaker(engine_a, class_=Paused, expire_on_commit=False), shared=True
    )  # type: ignore[arg-type]
    worker_b = Outbox(None, session_factory(engine_b), shared=True)  # type: ignore[arg-type]

    # A: its drain has carried out the edit and sent the hand message (id 555).
    batch = _Batch([], read=True)
    batch.finished = [edit_id, send_id]
    batch.binds = [(send_id, slot_h, 555)]
    flush = asyncio.create_task(worker_a._cleaner.flush(batch, now=True))
    await Paused.first_done.wait()

    # B: a move on the same game, whose new table replaces the edit still stored.
    async def move() -> None:
        async with worker_b.transaction() as s:
            await repo.get_game(s, game.id, lock=True)
            await worker_b.edit(s, CHAT, "new table", slot=slot_t)

    moving = asyncio.create_task(move())
    while await _waiting_on_a_lock(watcher) < 1:  # B waits for a lock A holds
        assert not moving.done(), moving.exception()
        await asyncio.sleep(0.01)
    Paused.go.set()
    results = await asyncio.gather(flush, moving, return_exceptions=True)
    assert results == [None, None], results  # no DeadlockDetectedError
    # The games' rows first, then the outbox's.
    assert Paused.statements[0] == "UPDATE" and "DELETE" in Paused.statements[1:]
    async with setup() as s:
        pm = await s.scalar(
            text("SELECT private_messages FROM games WHERE id = :g"), {"g": game.id}
        )
        left = (await s.execute(text("SELECT id, op, text FROM outbox ORDER BY id"))).all()
    assert pm == {str(USER): 555}
    assert [(op, t) for _, op, t in left] == [("edit", "new table")]


def test_the_lock_order_is_stated_and_binds_go_in_game_order():
    assert LOCK_ORDER == ("games", "outbox", "shown_messages")
    binds = [(1, "h:zz:1", 5), (2, "t:aa", 6), (3, "h:aa:2", 7)]
    assert [b[0] for b in bind_order(binds)] == [3, 2, 1]
