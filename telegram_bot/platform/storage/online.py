"""Play with anyone: the queue, the ratings and the rated matches in the database.

Like :mod:`.repo`, nothing here commits: the caller owns the transaction. Safe across
workers on PostgreSQL (row locks, ``SKIP LOCKED``, an advisory lock per game for the
matcher); SQLite has one writer, and each function that reads before it writes takes
the write lock first.

A person is in at most one queue or match at a time: :func:`join` refuses a person
seated in an active game, and :func:`match_tables` (a whole round) or
:func:`claim_table` (one table of it) deletes the rows of those it seats in the
caller's transaction, which is to create their game too (then a join racing
the matcher waits for its row lock and sees the game).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from telegram_bot.platform.storage.models import (
    LANGUAGES,
    OnlineQueueEntry,
    RatedMatch,
    Rating,
    User,
)
from telegram_bot.platform.storage.repo import _insert, find_active_game_for_user

GAMES = (2, 3, 4)

#: Seconds waited before the computers' offer (start now, with computers, unrated).
OFFER_AFTER = 60.0

# pg_try_advisory_xact_lock(_MATCHER_LOCK, players): one matcher per game at a time.
_MATCHER_LOCK = 0x686F6E6C  # "honl"


@dataclass(frozen=True, slots=True)
class Queued:
    """A row of the queue, as read (a :class:`telegram_bot.service.matching.Waiting`)."""

    user_id: int
    players: int
    language: str
    rating: float
    band: float
    joined_at: datetime
    offered_at: datetime | None


@dataclass(frozen=True, slots=True)
class Joined:
    """What :func:`join` did: ``status`` is ``"queued"`` (newly), ``"waiting"`` (already
    in this queue: their place is kept), ``"switched"`` (was waiting for another game:
    the wait starts again) or ``"playing"`` (seated in an active game: not queued)."""

    status: str
    entry: Queued | None
    game_id: str | None = None


@dataclass(frozen=True, slots=True)
class Skill:
    """A stored rating: openskill's ``mu`` and ``sigma`` and the rated matches played."""

    mu: float
    sigma: float
    matches: int = 0


_Q = OnlineQueueEntry.__table__
_QUEUE_COLUMNS = (_Q.c.user_id, _Q.c.players, _Q.c.language, _Q.c.rating, _Q.c.band)
_QUEUE_COLUMNS += (_Q.c.joined_at, _Q.c.offered_at)


def _queued(row: Any) -> Queued:
    return Queued(*row)


def _check_game(players: int) -> None:
    if players not in GAMES:
        raise ValueError(f"no game for {players!r} players; expected one of {GAMES}")


async def _take_write_lock(session: AsyncSession) -> None:
    """SQLite: start the transaction with a write (that matches no row), so its reads
    are not from a snapshot another connection writes over before this one writes.
    (Python's sqlite3 begins a transaction only at the first write: a read before it
    would see the database as it was, and hold no lock.)"""
    if session.get_bind().dialect.name == "sqlite":
        await session.execute(text("UPDATE online_queue SET band = band WHERE 0 = 1"))


# ---------------------------------------------------------------------------- queue


async def join(
    session: AsyncSession,
    user_id: int,
    players: int,
    language: str,
    rating: float,
    band: float,
    now: datetime,
) -> Joined:
    """Put the person in the queue for a game of ``players`` (see :class:`Joined`)."""
    _check_game(players)
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; expected one of {LANGUAGES}")
    await _take_write_lock(session)
    # Waits for a matcher seating this person (its lock on the row); once it has
    # committed, the row is gone and their game is there to be seen below.
    before = (
        await session.execute(
            select(*_QUEUE_COLUMNS).where(_Q.c.user_id == user_id).with_for_update()
        )
    ).first()
    previous = None if before is None else _queued(before)
    # Asking again for the same game keeps the place in the queue (and an offer made).
    kept = previous if previous is not None and previous.players == players else None
    joined_at = kept.joined_at if kept else now
    offered_at = kept.offered_at if kept else None
    values = {
        "user_id": user_id,
        "players": players,
        "language": language,
        "rating": float(rating),
        "band": float(band),
        "joined_at": joined_at,
        "offered_at": offered_at,
    }
    stmt = _insert(session, OnlineQueueEntry).values(**values)
    stmt = stmt.on_conflict_do_update(
        index_elements=[_Q.c.user_id], set_={k: v for k, v in values.items() if k != "user_id"}
    )
    await session.execute(stmt)
    game = await find_active_game_for_user(session, user_id)
    if game is not None:
        await session.execute(delete(_Q).where(_Q.c.user_id == user_id))
        return Joined("playing", None, game.id)
    entry = Queued(**values)
    if previous is None:
        return Joined("queued", entry)
    return Joined("waiting" if kept else "switched", entry)


