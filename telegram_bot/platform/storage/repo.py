"""The bot's database operations: small async functions over an ``AsyncSession``.

None of them commits: the caller owns the transaction, so several operations can be
made atomic together (for example saving a finished game and recording its result)::

    async with Session.begin() as session:          # commits on exit, rolls back on error
        game = await repo.get_game(session, game_id)
        ...
        await repo.save_game(session, game, expected_move=move_read)
        await repo.record_match_result(session, ...)

``Game`` objects returned here are detached snapshots: change their attributes freely
and persist them with :func:`save_game`, which writes only if nobody else saved the
game since (optimistic concurrency on ``Game.move``). Nothing is ever written behind
the caller's back by the ORM's autoflush.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from telegram_bot.platform.storage import pgdirect
from telegram_bot.platform.storage.models import (
    ACTIVE_GAME_PREDICATE,
    ACTIVE_STATUSES,
    LANGUAGES,
    Chat,
    Game,
    MatchResult,
    PlayerTally,
    User,
    utcnow,
)

GAME_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
GAME_ID_LENGTH = 6


class StorageError(Exception):
    """Base class of the errors raised by this module."""


class StaleGameError(StorageError):
    """The game was saved by someone else since it was read (or it no longer exists)."""

    def __init__(self, game_id: str, expected_move: int) -> None:
        super().__init__(f"game {game_id!r} is no longer at move {expected_move}")
        self.game_id = game_id
        self.expected_move = expected_move


class ActiveGameExistsError(StorageError):
    """The chat already has a game in the lobby or in progress."""

    def __init__(self, chat_id: int, game_id: str | None = None) -> None:
        super().__init__(f"chat {chat_id} already has an active game {game_id!r}")
        self.chat_id = chat_id
        self.game_id = game_id


def _insert(session: AsyncSession, table: Any) -> Any:
    """A dialect-specific INSERT that supports ON CONFLICT (SQLite and PostgreSQL)."""
    name = session.get_bind().dialect.name
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise StorageError(f"unsupported database dialect: {name}")


def _check_language(language: str | None, *, allow_none: bool) -> None:
    if language is None and allow_none:
        return
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; expected one of {LANGUAGES}")


def new_game_id() -> str:
    """A short random id for callback data: 6 characters of [a-z0-9]."""
    return "".join(secrets.choice(GAME_ID_ALPHABET) for _ in range(GAME_ID_LENGTH))


# ---------------------------------------------------------------------------- users


async def get_or_create_user(
    session: AsyncSession,
    user_id: int,
    first_name: str,
    username: str | None = None,
    language_code: str | None = None,
) -> User:
    """Insert the user, or refresh their name, username and Telegram language.

    Safe against two concurrent updates from a new user (INSERT ... ON CONFLICT).
    The user's chosen ``language`` and ``started_bot`` are never touched here.
    """
    now = utcnow()
    stmt = _insert(session, User).values(
        id=user_id,
        first_name=first_name,
        username=username,
        telegram_language=language_code,
        started_bot=False,
        created_at=now,
        updated_at=now,
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=[User.id],
        set_={
            "first_name": stmt.excluded.first_name,
            "username": stmt.excluded.username,
            "telegram_language": stmt.excluded.telegram_language,
            "updated_at": stmt.excluded.updated_at,
        },
    )
    await session.execute(stmt)
    user = await session.get(User, user_id, populate_existing=True)
    assert user is not None
    return user


async def get_user(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id, populate_existing=True)


async def set_user_language(session: AsyncSession, user_id: int, language: str | None) -> bool:
    """Set the user's chosen language ('fa' | 'en'; None: back to Telegram's). False if unknown user."""
    _check_language(language, allow_none=True)
    result = await session.execute(
        update(User)
        .where(User.id == user_id)
        .values(language=language, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount > 0


async def set_user_deck(session: AsyncSession, user_id: int, deck: str | None) -> bool:
    """Keep the user's Mini App deck style (None: back to the default). False if the
    user is unknown. The style's name is checked by the web adapter."""
    if deck is not None and not (0 < len(deck) <= 16):
        raise ValueError(f"bad deck name {deck!r}")
    result = await session.execute(
        update(User)
        .where(User.id == user_id)
        .values(deck=deck, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount > 0


async def get_user_deck(session: AsyncSession, user_id: int) -> str | None:
    """The user's Mini App deck style, or None (not chosen, or an unknown user)."""
    return await session.scalar(select(User.deck).where(User.id == user_id))


async def mark_started(session: AsyncSession, user_id: int, started: bool = True) -> bool:
    """Record that the user opened (or, with False, blocked) the private chat with the bot.

    False if the user is unknown: call :func:`get_or_create_user` first.
    """
    result = await session.execute(
        update(User)
        .where(User.id == user_id)
        .values(started_bot=started, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount > 0


# ---------------------------------------------------------------------------- chats


async def get_or_create_chat(
    session: AsyncSession,
    chat_id: int,
    type: str,
    title: str | None = None,
    language: str = "fa",
) -> Chat:
    """Insert the chat, or refresh its type and title (a group may become a supergroup
    under a new id: that is a new chat). ``language`` is only used for a new chat."""
    _check_language(language, allow_none=False)
    stmt = _insert(session, Chat).values(
        id=chat_id, type=type, title=title, language=language, settings={}, created_at=utcnow()
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=[Chat.id],
        set_={"type": stmt.excluded.type, "title": stmt.excluded.title},
    )
    await session.execute(stmt)
    chat = await session.get(Chat, chat_id, populate_existing=True)
    assert chat is not None
    return chat


async def get_chat(session: AsyncSession, chat_id: int) -> Chat | None:
    return await session.get(Chat, chat_id, populate_existing=True)


async def set_chat_language(session: AsyncSession, chat_id: int, language: str) -> bool:
    """Set the group's language ('fa' | 'en'). False if the chat is unknown."""
    _check_language(language, allow_none=False)
    result = await session.execute(
        update(Chat)
        .where(Chat.id == chat_id)
        .values(language=language)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount > 0


async def update_chat_settings(
    session: AsyncSession, chat_id: int, changes: Mapping[str, Any]
) -> dict[str, Any]:
    """Merge ``changes`` into the chat's default table settings (a key set to None is
    removed) and return the new settings. Raises ``LookupError`` for an unknown chat."""
    chat = await session.get(Chat, chat_id, populate_existing=True, with_for_update=True)
    if chat is None:
        raise LookupError(f"unknown chat {chat_id}")
    settings = dict(chat.settings or {})
    for key, value in changes.items():
        if value is None:
            settings.pop(key, None)
        else:
            settings[key] = value
    chat.settings = settings  # a new object: the ORM sees the change
    await session.flush()
    return settings


# ---------------------------------------------------------------------------- games


def _active() -> Any:
    """The games in the lobby or in progress, in the exact words of the partial index
    ``uq_games_one_active_per_topic``: SQLite (and PostgreSQL with a generic plan) only
    uses a partial index when the query's WHERE provably implies the index's, and bound
    parameters (``status IN (?, ?)``) prove nothing, so the whole table was read."""
    return text(ACTIVE_GAME_PREDICATE)


def _detach(session: AsyncSession, game: Game | None) -> Game | None:
    if game is not None and game in session:
        session.expunge(game)
    return game


async def create_game(
    session: AsyncSession,
    chat_id: int,
    owner_id: int,
    seats: Sequence[Mapping[str, Any]] = (),
    settings: Mapping[str, Any] | None = None,
    status: str = "lobby",
    *,
    thread_id: int | None = None,
) -> Game:
    """Open a new game (a lobby by default) in a known chat and topic (``thread_id``,
    a forum topic's message_thread_id; None or 0: no topic), with a fresh unique id.

    Raises :class:`ActiveGameExistsError` if the topic already has a lobby or a game in
    progress (checked by the database's partial unique index, so it holds under races).
    """
    thread = int(thread_id or 0)
    now = utcnow()
    for _ in range(20):
        game_id = new_game_id()
        values = {
            "id": game_id,
            "chat_id": chat_id,
            "thread_id": thread,
            "status": status,
            "owner_id": owner_id,
            "seats": [dict(s) for s in seats],
            "settings": dict(settings or {}),
            "state": None,
            "move": 0,
            "table_message_id": None,
            "private_messages": {},
            "deadline": None,
            "created_at": now,
            "updated_at": now,
        }
        # ON CONFLICT DO NOTHING covers both the primary key and the one-active-game
        # index without aborting the caller's transaction.
        result = await session.execute(
            _insert(session, Game).values(**values).on_conflict_do_nothing()
        )
        if result.rowcount == 1:
            game = await session.get(Game, game_id, populate_existing=True)
            assert game is not None
            return _detach(session, game)  # type: ignore[return-value]
        if status in ACTIVE_STATUSES:
            active = await get_active_game(session, chat_id, thread)
            if active is not None:
                raise ActiveGameExistsError(chat_id, active.id)
    raise StorageError("could not find a free game id")


_GET_GAME = select(Game.__table__).where(
    Game.__table__.c.id == bindparam("_id", type_=Game.__table__.c.id.type)
)
_GET_GAME_LOCKED = _GET_GAME.with_for_update()
_GET_GAME_SKIP = _GET_GAME.with_for_update(skip_locked=True)
# The same on asyncpg directly (see pgdirect). Timestamps come back aware in UTC and
# jsonb decoded, as SQLAlchemy's types would give them.
_GAME_COLUMNS = tuple(Game.__table__.c.keys())
_PG_SELECT_GAME = f"SELECT {', '.join(_GAME_COLUMNS)} FROM games WHERE id = $1"
_PG_GET_GAME: dict[bool | str, str] = {
    False: _PG_SELECT_GAME,
    True: _PG_SELECT_GAME + " FOR UPDATE",
    "skip": _PG_SELECT_GAME + " FOR UPDATE SKIP LOCKED",
}


async def get_game(session: AsyncSession, game_id: str, *, lock: bool | str = False) -> Game | None:
    """The game with this id (any status), detached, or None.

    ``lock=True`` takes the game's row lock until the transaction ends (``SELECT …
    FOR UPDATE`` on PostgreSQL; SQLite has one writer anyway), so writers of one game
    in several processes take turns. ``lock="skip"`` returns None at once if another
    transaction holds it (``SKIP LOCKED``): someone else is moving this game.
    """
    # Read with Core and built here (the ORM's loading cost more than the query); a
    # Game built from its row is as detached as one loaded and expunged.
    pg = await pgdirect.connection(session)
    if pg is not None:
        sql = _PG_GET_GAME[lock if lock == "skip" else bool(lock)]
        row = await pgdirect.fetchrow(pg, sql, game_id)
        return None if row is None else Game(**dict(zip(_GAME_COLUMNS, row, strict=True)))
    query = _GET_GAME if not lock else _GET_GAME_SKIP if lock == "skip" else _GET_GAME_LOCKED
    row = (await session.execute(query, {"_id": game_id})).mappings().first()
    return None if row is None else Game(**row)


async def due_games(
    session: AsyncSession | AsyncConnection,
    before: datetime,
    limit: int = 50,
    *,
    now: datetime | None = None,
    live_workers: Any = None,
) -> list[tuple[str, int, int | None]]:
    """(id, move, dead worker) of games in progress with nobody on their turn: the
    turn timer or computers' move was due before ``before`` (whoever armed it is
    late), or, given ``live_workers`` (a query of the numbers of the workers alive),
    the worker that armed the turn's clock is dead and the clock ran out by ``now``
    (a computers' move at once: their due time may be another process's lease). The
    dead worker is named (a worker number, or 0 for an unmarked clock) so the taker
    can override its lease; None when the game is only late."""
    late = (Game.deadline < before) | (Game.due_at < before)
    columns: list[Any] = [Game.id, Game.move]
    where: Any = late
    if live_workers is not None:
        dead = Game.clock_worker.is_(None) | Game.clock_worker.not_in(live_workers)
        run_out = (Game.deadline < (now or utcnow())) | Game.due_at.is_not(None)
        where = late | (dead & run_out)
        columns.append(func.coalesce(Game.clock_worker, 0).label("dead"))
        columns.append(dead.label("is_dead"))
    result = await session.execute(
        select(*columns).where(_active(), Game.status == "playing", where).limit(limit)
    )
    if live_workers is None:
        return [(row[0], row[1], None) for row in result.all()]
    return [(row[0], row[1], row[2] if row[3] else None) for row in result.all()]


async def get_active_game(
    session: AsyncSession, chat_id: int, thread_id: int | None = None
) -> Game | None:
    """The game in the lobby or in progress of the chat's topic (``thread_id``; None
    or 0: the chat outside any topic), detached, or None."""
    game = await session.scalar(
        select(Game)
        .where(Game.chat_id == chat_id, Game.thread_id == int(thread_id or 0), _active())
        .execution_options(populate_existing=True)
    )
    return _detach(session, game)


async def list_active_games(session: AsyncSession) -> list[Game]:
    """Every game in the lobby or in progress, oldest first (for resuming after a restart)."""
    result = await session.scalars(
        select(Game)
        .where(_active())
        .order_by(Game.created_at, Game.id)
        .execution_options(populate_existing=True)
    )
    return [_detach(session, g) for g in result.all()]  # type: ignore[misc]


def _seated(game: Game, user_id: int) -> bool:
    return any(seat.get("user_id") == user_id for seat in game.seats or [])


async def find_active_game_for_user(session: AsyncSession, user_id: int) -> Game | None:
    """The active game (lobby or in progress) in which this user holds a seat, or None.

    A user plays in one game at a time; if several match anyway, the newest is returned.
    """
    uid = int(user_id)
    query = select(Game).where(_active())
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        query = query.where(text("games.seats @> CAST(:seat AS jsonb)")).params(
            seat=f'[{{"user_id": {uid}}}]'
        )
    elif dialect == "sqlite":
        query = query.where(
            text(
                "EXISTS (SELECT 1 FROM json_each(games.seats) "
                "WHERE json_extract(json_each.value, '$.user_id') = :uid)"
            )
        ).params(uid=uid)
    query = query.order_by(Game.created_at.desc(), Game.id).execution_options(
        populate_existing=True
    )
    for game in (await session.scalars(query)).all():
        if _seated(game, uid):  # the SQL filter narrows, this decides
            return _detach(session, game)
    return None


# The message ids (``table_message_id``, ``private_messages``) are not among them:
# only the outbox writes those, with :func:`bind_slot`, so a game saved from a stale
# read can never erase the id of a message sent meanwhile.
_SAVED_COLUMNS = (
    "status",
    "owner_id",
    "seats",
    "settings",
    "state",
    "move",
    "deadline",
    "due_at",
    "clock_worker",
)


def _save_game_statement() -> Any:
    """``save_game``'s UPDATE, built once (a Core statement with bound parameters: an
    ORM ``update(Game)`` built per call cost more than running it)."""
    table = Game.__table__
    columns = (*_SAVED_COLUMNS, "updated_at")
    return (
        update(table)
        .where(
            table.c.id == bindparam("_id", type_=table.c.id.type),
            table.c.move == bindparam("_expected", type_=table.c.move.type),
        )
        .values({name: bindparam(name, type_=table.c[name].type) for name in columns})
    )


_SAVE_GAME = _save_game_statement()
_PG_SAVE_GAME = (
    "UPDATE games SET "
    + ", ".join(f"{name} = ${i}" for i, name in enumerate((*_SAVED_COLUMNS, "updated_at"), 3))
    + " WHERE id = $1 AND move = $2"
)
_PG_SAVE_JSON = [i for i, name in enumerate(_SAVED_COLUMNS) if name in ("seats", "settings")]
_PG_SAVE_TIMES = [i for i, name in enumerate(_SAVED_COLUMNS) if name in ("deadline", "due_at")]


async def save_game(session: AsyncSession, game: Game, expected_move: int) -> Game:
    """Write the game's current fields, if the stored move number is still ``expected_move``.

    Set ``game.move`` to the new move number before saving (``expected_move + 1`` after
    an accepted action; unchanged for bookkeeping such as message ids). Issues
    ``UPDATE games SET ... WHERE id = :id AND move = :expected``; if no row matches
    (another writer got there first, or the game is gone), raises
    :class:`StaleGameError` and writes nothing. Returns the game, detached, with
    ``updated_at`` refreshed.
    """
    _detach(session, game)
    now = utcnow()
    values: dict[str, Any] = {name: getattr(game, name) for name in _SAVED_COLUMNS}
    values["updated_at"] = now
    # Fresh containers: never hand the database a JSON value the caller keeps mutating.
    values["seats"] = [dict(s) for s in values["seats"] or []]
    values["settings"] = dict(values["settings"] or {})
    pg = await pgdirect.connection(session)
    if pg is not None:
        args = [values[name] for name in _SAVED_COLUMNS]
        for i in _PG_SAVE_JSON:
            args[i] = pgdirect.json_param(args[i])
        for i in _PG_SAVE_TIMES:
            args[i] = pgdirect.utc(args[i])
        changed = await pgdirect.execute(pg, _PG_SAVE_GAME, game.id, expected_move, *args, now)
    else:
        values["_id"], values["_expected"] = game.id, expected_move
        changed = (await session.execute(_SAVE_GAME, values)).rowcount
    if changed != 1:
        raise StaleGameError(game.id, expected_move)
    game.updated_at = now
    return game


# ---------------------------------------------------------------------------- message slots


def table_slot(game_id: str) -> str:
    """The slot of a game's table (or lobby) message."""
    return f"t:{game_id}"


def hand_slot(game_id: str, user_id: int) -> str:
    """The slot of a player's private hand message in a game."""
    return f"h:{game_id}:{int(user_id)}"


def _parse_slot(slot: str) -> tuple[str, str, str | None]:
    """(where, game id, key): ``("t", game, None)`` for a game's table message (its
    ``table_message_id``); ``("h", game, key)`` for a message of one person, kept in
    ``private_messages`` under ``key``: their hand (``str(user_id)``) or, at an online
    table, their own copy of the table (slot ``t:<game>:<user>``, key ``t:<user>``)."""
    kind, _, rest = slot.partition(":")
    if kind == "t":
        game_id, _, user = rest.partition(":")
        return ("h", game_id, f"t:{int(user)}") if user else ("t", rest, None)
    if kind == "h":
        game_id, _, user = rest.partition(":")
        return kind, game_id, str(int(user))
    raise ValueError(f"unknown message slot {slot!r}")


async def slot_message_id(session: AsyncSession, slot: str) -> int | None:
    """The message a slot names now, or None (not sent yet, or gone)."""
    kind, game_id, key = _parse_slot(slot)
    if kind == "t":
        return await session.scalar(select(Game.table_message_id).where(Game.id == game_id))
    pm = await session.scalar(select(Game.private_messages).where(Game.id == game_id))
    value = (pm or {}).get(key)
    return None if value is None else int(value)


def slot_game_id(slot: str) -> str:
    """The game a slot belongs to."""
    return _parse_slot(slot)[1]


async def slot_message_ids(session: AsyncSession, game_ids: Iterable[str]) -> dict[str, int | None]:
    """slot -> the message it names now, for every slot of these games (one query)."""
    result = await session.execute(
        select(Game.id, Game.table_message_id, Game.private_messages).where(
            Game.id.in_(list(game_ids))
        )
    )
    slots: dict[str, int | None] = {}
    for game_id, table_id, private in result.all():
        slots[table_slot(game_id)] = table_id
        for key, message_id in (private or {}).items():
            # An online table's copies ("t:<user>") are the slots t:<game>:<user>.
            slot = f"t:{game_id}:{key[2:]}" if key.startswith("t:") else f"h:{game_id}:{key}"
            slots[slot] = None if message_id is None else int(message_id)
    return slots


async def bind_slot(session: AsyncSession, slot: str, message_id: int | None) -> None:
    """Point a slot at a message (None: at no message), touching nothing else.

    A single UPDATE of one column, or of one key of ``private_messages`` in place
    (jsonb ``||`` / ``-`` on PostgreSQL, ``json_set`` / ``json_remove`` on SQLite), so
    concurrent writers of other fields or other players' keys are never overwritten.
    """
    kind, game_id, key = _parse_slot(slot)
    if kind == "t":
        await session.execute(
            update(Game)
            .where(Game.id == game_id)
            .values(table_message_id=message_id)
            .execution_options(synchronize_session=False)
        )
        return
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        sql = (
            "UPDATE games SET private_messages = private_messages - :key WHERE id = :id"
            if message_id is None
            else "UPDATE games SET private_messages = private_messages || "
            "jsonb_build_object(CAST(:key AS text), CAST(:mid AS bigint)) WHERE id = :id"
        )
    else:
        sql = (
            "UPDATE games SET private_messages = json_remove(private_messages, :path) "
            "WHERE id = :id"
            if message_id is None
            else "UPDATE games SET private_messages = json_set(private_messages, :path, :mid) "
            "WHERE id = :id"
        )
    await session.execute(
        text(sql), {"key": key, "path": f'$."{key}"', "mid": message_id, "id": game_id}
    )


def pg_bind_slot(slot: str, message_id: int | None, first: int) -> tuple[str, list[Any]]:
    """:func:`bind_slot`'s UPDATE on asyncpg directly (see pgdirect), its parameters
    numbered from ``$first``: the SQL and the parameters' values."""
    kind, game_id, key = _parse_slot(slot)
    a, b, c = (f"${first + i}" for i in range(3))
    if kind == "t":
        sql = f"UPDATE games SET table_message_id = {b}::bigint, updated_at = {c} WHERE id = {a}"
        return sql, [game_id, message_id, utcnow()]
    if message_id is None:
        return f"UPDATE games SET private_messages = private_messages - {b}::text WHERE id = {a}", [
            game_id,
            key,
        ]
    sql = (
        f"UPDATE games SET private_messages = private_messages || "
        f"jsonb_build_object({b}::text, {c}::bigint) WHERE id = {a}"
    )
    return sql, [game_id, key, message_id]


# ---------------------------------------------------------------------------- results


def _side_value(values: Sequence[int] | None, side: int) -> int:
    if values is None or side < 0 or side >= len(values):
        return 0
    return int(values[side])


async def record_match_result(
    session: AsyncSession,
    *,
    chat_id: int,
    game_id: str,
    variant: str,
    target: int,
    scores: Sequence[int],
    winner_side: int | None,
    hands_played: int,
    players: Iterable[Mapping[str, Any]],
    hands_won: Sequence[int] | None = None,
    kots: Sequence[int] | None = None,
    finished_at: datetime | None = None,
) -> MatchResult | None:
    """Store a finished match and add it to each human player's tally in this chat.

    ``scores``, ``hands_won`` and ``kots`` (kots and hakem-kots won) are per side;
    ``players`` are dicts ``{"user_id", "name", "side", "bot"}``, optionally with
    ``"number"`` (the seat's place in the lobby, which names a computer player): computer
    players (``bot`` set or ``user_id`` None) get no tally. A player's tally gains one match
    played, one won if their side is ``winner_side``, and their side's hands won, kots
    and points. Everything happens in the caller's transaction.

    Idempotent per game: if this game's result is already stored, nothing changes and
    None is returned.
    """
    existing = await session.scalar(select(MatchResult.id).where(MatchResult.game_id == game_id))
    if existing is not None:
        return None
    player_list = [
        {
            "user_id": None if p.get("user_id") is None else int(p["user_id"]),
            "name": str(p.get("name") or ""),
            "side": int(p["side"]),
            "bot": p.get("bot"),
            **({"number": int(p["number"])} if p.get("number") is not None else {}),
        }
        for p in players
    ]
    result = MatchResult(
        chat_id=chat_id,
        game_id=game_id,
        finished_at=finished_at or utcnow(),
        variant=variant,
        target=target,
        scores=[int(s) for s in scores],
        hands_won=[int(h) for h in hands_won or []],
        kots=[int(k) for k in kots or []],
        winner_side=winner_side,
        hands_played=hands_played,
        players=player_list,
    )
    session.add(result)
    await session.flush()

    now = utcnow()
    seen: set[int] = set()
    for p in player_list:
        user_id = p["user_id"]
        if user_id is None or p["bot"] or user_id in seen:
            continue
        seen.add(user_id)
        side = p["side"]
        row = {
            "chat_id": chat_id,
            "user_id": user_id,
            "name": p["name"],
            "matches_played": 1,
            "matches_won": 1 if winner_side is not None and side == winner_side else 0,
            "hands_won": _side_value(hands_won, side),
            "kots": _side_value(kots, side),
            "points": _side_value(scores, side),
            "updated_at": now,
        }
        stmt = _insert(session, PlayerTally).values(**row)
        table = PlayerTally.__table__.c
        stmt = stmt.on_conflict_do_update(
            index_elements=[PlayerTally.chat_id, PlayerTally.user_id],
            set_={
                "name": stmt.excluded.name,
                "matches_played": table.matches_played + stmt.excluded.matches_played,
                "matches_won": table.matches_won + stmt.excluded.matches_won,
                "hands_won": table.hands_won + stmt.excluded.hands_won,
                "kots": table.kots + stmt.excluded.kots,
                "points": table.points + stmt.excluded.points,
                "updated_at": stmt.excluded.updated_at,
            },
        )
        await session.execute(stmt)
    return result


async def recent_matches(session: AsyncSession, chat_id: int, limit: int = 10) -> list[MatchResult]:
    """The chat's latest match results, newest first."""
    result = await session.scalars(
        select(MatchResult)
        .where(MatchResult.chat_id == chat_id)
        .order_by(MatchResult.finished_at.desc(), MatchResult.id.desc())
        .limit(limit)
    )
    return list(result.all())


async def leaderboard(session: AsyncSession, chat_id: int, limit: int = 10) -> list[PlayerTally]:
    """The chat's best players: by matches won, then hands won, then kots."""
    result = await session.scalars(
        select(PlayerTally)
        .where(PlayerTally.chat_id == chat_id)
        .order_by(
            PlayerTally.matches_won.desc(),
            PlayerTally.hands_won.desc(),
            PlayerTally.kots.desc(),
            PlayerTally.points.desc(),
            PlayerTally.matches_played.asc(),
            PlayerTally.user_id.asc(),
        )
        .execution_options(populate_existing=True)
        .limit(limit)
    )
    return list(result.all())


async def get_tally(session: AsyncSession, chat_id: int, user_id: int) -> PlayerTally | None:
    return await session.get(PlayerTally, (chat_id, user_id), populate_existing=True)


async def count_matches(session: AsyncSession, chat_id: int) -> int:
    return int(
        await session.scalar(
            select(func.count()).select_from(MatchResult).where(MatchResult.chat_id == chat_id)
        )
        or 0
    )


async def lease_computers(
    session: AsyncSession, game_id: str, move: int, until: datetime, worker: int | None = None
) -> bool:
    """Push the computers' due time to ``until`` while they think (a lease: no other
    process takes their move over before it, unless ``worker``, the one thinking,
    dies). False if the game has moved on."""
    result = await session.execute(
        update(Game)
        .where(Game.id == game_id, Game.move == move)
        .values(due_at=until, clock_worker=worker)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1
