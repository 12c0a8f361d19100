"""Several workers on one database: people join while three matchers run, each on
its own engine (as three worker processes would on PostgreSQL). Nobody is seated twice
and nobody is left waiting after being seated.

On PostgreSQL (skipped without it; a failure with HOKM_TEST_PG=1) and, as one process
with several connections, on SQLite. The tasks start together at a barrier and wait
on each other's progress, never on the clock.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage import repo, session_factory
from telegram_bot.service import online
from tests.dbutil import WORKER_ENGINES

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WORKERS = WORKER_ENGINES
ROUNDS = 4
# A matcher gives up after this many rounds without the queue emptying (a failure,
# not a wait: each round is one transaction, and the joins finish in a few).
MAX_ROUNDS = 2000


@pytest.mark.slow
@pytest.mark.parametrize("way", ["one transaction", "a table a transaction"])
async def test_eight_people_and_three_matchers_make_two_tables(
    workers: list[AsyncEngine], way: str
) -> None:
    """Both ways of a round: :func:`online.match` (the round's tables in one
    transaction) and :func:`online.pick` then :func:`online.claim` for each table in a
    transaction of its own, as the bots' matching loop does."""
    sessions = [session_factory(engine) for engine in workers]
    for round_no in range(ROUNDS):
        await _round(sessions, round_no, way)


async def _match(
    sessions: async_sessionmaker[AsyncSession], now: datetime, way: str
) -> list[list[int]]:
    """One matcher's round; the tables it seated."""
    if way == "one transaction":
        async with sessions.begin() as session:
            return [[e.user_id for e in table] for table in await online.match(session, 4, now)]
    made = []
    async with sessions() as guard:  # held (the matcher's lock) while each table is seated
        picked = await online.pick(guard, 4, now)
        if guard.get_bind().dialect.name != "postgresql":
            await guard.rollback()
        for ids in picked:
            async with sessions.begin() as session:
                table = await online.claim(session, 4, ids)
            if table is not None:
                assert [e.user_id for e in table] == list(ids)
                made.append(list(ids))
    return made


async def _round(sessions: list[async_sessionmaker[AsyncSession]], round_no: int, way: str) -> None:
    """8 people join and 3 matchers run, all from one barrier: 2 tables, all seated."""
    now = NOW + timedelta(minutes=round_no)
    people = [round_no * 100 + i for i in range(1, 9)]
    barrier = asyncio.Barrier(len(people) + WORKERS)
    joined: list[int] = []
    all_joined = asyncio.Event()

    async def person(uid: int, worker: int) -> None:
        await barrier.wait()
        async with sessions[worker].begin() as session:
            result = await online.join(session, uid, 4, "fa" if uid % 2 else "en", now)
        assert result.status == "queued"
        joined.append(uid)
        if len(joined) == len(people):
            all_joined.set()

    async def matcher(worker: int) -> list[list[int]]:
        await barrier.wait()
        made: list[list[int]] = []
        for _ in range(MAX_ROUNDS):
            made += await _match(sessions[worker], now, way)
            async with sessions[worker].begin() as session:
                left = await store.waiting(session)
            if all_joined.is_set() and not left:
                return made
            await asyncio.sleep(0)  # let the others on (not a wait for time)
        raise AssertionError(f"the queue never emptied: {left!r}")

    results = await asyncio.gather(
        *(person(uid, i % WORKERS) for i, uid in enumerate(people)),
        *(matcher(w) for w in range(WORKERS)),
    )
    tables = [table for made in results[len(people) :] for table in made]
    seated = [uid for table in tables for uid in table]
    assert len(tables) == 2, tables
    assert sorted(seated) == sorted(people)  # everyone, once
    for table in tables:  # 4 of each language: a table of one language each
        assert len({uid % 2 for uid in table}) == 1
    async with sessions[0].begin() as session:
        assert await store.waiting(session) == []


