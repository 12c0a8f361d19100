"""Ratings change exactly as openskill computes them (the library called here on its
own, with its defaults), are stored per game, and only for matches of people."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from openskill.models import PlackettLuce
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import MatchResult, repo
from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage.models import RatedMatch, Rating
from telegram_bot.service import ratings
from telegram_bot.service.ratings import Skill

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def library(
    teams: list[list[tuple[float, float]]], ranks: list[int]
) -> list[list[tuple[float, float]]]:
    model = PlackettLuce()
    out = model.rate(
        [[model.rating(mu=mu, sigma=sigma) for mu, sigma in team] for team in teams], ranks=ranks
    )
    return [[(p.mu, p.sigma) for p in team] for team in out]


def test_partnerships_of_newcomers() -> None:
    after = ratings.new_skills(4, [[1, 3], [2, 4]], [2, 1], {})
    prior = (PlackettLuce().mu, PlackettLuce().sigma)
    expected = library([[prior, prior], [prior, prior]], [2, 1])
    assert [(after[1].mu, after[1].sigma), (after[3].mu, after[3].sigma)] == expected[0]
    assert [(after[2].mu, after[2].sigma), (after[4].mu, after[4].sigma)] == expected[1]
    assert after[2].mu > after[1].mu  # the winners went up
    assert {s.matches for s in after.values()} == {1}


def test_free_for_all_and_one_against_one_from_given_ratings() -> None:
    current = {7: Skill(30.0, 3.0, 12), 8: Skill(22.0, 6.5, 3), 9: Skill(25.0, 1.2, 40)}
    after = ratings.new_skills(3, [[7], [8], [9]], [2, 1, 2], current)
    expected = library([[(30.0, 3.0)], [(22.0, 6.5)], [(25.0, 1.2)]], [2, 1, 2])
    assert [[(after[u].mu, after[u].sigma)] for u in (7, 8, 9)] == expected
    assert [after[u].matches for u in (7, 8, 9)] == [13, 4, 41]

    after = ratings.new_skills(2, [[7], [5]], [1, 2], current)
    expected = library([[(30.0, 3.0)], [(ratings.MODEL.mu, ratings.MODEL.sigma)]], [1, 2])
    assert [[(after[u].mu, after[u].sigma)] for u in (7, 5)] == expected


def test_ranks_by_points_share_ties() -> None:
    assert ratings.ranks_by_points([62, 40]) == [1, 2]
    assert ratings.ranks_by_points([3, 7, 3]) == [2, 1, 2]
    assert ratings.ranks_by_points([5, 5]) == [1, 1]


def test_wrong_shapes_and_computer_seats_are_refused() -> None:
    with pytest.raises(ValueError):
        ratings.new_skills(4, [[1], [2], [3], [4]], [1, 2, 3, 4], {})
    with pytest.raises(ValueError):
        ratings.new_skills(3, [[1], [2]], [1, 2], {})
    with pytest.raises(ValueError):
        ratings.new_skills(2, [[1], [2]], [1], {})
    with pytest.raises(ValueError):
        ratings.new_skills(2, [[1], [None]], [1, 2], {})  # type: ignore[list-item]
    assert not ratings.rated([[1, None], [2, 3]])
    assert not ratings.rated([[1, 2], [2, 3]])
    assert ratings.rated([[1, 2], [3, 4]])


def test_display_is_the_libraries_conservative_value_scaled() -> None:
    model = PlackettLuce()
    assert pytest.approx(48.0) == ratings.DISPLAY_ALPHA
    assert pytest.approx(300.0) == ratings.DISPLAY_TARGET
    assert ratings.display(ratings.initial()) == 300  # mu - 3 sigma = 0
    for mu, sigma in [(25.0, 0.5), (31.0, 2.0), (18.0, 4.0), (40.0, 1.0)]:
        conservative = model.rating(mu=mu, sigma=sigma).ordinal()  # mu - 3 sigma
        assert ratings.display(Skill(mu, sigma)) == round(48 * conservative + 300)
    assert ratings.display(Skill(25.0, 0.0)) == 1500
    assert ratings.display(Skill(5.0, 5.0)) == 0  # never below 0
    assert ratings.matching_value(ratings.initial()) == pytest.approx(1500.0)


async def test_rate_match_stores_what_the_library_computes(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        changed = await ratings.rate_match(session, "g1", 4, [[1, 3], [2, 4]], [1, 2], NOW)
    prior = (ratings.MODEL.mu, ratings.MODEL.sigma)
    first = library([[prior, prior], [prior, prior]], [1, 2])
    assert changed is not None
    assert changed[1] == (ratings.initial(), Skill(*first[0][0], 1))

    # A second match: from the stored ratings, and one newcomer (5).
    async with sessions.begin() as session:
        changed = await ratings.rate_match(session, "g2", 4, [[1, 2], [3, 5]], [2, 1], NOW)
    second = library([[first[0][0], first[1][0]], [first[0][1], prior]], [2, 1])
    async with sessions.begin() as session:
        stored = await store.get_ratings(session, 4, [1, 2, 3, 4, 5])
    assert stored == {
        1: Skill(*second[0][0], 2),
        2: Skill(*second[0][1], 2),
        3: Skill(*second[1][0], 2),
        4: Skill(*first[1][1], 1),
        5: Skill(*second[1][1], 1),
    }
    # Other games' ratings are apart.
    async with sessions.begin() as session:
        assert await store.get_ratings(session, 2, [1, 2]) == {}
        assert await ratings.skill_of(session, 1, 2) == ratings.initial()

    # The same game again (another worker finishing it too): no change.
    async with sessions.begin() as session:
        assert await ratings.rate_match(session, "g2", 4, [[1, 2], [3, 5]], [2, 1], NOW) is None
    async with sessions.begin() as session:
        assert await store.get_ratings(session, 4, [1, 2, 3, 4, 5]) == stored
        record = await store.rated_match(session, "g2")
    assert record is not None and record.players == 4
    assert [(s["user_id"], s["team"], s["rank"]) for s in record.seats] == [
        (1, 0, 2),
        (2, 0, 2),
        (3, 1, 1),
        (5, 1, 1),
    ]
    assert record.seats[3]["mu_before"] == prior[0] and record.seats[3]["mu"] == second[1][1][0]


async def test_a_match_with_a_computer_is_unrated_and_kept_apart(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        assert await ratings.rate_match(session, "c1", 4, [[1, None], [2, 3]], [1, 2], NOW) is None
        await ratings.rate_match(session, "r1", 2, [[1], [2]], [1, 2], NOW)
    async with sessions.begin() as session:
        assert await session.scalar(select(func.count()).select_from(Rating)) == 2
        assert (await session.scalars(select(RatedMatch.game_id))).all() == ["r1"]
        # Rated matches are not the groups' history.
        assert await session.scalar(select(func.count()).select_from(MatchResult)) == 0


async def test_rated_leaderboard_by_the_conservative_value(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    async with sessions.begin() as session:
        await repo.get_or_create_user(session, 1, "Sara")
        await repo.get_or_create_user(session, 2, "Ali")
        await store.save_ratings(
            session,
            3,
            {
                1: Skill(30.0, 4.0, 5),  # 18
                2: Skill(26.0, 1.0, 50),  # 23: lower mean, surer
                3: Skill(40.0, 8.0, 0),  # never played a rated match
            },
            NOW,
        )
        board = await store.rated_leaderboard(session, 3)
    assert [(r.user_id, r.name) for r in board] == [(2, "Ali"), (1, "Sara")]
    assert [ratings.display(r.skill) for r in board] == [1404, 1164]


async def test_a_leaver_forfeits_a_2v2_match_and_the_partner_who_stayed_keeps_their_rating(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """2 v 2, person 1 left (a computer in their seat) while their team led on points:
    their team ranks last; the leaver and both opponents get what openskill computes
    for that result; the partner who stayed (3) keeps their rating."""
    from core import Match
    from telegram_bot.service.online_seats import ONLINE_CHAT_BASE, rate_finished

    strong = Skill(30.0, 4.0, 9)  # the leaver's rating before, not the prior
    chat = ONLINE_CHAT_BASE - 11
    seats = [
        {"bot": "normal", "forfeit": True},  # person 1's seat, taken by a computer
        {"user_id": 2, "name": "B"},
        {"user_id": 3, "name": "C"},
        {"user_id": 4, "name": "D"},
    ]
    settings = {"players": 4, "online": {"people": [1, 2, 3, 4], "rated": True}}
    async with sessions.begin() as session:
        await store.save_ratings(session, 4, {1: strong}, NOW)
        await repo.get_or_create_chat(session, chat, "online")
        game = await repo.create_game(session, chat, 1, seats, settings, status="finished")
        match = Match()
        match.scores = [7, 2]  # the leaver's side (seats 0 and 2) ahead on points
        await rate_finished(session, game, match)
        after = await store.get_ratings(session, 4, [1, 2, 3, 4])
        record = await store.rated_match(session, game.id)
    prior = (ratings.MODEL.mu, ratings.MODEL.sigma)
    expected = library([[(strong.mu, strong.sigma), prior], [prior, prior]], [2, 1])
    assert (after[1].mu, after[1].sigma) == expected[0][0]
    assert (after[2].mu, after[2].sigma) == expected[1][0]
    assert (after[4].mu, after[4].sigma) == expected[1][1]
    assert after[1].mu < strong.mu and after[2].mu > prior[0]
    assert 3 not in after  # the partner: no change, no rated match counted
    assert (after[1].matches, after[2].matches, after[4].matches) == (10, 1, 1)
    assert record is not None
    rows = {r["user_id"]: r for r in record.seats}
    assert {u: r["rank"] for u, r in rows.items()} == {1: 2, 3: 2, 2: 1, 4: 1}
    assert rows[3]["mu"] == rows[3]["mu_before"] == prior[0]
    # The hand messages' rating lines: for those whose rating changed.
    shown = {x.get("user_id"): x.get("rating") for x in game.seats}
    assert shown[3] is None and shown[2] is not None and shown[4] is not None
