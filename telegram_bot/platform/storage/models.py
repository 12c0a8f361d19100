"""Database tables of the bot (SQLAlchemy 2 declarative, typed).

The schema itself is created by the Alembic migrations in ``telegram_bot/platform/migrations``;
``tests/storage`` checks that the migrations and these models agree.

Notes shared by every table:
- Telegram ids (users, chats, messages) do not fit in 32 bits: they are ``BigInteger``.
- Timestamps are stored in UTC and always come back timezone-aware (``UTCDateTime``),
  on SQLite as well as on PostgreSQL.
- JSON columns are ``jsonb`` on PostgreSQL and JSON text on SQLite. Object keys in JSON
  are strings: ``Game.private_messages`` maps ``str(user_id)`` to a message id (the
  hand), and at an online table ``"t:<user_id>"`` to that person's copy of the table.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

# Game statuses.
LOBBY = "lobby"
PLAYING = "playing"
FINISHED = "finished"
CANCELLED = "cancelled"
GAME_STATUSES = (LOBBY, PLAYING, FINISHED, CANCELLED)
ACTIVE_STATUSES = (LOBBY, PLAYING)

LANGUAGES = ("fa", "en")

# The partial unique index "one lobby or running game per chat and topic" uses this predicate.
ACTIVE_GAME_PREDICATE = "status IN ('lobby', 'playing')"

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime stored in UTC.

    SQLite has no time zones: values go in as naive UTC and come back with ``UTC``
    attached. Naive datetimes given by the application are taken to be UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# jsonb on PostgreSQL (comparable, indexable), JSON text elsewhere.
JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(Base):
    """A Telegram user the bot has seen."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    first_name: Mapped[str] = mapped_column(String(256))
    username: Mapped[str | None] = mapped_column(String(64))
    # 'fa' | 'en' chosen by the user; None: not chosen, use ``telegram_language``.
    language: Mapped[str | None] = mapped_column(String(8))
    # Telegram's language_code as last seen (for example 'fa', 'en-US'), or None.
    telegram_language: Mapped[str | None] = mapped_column(String(16))
    # Has the user opened a private chat with the bot (bots cannot write first)?
    started_bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The Mini App's deck style ('classic' | 'four', telegram_bot.web.cards.DECKS), or
    # None: not chosen.
    deck: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, onupdate=utcnow, server_default=func.now()
    )

    def __repr__(self) -> str:
        return f"User(id={self.id!r}, first_name={self.first_name!r})"


class Chat(Base):
    """A chat the bot is in: usually a group or supergroup."""

    __tablename__ = "chats"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    # Telegram's chat type: 'private' | 'group' | 'supergroup' | 'channel'.
    type: Mapped[str] = mapped_column(String(16))
    title: Mapped[str | None] = mapped_column(String(256))
    language: Mapped[str] = mapped_column(String(8), default="fa", server_default="fa")
    # Default table settings for new games in this chat (variant, target, timer, ...).
    settings: Mapped[dict[str, Any]] = mapped_column(
        JSONType, default=dict, server_default=text("'{}'")
    )
    created_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )
    # The newest message id any worker has seen in the chat (telegram_bot.service.reposts);
    # kept here only when several workers share the database.
    newest_message_id: Mapped[int | None] = mapped_column(BigInteger)

    def __repr__(self) -> str:
        return f"Chat(id={self.id!r}, type={self.type!r}, title={self.title!r})"


