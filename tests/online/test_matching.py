"""The pure matcher: full tables, nobody twice, bands respected, language preferred."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from telegram_bot.service.matching import (
    BAND_START,
    DEFAULT,
    Entry,
    Policy,
    band,
    fits,
    pick_tables,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def person(uid: int, rating: float, waited: float = 0.0, language: str = "fa", **kw) -> Entry:
    return Entry(uid, rating, language, NOW - timedelta(seconds=waited), **kw)


def test_band_widens_with_the_wait() -> None:
    assert band(person(1, 1500), NOW) == BAND_START
    assert band(person(1, 1500, waited=10), NOW) == BAND_START + 10 * DEFAULT.band_per_second
    # A worker whose clock is behind the joiner's: no narrower than the start.
    assert band(person(1, 1500, waited=-5), NOW) == BAND_START


def test_closest_in_rating_sit_together() -> None:
    people = [
        person(i, r, waited=1)
        for i, r in enumerate([1500, 1900, 1510, 1905, 1490, 1890, 1520, 1910])
    ]
    tables = pick_tables(people, 4, NOW)
    assert sorted(map(sorted, tables)) == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_too_far_apart_wait_until_their_bands_widen() -> None:
    people = [person(1, 1500), person(2, 1520), person(3, 1700), person(4, 1710)]
    assert pick_tables(people, 4, NOW) == []
    # The spread is 210: each band must be 210, that is 100 + 25 * 4.4 s.
    later = NOW + timedelta(seconds=4.4)
    assert sorted(pick_tables(people, 4, later)[0]) == [1, 2, 3, 4]
    assert pick_tables(people, 4, NOW + timedelta(seconds=4.3)) == []


def test_the_longest_waiting_is_seated_first() -> None:
    # Five fit in the band; the four longest waiting get the table.
    people = [person(i, 1500 + i, waited=10 - i) for i in range(5)]
    assert sorted(pick_tables(people, 4, NOW)[0]) == [0, 1, 2, 3]


def test_same_language_preferred_then_mixed_after_a_while() -> None:
    people = [person(1, 1500, 1, "fa"), person(2, 1500, 1, "en"), person(3, 1500, 1, "fa")]
    people += [person(4, 1500, 1, "en")]
    assert pick_tables(people, 2, NOW) == [(1, 3), (2, 4)]
    lone = [person(1, 1500, 1, "fa"), person(2, 1500, 1, "en")]
    assert pick_tables(lone, 2, NOW) == []
    assert pick_tables(lone, 2, NOW + timedelta(seconds=DEFAULT.mixed_after)) == [(1, 2)]


def test_a_narrow_band_does_not_block_the_others() -> None:
    # 2 sits between the others in rating but joined with no band at all.
    people = [person(1, 1500, 20), person(2, 1550, 0, band=0.0), person(3, 1600, 20)]
    people += [person(4, 1650, 20), person(5, 1700, 20)]
    tables = pick_tables(people, 4, NOW)
    assert [sorted(t) for t in tables] == [[1, 3, 4, 5]]


def test_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        pick_tables([person(1, 1500), person(1, 1500)], 2, NOW)
    with pytest.raises(ValueError):
        pick_tables([], 1, NOW)


waiting_people = st.lists(
    st.tuples(
        st.floats(0, 3000, allow_nan=False),
        st.sampled_from(["fa", "en"]),
        st.floats(0, 90, allow_nan=False),
        st.sampled_from([0.0, 50.0, BAND_START, 400.0]),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    waiting_people,
    st.sampled_from([2, 3, 4]),
    st.builds(Policy, st.floats(0, 60, allow_nan=False), st.floats(0, 30, allow_nan=False)),
)
def test_tables_are_full_nobody_twice_and_within_every_band(rows, players, policy) -> None:
    people = [person(i, r, w, lang, band=b) for i, (r, lang, w, b) in enumerate(rows)]
    by_id = {p.user_id: p for p in people}
    tables = pick_tables(people, players, NOW, policy)
    seated = [uid for table in tables for uid in table]
    assert len(seated) == len(set(seated))
    assert set(seated) <= set(by_id)
    for table in tables:
        assert len(table) == players
        members = [by_id[uid] for uid in table]
        assert fits(members, NOW, policy)
        spread = max(m.rating for m in members) - min(m.rating for m in members)
        assert all(spread <= band(m, NOW, policy) for m in members)
        languages = {m.language for m in members}
        if len(languages) > 1:  # mixed only for someone who has waited long enough
            assert max(NOW - m.joined_at for m in members) >= timedelta(seconds=policy.mixed_after)


@settings(max_examples=200, deadline=None)
@given(waiting_people, st.sampled_from([2, 3, 4]))
def test_with_bands_wide_enough_everyone_who_can_be_seated_is(rows, players) -> None:
    # Bands wider than any spread and mixed tables allowed at once: as many full
    # tables as there are people for.
    policy = Policy(band_per_second=0.0, mixed_after=0.0)
    people = [person(i, r, w, lang, band=3001.0) for i, (r, lang, w, _) in enumerate(rows)]
    tables = pick_tables(people, players, NOW, policy)
    assert len(tables) == len(people) // players