async def leave(session: AsyncSession, user_id: int) -> Queued | None:
    """Take the person out of the queue; their row as it was, or None if they were not
    in it (already seated, or never there). Also how a person takes the computers'
    offer: whoever deletes the row (this or the matcher) has them."""
    row = (
        await session.execute(delete(_Q).where(_Q.c.user_id == user_id).returning(*_QUEUE_COLUMNS))
    ).first()
    return None if row is None else _queued(row)


async def queued(session: AsyncSession, user_id: int) -> Queued | None:
    """The person's place in a queue, or None."""
    row = (await session.execute(select(*_QUEUE_COLUMNS).where(_Q.c.user_id == user_id))).first()
    return None if row is None else _queued(row)


async def waiting(
    session: AsyncSession, players: int | None = None, *, limit: int | None = None
) -> list[Queued]:
    """Everyone in the queue (of one game, or all), longest waiting first."""
    query = select(*_QUEUE_COLUMNS).order_by(_Q.c.joined_at, _Q.c.user_id).limit(limit)
    if players is not None:
        query = query.where(_Q.c.players == players)
    return [_queued(row) for row in (await session.execute(query)).all()]


Picker = Callable[[Sequence[Queued], datetime], Iterable[Sequence[int]]]


async def match_tables(
    session: AsyncSession, players: int, now: datetime, pick: Picker, *, limit: int = 1000
) -> list[list[Queued]]:
    """Seat full tables of a game of ``players``: ``pick(waiting, now)`` chooses them
    (:func:`telegram_bot.service.matching.pick_tables`) from the people waiting, and
    their rows are deleted in the caller's transaction, in which their games are to be
    created. Returns the tables (rows in the order ``pick`` gave).

    On PostgreSQL one matcher of a game runs at a time (another returns ``[]`` at once:
    the queue is being matched) and the rows are read ``FOR UPDATE SKIP LOCKED``
    (someone leaving or joining at that moment waits for the next round).
    """
    _check_game(players)
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        got = await session.scalar(
            text("SELECT pg_try_advisory_xact_lock(:key, :players)"),
            {"key": _MATCHER_LOCK, "players": players},
        )
        if not got:
            return []
    await _take_write_lock(session)
    rows = (
        await session.execute(
            select(*_QUEUE_COLUMNS)
            .where(_Q.c.players == players)
            .order_by(_Q.c.joined_at, _Q.c.user_id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    ).all()
    waiting_now = {row.user_id: _queued(row) for row in rows}
    tables: list[list[Queued]] = []
    seated: set[int] = set()
    for table in pick(list(waiting_now.values()), now):
        ids = list(table)
        if len(ids) != players or len(set(ids)) != players:
            raise ValueError(f"not a table of {players}: {ids!r}")
        if seated.intersection(ids) or not waiting_now.keys() >= set(ids):
            raise ValueError(f"a table of people seated twice or not waiting: {ids!r}")
        seated.update(ids)
        tables.append([waiting_now[uid] for uid in ids])
    if seated:
        result = await session.execute(delete(_Q).where(_Q.c.user_id.in_(sorted(seated))))
        if result.rowcount != len(seated):  # they were locked by this transaction
            raise RuntimeError("seated people left the queue under the matcher's lock")
    return tables


async def lock_matcher(session: AsyncSession, players: int) -> bool:
    """Become the one matcher of a game of ``players`` for the caller's transaction
    (PostgreSQL: a transaction-level advisory lock, taken or refused at once); False
    if another matcher holds it. SQLite has one writer: always True, and nothing held.

    A round holds this in a transaction of its own (which reads the queue and writes
    nothing) while each table it picks is seated by :func:`claim_table` in its own
    short transaction: one matcher picks at a time, and no table waits for another's
    deal to commit."""
    _check_game(players)
    if session.get_bind().dialect.name != "postgresql":
        return True
    got = await session.scalar(
        text("SELECT pg_try_advisory_xact_lock(:key, :players)"),
        {"key": _MATCHER_LOCK, "players": players},
    )
    return bool(got)


async def claim_table(
    session: AsyncSession, players: int, user_ids: Sequence[int]
) -> list[Queued] | None:
    """Take the people of one table (picked from a read of the queue) out of the queue
    of a game of ``players``, in the caller's transaction, which is to create their
    game too: their rows as they are now, in the order of ``user_ids``; or None, and
    nothing done, if any of them is no longer waiting for this game or is locked at
    this moment (leaving, joining again, or seated by another transaction): the others
    stay in the queue for the next round.

    The rows are read ``FOR UPDATE SKIP LOCKED`` and deleted, so two transactions never
    seat one person, and a join racing this waits for the row lock and then sees the
    game (see :func:`join`)."""
    _check_game(players)
    ids = list(user_ids)
    if len(ids) != players or len(set(ids)) != players:
        raise ValueError(f"not a table of {players}: {ids!r}")
    await _take_write_lock(session)
    rows = (
        await session.execute(
            select(*_QUEUE_COLUMNS)
            .where(_Q.c.players == players, _Q.c.user_id.in_(sorted(ids)))
            .order_by(_Q.c.user_id)
            .with_for_update(skip_locked=True)
        )
    ).all()
    found = {row.user_id: _queued(row) for row in rows}
    if len(found) != players:
        return None
    result = await session.execute(delete(_Q).where(_Q.c.user_id.in_(sorted(ids))))
    if result.rowcount != players:  # they were locked by this transaction
        raise RuntimeError("seated people left the queue under the matcher's lock")
    return [found[uid] for uid in ids]


async def due_offers(
    session: AsyncSession, now: datetime, after: float = OFFER_AFTER, *, limit: int = 100
) -> list[Queued]:
    """Those who have waited ``after`` seconds or more and have not had the computers'
    offer: claimed for this caller (``offered_at`` set to ``now``, so another worker
    does not offer it again), longest waiting first."""
    await _take_write_lock(session)
    rows = (
        await session.execute(
            select(*_QUEUE_COLUMNS)
            .where(_Q.c.offered_at.is_(None), _Q.c.joined_at <= now - timedelta(seconds=after))
            .order_by(_Q.c.joined_at, _Q.c.user_id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    ).all()
    if rows:
        await session.execute(
            update(_Q).where(_Q.c.user_id.in_([row.user_id for row in rows])).values(offered_at=now)
        )
    return [_queued(row) for row in rows]


# -------------------------------------------------------------------------- ratings

_R = Rating.__table__


async def get_ratings(
    session: AsyncSession, players: int, user_ids: Iterable[int], *, lock: bool = False
) -> dict[int, Skill]:
    """The stored ratings of these people in a game (those never rated are missing).
    ``lock``: hold their rows until the transaction ends (taken in user id order)."""
    _check_game(players)
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    query = (
        select(_R.c.user_id, _R.c.mu, _R.c.sigma, _R.c.matches)
        .where(_R.c.players == players, _R.c.user_id.in_(ids))
        .order_by(_R.c.user_id)
    )
    if lock:
        await _take_write_lock(session)
        query = query.with_for_update()
    rows = (await session.execute(query)).all()
    return {row.user_id: Skill(row.mu, row.sigma, row.matches) for row in rows}


async def save_ratings(
    session: AsyncSession, players: int, skills: Mapping[int, Skill], now: datetime
) -> None:
    """Write these ratings (each with its count of rated matches)."""
    _check_game(players)
    for user_id in sorted(skills):
        skill = skills[user_id]
        stmt = _insert(session, Rating).values(
            user_id=user_id,
            players=players,
            mu=skill.mu,
            sigma=skill.sigma,
            matches=skill.matches,
            updated_at=now,
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=[_R.c.user_id, _R.c.players],
            set_={
                "mu": stmt.excluded.mu,
                "sigma": stmt.excluded.sigma,
                "matches": stmt.excluded.matches,
                "updated_at": stmt.excluded.updated_at,
            },
        )
        await session.execute(stmt)


async def record_rated_match(
    session: AsyncSession,
    game_id: str,
    players: int,
    seats: Sequence[Mapping[str, Any]],
    now: datetime,
) -> bool:
    """Keep a rated match; False (and nothing written) if the game was recorded before."""
    _check_game(players)
    result = await session.execute(
        _insert(session, RatedMatch)
        .values(game_id=game_id, players=players, finished_at=now, seats=[dict(s) for s in seats])
        .on_conflict_do_nothing(index_elements=[RatedMatch.__table__.c.game_id])
    )
    return result.rowcount == 1


async def rated_match(session: AsyncSession, game_id: str) -> RatedMatch | None:
    found = await session.scalar(
        select(RatedMatch)
        .where(RatedMatch.game_id == game_id)
        .execution_options(populate_existing=True)
    )
    if found is not None:
        session.expunge(found)
    return found


@dataclass(frozen=True, slots=True)
class Ranked:
    """A row of the rated leaderboard."""

    user_id: int
    name: str
    skill: Skill


async def rated_leaderboard(
    session: AsyncSession, players: int, limit: int = 10, *, min_matches: int = 1
) -> list[Ranked]:
    """The best of a game by the conservative value ``mu - 3 sigma`` (what people see)."""
    _check_game(players)
    conservative = _R.c.mu - 3 * _R.c.sigma
    rows = (
        await session.execute(
            select(
                _R.c.user_id, func.coalesce(User.first_name, ""), _R.c.mu, _R.c.sigma, _R.c.matches
            )
            .select_from(_R.outerjoin(User.__table__, User.__table__.c.id == _R.c.user_id))
            .where(_R.c.players == players, _R.c.matches >= min_matches)
            .order_by(conservative.desc(), _R.c.user_id)
            .limit(limit)
        )
    ).all()
    return [Ranked(row[0], row[1], Skill(row[2], row[3], row[4])) for row in rows]


# ------------------------------------------------------------------------ reactions


async def claim_reaction(
    session: AsyncSession, chat_id: int, user_id: int, now: float, gap: float
) -> bool:
    """May ``user_id`` react at the online table of chat ``chat_id`` at ``now`` (epoch
    seconds), their last reaction there being at least ``gap`` seconds ago? If so, note
    ``now`` as their last, in the caller's transaction.

    One conditional UPDATE of the table's own chat row (``settings["reacted"]``, by
    user), so the limit holds across workers: on PostgreSQL a second claim waits for
    the first's commit and then finds the new time (the row is read again); SQLite has
    one writer. Nothing else writes an online table's chat settings during the match."""
    key = str(int(user_id))
    if session.get_bind().dialect.name == "postgresql":
        sql = """
            UPDATE chats SET settings = COALESCE(settings, '{}'::jsonb) || jsonb_build_object(
                'reacted',
                COALESCE(settings->'reacted', '{}'::jsonb) || jsonb_build_object(
                    CAST(:key AS text), CAST(:now AS double precision)))
            WHERE id = :chat
              AND COALESCE(CAST(settings->'reacted'->>CAST(:key AS text) AS double precision),
                           0) <= CAST(:latest AS double precision)
        """
        params = {"key": key, "now": now, "chat": chat_id, "latest": now - gap}
    else:
        path = f'$.reacted."{key}"'
        sql = """
            UPDATE chats SET settings = json_set(
                CASE WHEN json_type(COALESCE(settings, '{}'), '$.reacted') IS NULL
                     THEN json_set(COALESCE(settings, '{}'), '$.reacted', json('{}'))
                     ELSE settings END,
                :path, :now)
            WHERE id = :chat AND COALESCE(json_extract(settings, :path), 0) <= :latest
        """
        params = {"path": path, "now": now, "chat": chat_id, "latest": now - gap}
    result = await session.execute(text(sql), params)
    return result.rowcount == 1