class Game(Base):
    """One game: a lobby, then a match in progress, then finished or cancelled.

    ``seats`` is a list of seat dicts::

        {"user_id": 123 | None, "name": "Alice", "bot": "normal" | None,
         "away": False, "timeouts": 0}

    ``move`` is the move number: it goes up by one on every accepted action, buttons
    carry it, and ``repo.save_game`` only writes when the stored number is the one the
    writer read (optimistic concurrency).
    """

    __tablename__ = "games"
    __table_args__ = (
        CheckConstraint("status IN ('lobby', 'playing', 'finished', 'cancelled')", name="status"),
        Index(
            "uq_games_one_active_per_topic",
            "chat_id",
            "thread_id",
            unique=True,
            sqlite_where=text(ACTIVE_GAME_PREDICATE),
            postgresql_where=text(ACTIVE_GAME_PREDICATE),
        ),
    )

    id: Mapped[str] = mapped_column(String(8), primary_key=True)
    chat_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("chats.id", ondelete="CASCADE"), index=True
    )
    # The forum topic the game is played in (Telegram's message_thread_id); 0 outside
    # forums (not NULL: the one-active-game index must see "no topic" as one value).
    thread_id: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    status: Mapped[str] = mapped_column(String(16), default=LOBBY, server_default=LOBBY)
    owner_id: Mapped[int] = mapped_column(BigInteger)
    seats: Mapped[list[dict[str, Any]]] = mapped_column(
        JSONType, default=list, server_default=text("'[]'")
    )
    settings: Mapped[dict[str, Any]] = mapped_column(
        JSONType, default=dict, server_default=text("'{}'")
    )
    # The engine's JSON (core.Match serialized); None while in the lobby.
    state: Mapped[str | None] = mapped_column(Text)
    move: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    table_message_id: Mapped[int | None] = mapped_column(BigInteger)
    # {str(user_id): message_id} of each player's private hand message.
    private_messages: Mapped[dict[str, int]] = mapped_column(
        JSONType, default=dict, server_default=text("'{}'")
    )
    # When the current turn times out (UTC, aware); None when no timer runs.
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # When computer seats are to move next (None: a person is on turn). Whoever is
    # thinking for them pushes it forward: it is the lease on the computers' move.
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Several workers: the one that armed the turn's clock (its number in
    # telegram_bot.service.clock.Liveness); None for one process.
    clock_worker: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, onupdate=utcnow, server_default=func.now()
    )

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    def user_ids(self) -> list[int]:
        """The Telegram ids of the human players seated (in seat order)."""
        return [s["user_id"] for s in self.seats or [] if s.get("user_id") is not None]

    def __repr__(self) -> str:
        return (
            f"Game(id={self.id!r}, chat_id={self.chat_id!r}, status={self.status!r}, "
            f"move={self.move!r})"
        )


class MatchResult(Base):
    """A finished match, kept as the group's history (survives pruning of games)."""

    __tablename__ = "match_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("chats.id", ondelete="CASCADE"), index=True
    )
    # One result per game: recording the same game twice is a no-op.
    game_id: Mapped[str] = mapped_column(String(8), unique=True)
    finished_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )
    variant: Mapped[str] = mapped_column(String(32))
    target: Mapped[int] = mapped_column(Integer)
    # Per side (index = side): points, hands won, kots (kot or hakem-kot) won.
    scores: Mapped[list[int]] = mapped_column(JSONType)
    hands_won: Mapped[list[int]] = mapped_column(
        JSONType, default=list, server_default=text("'[]'")
    )
    kots: Mapped[list[int]] = mapped_column(JSONType, default=list, server_default=text("'[]'"))
    winner_side: Mapped[int | None] = mapped_column(Integer)
    hands_played: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    # [{"user_id": 123 | None, "name": "Alice", "side": 0, "bot": None | "normal"}, ...]
    players: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)

    def __repr__(self) -> str:
        return f"MatchResult(id={self.id!r}, game_id={self.game_id!r}, scores={self.scores!r})"