async def test_a_join_racing_the_matcher_sees_the_game(workers: list[AsyncEngine]) -> None:
    """Someone seated by a matcher whose transaction is still open asks again: their
    join waits for the matcher's row lock and then finds them playing."""
    if workers[0].dialect.name != "postgresql":
        pytest.skip("PostgreSQL's row locks (SQLite has one writer: the join waits to begin)")
    matcher_sessions, joiner_sessions = session_factory(workers[0]), session_factory(workers[1])
    async with matcher_sessions.begin() as session:
        await repo.get_or_create_chat(session, -1, "private")
        for uid in (1, 2):
            await online.join(session, uid, 2, "fa", NOW)

    async with matcher_sessions.begin() as session:
        [table] = await online.match(session, 2, NOW)
        seats = [{"user_id": e.user_id, "name": str(e.user_id), "bot": None} for e in table]
        await repo.create_game(session, -1, 1, seats=seats, status="playing")
        joiner = asyncio.create_task(_join(joiner_sessions, 1))
        await _until_waiting_for_a_lock(workers[2])
        assert not joiner.done()
    joined = await joiner
    assert joined.status == "playing"
    async with joiner_sessions.begin() as session:
        assert await store.waiting(session) == []


async def test_a_picked_table_is_claimed_once(workers: list[AsyncEngine]) -> None:
    """Two matchers claim the same picked table: the second gets None while the first's
    transaction is open (its rows locked: skipped, not waited for) and after it
    commits (the rows gone); everyone is seated once and nobody is left queued."""
    first, second = session_factory(workers[0]), session_factory(workers[1])
    async with first.begin() as session:
        for uid in (1, 2, 3, 4, 5):
            await online.join(session, uid, 4, "fa", NOW + timedelta(seconds=uid))
    async with first() as guard:
        picked = await online.pick(guard, 4, NOW + timedelta(seconds=10))
    assert picked == [(1, 2, 3, 4)]
    async with first.begin() as session:
        table = await online.claim(session, 4, picked[0])
        assert table is not None and [e.user_id for e in table] == [1, 2, 3, 4]
        if workers[0].dialect.name == "postgresql":  # SQLite: one writer, it would wait
            async with second.begin() as other:
                assert await online.claim(other, 4, picked[0]) is None
    async with second.begin() as session:
        assert await online.claim(session, 4, picked[0]) is None
        assert [e.user_id for e in await store.waiting(session)] == [5]


async def test_a_table_with_someone_gone_is_not_seated(workers: list[AsyncEngine]) -> None:
    """One of a picked table left before it was claimed: nobody is seated, the others
    keep their places in the queue."""
    sessions = session_factory(workers[0])
    async with sessions.begin() as session:
        for uid in (1, 2, 3, 4):
            await online.join(session, uid, 4, "fa", NOW + timedelta(seconds=uid))
    async with sessions() as guard:
        [ids] = await online.pick(guard, 4, NOW + timedelta(seconds=10))
    async with sessions.begin() as session:
        await online.leave(session, 3)
    async with sessions.begin() as session:
        assert await online.claim(session, 4, ids) is None
    async with sessions.begin() as session:
        assert [e.user_id for e in await store.waiting(session)] == [1, 2, 4]


async def test_a_second_matcher_picks_nothing_while_one_is_at_work(
    workers: list[AsyncEngine],
) -> None:
    """PostgreSQL: the round's lock is held while its tables are seated, so another
    worker's matcher of the same game picks nothing meanwhile (one matcher at a time)."""
    if workers[0].dialect.name != "postgresql":
        pytest.skip("an advisory lock of PostgreSQL (SQLite has one writer)")
    first, second = session_factory(workers[0]), session_factory(workers[1])
    async with first.begin() as session:
        for uid in range(1, 9):
            await online.join(session, uid, 4, "fa", NOW + timedelta(seconds=uid))
    later = NOW + timedelta(seconds=20)
    async with first() as guard:
        assert len(await online.pick(guard, 4, later)) == 2
        async with second() as other:
            assert await online.pick(other, 4, later) == []
    async with second() as other:  # the first round is over: the lock is free
        assert len(await online.pick(other, 4, later)) == 2


async def _join(sessions, uid: int) -> store.Joined:  # type: ignore[no-untyped-def]
    async with sessions.begin() as session:
        return await online.join(session, uid, 2, "fa", NOW + timedelta(seconds=1))


async def _until_waiting_for_a_lock(engine: AsyncEngine) -> None:
    """Until some other connection of this database waits for a row lock."""
    for _ in range(10_000):
        async with engine.connect() as conn:
            waiting = await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                )
            )
        if waiting:
            return
        await asyncio.sleep(0)
    raise AssertionError("the join never waited for the matcher's lock")
