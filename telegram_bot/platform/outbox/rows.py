"""The outbox's rows: the table, a row and a drain's batch of them, the statements
that write and delete them, and the limits the outbox works within."""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, insert, text
from sqlalchemy.ext.asyncio import AsyncSession
from telegram.error import RetryAfter

from telegram_bot.platform.storage import pgdirect, repo
from telegram_bot.platform.storage.models import OutboxMessage

#: How many rows of one chat a drain reads at a time.
_BATCH = 32
#: Attempts before a message that fails in an unexpected way is given up.
_MAX_UNEXPECTED = 5
#: Bot API calls of the outbox in flight at once (more chats wait their turn). Answers
#: to presses, made by the handlers, so never queue behind edits for a connection; and
#: the HTTP pool stays small (httpcore walks every pooled connection, with a poll() of
#: each idle one's socket, on every request). Telegram takes ~30 calls/s from a bot:
#: at its ~0.1 s round trips a few calls in flight are enough.
_CALLS_AT_ONCE = 6
#: Rows waiting this long may be nobody's: the poll drains their chats.
_ORPHAN_AFTER = timedelta(seconds=2)
#: Remembered signatures (what each message shows); a forgotten one costs one edit.
_SHOWN_LIMIT = 8192


def _target(chat_id: int, slot: str | None, message_id: int | None) -> str:
    return f"{chat_id}/{slot if slot is not None else message_id}"


def _retry_after_seconds(exc: RetryAfter) -> float:
    ra = exc.retry_after
    return ra.total_seconds() if hasattr(ra, "total_seconds") else float(ra)


class _Lru(OrderedDict[str, str]):
    def remember(self, key: str, value: str) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > _SHOWN_LIMIT:
            self.popitem(last=False)


_OUTBOX = OutboxMessage.__table__
_NO_PREVIEW = json.dumps({"is_disabled": True})
_EMPTY_ROW: dict[str, Any] = {
    "slot": None,
    "message_id": None,
    "text": None,
    "markup": None,
    "thread_id": None,
}
#: Rows carried out whose deletion waits for a cleanup: at most this many, this long.
_CLEANUP_ROWS = 64
_CLEANUP_SECONDS = 0.5


_PG_DELETE = "DELETE FROM outbox WHERE id = ANY($1::integer[])"


def _pg_flush(ids: list[int], binds: list[tuple[int, str, int | None]]) -> list[Any]:
    """The deletion of rows done with and (at most) one bind as one statement: the
    SQL and its parameters."""
    if not binds:
        return [_PG_DELETE, ids]
    _row_id, slot, message_id = binds[0]
    bind_sql, args = repo.pg_bind_slot(slot, message_id, 2)
    return [_with_deletion(bind_sql), ids, *args]


@functools.cache
def _with_deletion(bind_sql: str) -> str:
    # One string object per form (there are three): asyncpg's statement cache of each
    # pooled connection keeps the text it was given, so a new string per call would
    # hold one more copy for every connection the pool opens.
    return f"WITH gone AS ({_PG_DELETE}) {bind_sql}"


async def _delete_ids(s: AsyncSession, ids: list[int]) -> None:
    for i in range(0, len(ids), 500):
        await s.execute(delete(_OUTBOX).where(_OUTBOX.c.id.in_(ids[i : i + 500])))


#: The rows in one statement on asyncpg (see pgdirect), in the given order: the
#: serial ids are drawn row by row in that order, so sorted they are the rows' ids.
_PG_INSERT = (
    "INSERT INTO outbox (chat_id, op, slot, message_id, text, markup, thread_id, created_at)"
    " SELECT c, o, s, m, t, k, h, $8 FROM unnest($1::bigint[], $2::varchar[], $3::varchar[],"
    " $4::bigint[], $5::text[], $6::text[], $7::bigint[])"
    " WITH ORDINALITY AS r(c, o, s, m, t, k, h, n) ORDER BY n RETURNING id"
)


async def _pg_insert_ids(pg: Any, rows: list[dict[str, Any]], now: Any) -> list[int]:
    columns: list[list[Any]] = [[], [], [], [], [], [], []]
    for row in rows:
        columns[0].append(row["chat_id"])
        columns[1].append(row["op"])
        columns[2].append(row.get("slot"))
        columns[3].append(row.get("message_id"))
        columns[4].append(row.get("text"))
        columns[5].append(row.get("markup"))
        columns[6].append(row.get("thread_id"))
    return sorted(r[0] for r in await pgdirect.fetch(pg, _PG_INSERT, *columns, now))


async def _insert_ids(s: AsyncSession, values: list[dict[str, Any]]) -> list[int]:
    """Insert the rows (one executemany); their ids, in order."""
    if s.get_bind().dialect.name == "sqlite":
        # Rows inserted one after the other in a write transaction get consecutive
        # ids (AUTOINCREMENT, one writer): the last one gives them all.
        await s.execute(insert(_OUTBOX), values)
        last = int(await s.scalar(text("SELECT last_insert_rowid()")) or 0)
        return list(range(last - len(values) + 1, last + 1))
    result = await s.execute(
        insert(_OUTBOX).returning(_OUTBOX.c.id, sort_by_parameter_order=True), values
    )
    return list(result.scalars().all())


class _Row:
    """One outbox row, as stored."""

    __slots__ = (
        "attempts",
        "chat_id",
        "id",
        "markup",
        "message_id",
        "not_before",
        "op",
        "slot",
        "text",
        "thread_id",
    )

    def __init__(
        self,
        id: int,
        chat_id: int,
        op: str,
        slot: str | None = None,
        message_id: int | None = None,
        not_before: Any = None,
        attempts: int = 0,
        text: str | None = None,
        markup: str | None = None,
        thread_id: int | None = None,
        **_: Any,
    ) -> None:
        self.id, self.chat_id, self.op, self.slot = id, chat_id, op, slot
        self.message_id, self.not_before, self.attempts = message_id, not_before, attempts
        self.text, self.markup = text, markup
        #: The forum topic the message goes to (None: the chat itself).
        self.thread_id = thread_id

    def replaced_by(self, slot: str | None, message_id: int | None) -> bool:
        """Is this an edit of the message an edit of ``slot`` / ``message_id`` replaces?"""
        return self.op == "edit" and (self.slot, self.message_id) == (slot, message_id)


def _game_of(slot: str | None) -> str | None:
    """The game a slot (``t:<game>``, ``h:<game>:<user>``) belongs to."""
    if not slot or slot[1:2] != ":":
        return None
    return slot[2:].partition(":")[0]


def _row_id(row: _Row) -> int:
    return row.id


class _Batch:
    """Rows of one chat being carried out, with what the drain learnt reading them,
    and what it has done with them not yet written (see Cleaner.flush)."""

    def __init__(self, rows: list[_Row], read: bool) -> None:
        self.rows = rows
        #: Read from the database (else: kept in memory).
        self.read = read
        #: slot -> message id it names now (read with the rows, then kept up to date).
        self.slots: dict[str, int | None] = {}
        #: shared: target -> what the message shows, as stored.
        self.shown: dict[str, str | None] = {}
        self.finished: list[int] = []
        self.binds: list[tuple[int, str, int | None]] = []
        self.shown_now: list[tuple[str, str | None]] = []


def _signature(text: str, markup_json: str | None) -> str:
    """A short fingerprint of what a message shows."""
    data = f"{text}\x00{markup_json or ''}".encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