class OutboxMessage(Base):
    """A send, edit or delete the bot has decided on and not yet carried out.

    Rows are written in the same transaction as the move that decided them and
    deleted once Telegram has taken them, so a crash at any moment loses no message
    (see :mod:`telegram_bot.platform.outbox`). ``slot`` names a message by its role instead
    of its id: ``t:<game>`` is a game's table message, ``h:<game>:<user>`` a player's
    hand message. A send with a slot binds the new message id to it; an edit or delete
    with a slot acts on whatever message the slot names when it is carried out.
    """

    __tablename__ = "outbox"
    # AUTOINCREMENT: SQLite would otherwise hand a deleted row's id to the next row,
    # and a drain holding the old row would delete the new one.
    __table_args__ = (
        Index("ix_outbox_chat_id_id", "chat_id", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    # 'send' | 'edit' | 'delete'
    op: Mapped[str] = mapped_column(String(8))
    slot: Mapped[str | None] = mapped_column(String(48))
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    # A send into a forum topic: its message_thread_id (None: the chat itself).
    thread_id: Mapped[int | None] = mapped_column(BigInteger)
    # Telegram asked to wait (429): not before this time (UTC).
    not_before: Mapped[datetime | None] = mapped_column(UTCDateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    # (After ``attempts``: inside the class body this name hides sqlalchemy's ``text``.)
    text: Mapped[str | None] = mapped_column(Text)
    # The reply markup as JSON text (kept verbatim: it is part of the edit's signature).
    markup: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )

    def __repr__(self) -> str:
        return f"OutboxMessage(id={self.id!r}, chat_id={self.chat_id!r}, op={self.op!r})"


class InboxUpdate(Base):
    """An update received by the webhook ingress and not yet handled by a worker.

    Several workers claim rows with ``FOR UPDATE SKIP LOCKED`` and a lease
    (``claimed_until``); a worker that dies leaves its claims to expire, and another
    worker handles them again (every handler is safe to repeat).
    """

    __tablename__ = "inbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    update_id: Mapped[int] = mapped_column(BigInteger, unique=True)
    payload: Mapped[str] = mapped_column(Text)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    received_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )


class ShownMessage(Base):
    """What a message shows (a hash of its text and buttons), shared by the workers
    that send it, so none repeats an edit another already made."""

    __tablename__ = "shown_messages"

    target: Mapped[str] = mapped_column(String(80), primary_key=True)
    signature: Mapped[str] = mapped_column(String(64))


class RateBucket(Base):
    """A token bucket of Telegram's flood limits shared by the workers of one bot
    (``bot:<id>`` overall, ``group:<id>:<chat>`` per group; see telegram_bot.platform.ratelimit)."""

    __tablename__ = "rate_buckets"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    tokens: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PlayerTally(Base):
    """A human player's totals in one chat, updated when a match of theirs ends."""

    __tablename__ = "player_tallies"
    __table_args__ = (Index("ix_player_tallies_leaderboard", "chat_id", "matches_won"),)

    chat_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    # The player's name as of their last match (for the leaderboard).
    name: Mapped[str] = mapped_column(String(256), default="", server_default="")
    matches_played: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    matches_won: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    hands_won: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    kots: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    points: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, onupdate=utcnow, server_default=func.now()
    )

    def __repr__(self) -> str:
        return (
            f"PlayerTally(chat_id={self.chat_id!r}, user_id={self.user_id!r}, "
            f"matches_won={self.matches_won!r})"
        )


class HandRecord(Base):
    """A finished 4-player hand, kept for one of its players to review
    (:mod:`telegram_bot.service.review`): the deal as it stood when play began and the cards
    played, in order. The engine deals the next hand as soon as one ends, so this is
    written in the transaction of the move that ended the hand. Only each player's
    last few hands are kept (:data:`telegram_bot.service.hands.KEEP`).
    """

    __tablename__ = "hand_records"
    __table_args__ = (UniqueConstraint("user_id", "game_id", "hand_no"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigInteger)
    game_id: Mapped[str] = mapped_column(String(8))
    hand_no: Mapped[int] = mapped_column(Integer)
    # The player's engine seat (0-3; sides are seat % 2).
    seat: Mapped[int] = mapped_column(Integer)
    # The trump suit's letter ('S', 'H', 'D', 'C').
    trump: Mapped[str] = mapped_column(String(1))
    # Per seat, the cards held when play began: [["AS", "10H", ...], ...].
    deal: Mapped[list[list[str]]] = mapped_column(JSONType)
    # The cards played, in order: [[seat, "AS"], ...].
    plays: Mapped[list[list[Any]]] = mapped_column(JSONType)
    # Per seat: {"user_id", "name", "bot", "number"} as the table named them.
    players: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    finished_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )

    def __repr__(self) -> str:
        return (
            f"HandRecord(user_id={self.user_id!r}, game_id={self.game_id!r}, "
            f"hand_no={self.hand_no!r})"
        )


