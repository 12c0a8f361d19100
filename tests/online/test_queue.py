"""The queue in the database: one place per person, the matcher seats and deletes,
the computers' offer claimed once (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage import repo
from telegram_bot.service import matching, online, ratings
from telegram_bot.service.ratings import Skill

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def later(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


async def test_join_keeps_one_place_per_person(sessions: async_sessionmaker[AsyncSession]) -> None:
    async with sessions.begin() as session:
        joined = await online.join(session, 1, 4, "fa", NOW)
    assert joined.status == "queued" and joined.entry is not None
    assert joined.entry.rating == pytest.approx(1500.0)  # a newcomer: the average
    assert joined.entry.band == matching.BAND_START

    async with sessions.begin() as session:
        again = await online.join(session, 1, 4, "en", later(5))
    assert again.status == "waiting" and again.entry is not None
    assert again.entry.joined_at == NOW and again.entry.language == "en"

    async with sessions.begin() as session:
        switched = await online.join(session, 1, 2, "en", later(9))
        assert switched.status == "switched"
        assert await store.waiting(session) == [switched.entry]
        assert switched.entry is not None and switched.entry.joined_at == later(9)

    async with sessions.begin() as session:
        left = await online.leave(session, 1)
        assert left == switched.entry
        assert await online.leave(session, 1) is None
        assert await store.queued(session, 1) is None


async def test_join_uses_the_rating_of_that_game(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    strong = Skill(33.0, 2.0, 30)
    async with sessions.begin() as session:
        await store.save_ratings(session, 3, {7: strong}, NOW)
        three = await online.join(session, 7, 3, "fa", NOW)
    assert three.entry is not None
    assert three.entry.rating == pytest.approx(ratings.matching_value(strong))
    assert three.entry.rating == pytest.approx(48 * 33 + 300)


async def test_a_person_seated_in_a_game_is_not_queued(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        await repo.get_or_create_chat(session, -100, "group")
        game = await repo.create_game(
            session, -100, 5, seats=[{"user_id": 5, "name": "Sara", "bot": None}], status="playing"
        )
        joined = await online.join(session, 5, 4, "fa", NOW)
        assert joined.status == "playing" and joined.game_id == game.id
        assert await store.queued(session, 5) is None


async def test_match_seats_full_tables_and_deletes_their_rows(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        for uid in range(1, 11):
            await online.join(session, uid, 4, "fa", NOW + timedelta(milliseconds=uid))
        await online.join(session, 99, 2, "fa", NOW)
    async with sessions.begin() as session:
        tables = await online.match(session, 4, later(1))
    assert [[e.user_id for e in t] for t in tables] == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert all(e.players == 4 for t in tables for e in t)
    async with sessions.begin() as session:
        assert [e.user_id for e in await store.waiting(session)] == [99, 9, 10]
        assert await online.match(session, 4, later(2)) == []


async def test_a_failed_seating_leaves_the_queue_as_it_was(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        for uid in (1, 2, 3):
            await online.join(session, uid, 2, "fa", NOW)
    with pytest.raises(RuntimeError):
        async with sessions.begin() as session:
            assert len(await online.match(session, 2, later(1))) == 1
            raise RuntimeError("the game could not be created")  # rolled back
    async with sessions.begin() as session:
        assert [e.user_id for e in await store.waiting(session, 2)] == [1, 2, 3]


@pytest.mark.parametrize("bad", [[(1, 2)], [(1, 1, 2)], [(1, 2, 3), (3, 4, 5)], [(1, 2, 42)]])
async def test_the_matcher_refuses_a_picker_that_seats_wrongly(
    sessions: async_sessionmaker[AsyncSession], bad: list[tuple[int, ...]]
) -> None:
    async with sessions.begin() as session:
        for uid in range(1, 7):
            await online.join(session, uid, 3, "fa", NOW)
    with pytest.raises(ValueError):
        async with sessions.begin() as session:
            await store.match_tables(session, 3, NOW, lambda waiting, now: bad)
    async with sessions.begin() as session:
        assert len(await store.waiting(session, 3)) == 6


async def test_the_computers_offer_is_claimed_once(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        await online.join(session, 1, 4, "fa", NOW)
        await online.join(session, 2, 3, "en", later(30))
    async with sessions.begin() as session:
        assert await online.due_offers(session, later(59)) == []
    async with sessions.begin() as session:
        due = await online.due_offers(session, later(60))
    assert [(e.user_id, e.offered_at) for e in due] == [(1, None)]
    async with sessions.begin() as session:
        assert [e.user_id for e in await online.due_offers(session, later(200))] == [2]
        assert await online.due_offers(session, later(300)) == []
        first = await store.queued(session, 1)
        assert first is not None and first.offered_at == later(60)
        # Asking again for the same game keeps the place (and the offer made);
        # another game is a new wait, with an offer of its own in time.
        assert (await online.join(session, 1, 4, "fa", later(301))).entry.offered_at == later(60)  # type: ignore[union-attr]
        assert (await online.join(session, 1, 2, "fa", later(302))).entry.offered_at is None  # type: ignore[union-attr]
        assert [e.user_id for e in await online.due_offers(session, later(362))] == [1]