class OnlineQueueEntry(Base):
    """A person waiting in the private chat for a table of strangers (play with anyone).

    One row per person (a person is in at most one queue or match at a time): joining
    again replaces the row. The matcher (:func:`telegram_bot.platform.storage.online.match_tables`)
    deletes the rows of those it seats in the transaction that seats them.
    """

    __tablename__ = "online_queue"
    __table_args__ = (
        CheckConstraint("players IN (2, 3, 4)", name="players"),
        Index("ix_online_queue_players_joined_at", "players", "joined_at"),
    )

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    # The game asked for: 4 (two partnerships), 3 or 2 players.
    players: Mapped[int] = mapped_column(Integer)
    # The person's language ('fa' | 'en'): tables of one language are preferred.
    language: Mapped[str] = mapped_column(String(8))
    # Their skill in this game when they joined, on the display scale without the
    # uncertainty discount (telegram_bot.service.ratings.matching_value).
    rating: Mapped[float] = mapped_column(Float)
    # How far from their rating others may be at first (display points); it widens
    # with the time waited (telegram_bot.service.matching).
    band: Mapped[float] = mapped_column(Float)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # When the computers' offer (start now, unrated) was claimed for sending; None: not yet.
    offered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"OnlineQueueEntry(user_id={self.user_id!r}, players={self.players!r})"


class Rating(Base):
    """A person's skill in one game (2, 3 or 4 players) as the rating library keeps it:
    the mean ``mu`` and uncertainty ``sigma`` of openskill's Plackett-Luce model."""

    __tablename__ = "ratings"
    __table_args__ = (CheckConstraint("players IN (2, 3, 4)", name="players"),)

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    players: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )

    def __repr__(self) -> str:
        return (
            f"Rating(user_id={self.user_id!r}, players={self.players!r}, "
            f"mu={self.mu!r}, sigma={self.sigma!r})"
        )


class RatedMatch(Base):
    """A finished rated match of strangers, kept apart from the groups' ``match_results``
    (and from matches with a computer seat, which are never rated)::

        players_json = [{"user_id": 1, "team": 0, "rank": 1, "mu_before": 25.0,
                         "sigma_before": 8.33, "mu": 27.1, "sigma": 7.9}, ...]
    """

    __tablename__ = "rated_matches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # One record per game: rating the same game twice is a no-op.
    game_id: Mapped[str] = mapped_column(String(8), unique=True)
    players: Mapped[int] = mapped_column(Integer)
    finished_at: Mapped[datetime] = mapped_column(
        UTCDateTime, default=utcnow, server_default=func.now()
    )
    seats: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)

    def __repr__(self) -> str:
        return f"RatedMatch(id={self.id!r}, game_id={self.game_id!r}, players={self.players!r})"


class OpenPage(Base):
    """A Mini App page open on a game: one process's event stream(s) of one user.

    The process that serves the stream (``holder``) writes the row when the user's
    first stream on the game opens, pushes ``expires_at`` forward while it stays open
    (a lease: a killed process's rows expire by themselves) and deletes it when the
    last one closes. The service reads the game's live rows in a move's transaction
    to send fewer chat messages to people who follow the game on the page
    (:mod:`telegram_bot.platform.live`)."""

    __tablename__ = "open_pages"
    __table_args__ = (Index("ix_open_pages_holder", "holder"),)

    game_id: Mapped[str] = mapped_column(String(8), primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    holder: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return (
            f"OpenPage(game_id={self.game_id!r}, user_id={self.user_id!r}, holder={self.holder!r})"
        )
