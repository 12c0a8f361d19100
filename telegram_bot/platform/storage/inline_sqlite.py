"""SQLite on the event loop's thread: aiosqlite's connection without its thread.

aiosqlite runs every call (cursor, execute, fetch, close, commit) in a thread of its
own: two thread wake-ups for each, about four calls for each statement SQLAlchemy
runs. A SQLite statement on a local file in WAL mode with ``synchronous=NORMAL``
takes microseconds and does not wait for the disk at commit, so the hops cost many
times the work they carry (they were a quarter of the bot's CPU per play). Here the
same :class:`aiosqlite.Connection` runs each call at once, on the calling thread;
SQLAlchemy's ``sqlite+aiosqlite`` dialect is used unchanged (``async_creator``).

The one thing a thread gave for free is waiting for another connection's write lock
without stopping the event loop: SQLite's own busy handler sleeps in the calling
thread, and the connection holding the lock may be waiting for that very loop. So the
connections are opened with ``busy_timeout = 0`` and a call refused with
``SQLITE_BUSY`` is retried after an ``asyncio.sleep`` (1 ms, doubling up to 50 ms),
until ``busy_timeout_ms`` have passed (then the error is raised, as SQLite would). A
statement refused that way has done nothing (the lock is taken before anything is
written), and SQLite allows a refused COMMIT to be tried again.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable, Generator
from typing import Any

import aiosqlite

__all__ = ["InlineConnection", "inline_creator"]

# SQLITE_BUSY and SQLITE_BUSY_RECOVERY: worth waiting for. (SQLITE_BUSY_SNAPSHOT, a
# read snapshot too old to write from, is not: SQLite's busy handler is not called
# for it either.)
_RETRYABLE = frozenset({5, 261})
_FIRST_WAIT = 0.001
_LONGEST_WAIT = 0.05


class _RunNow:
    """Stands for aiosqlite's queue to its thread (used directly by aiosqlite for
    connecting and stopping, and by SQLAlchemy to set the isolation level): runs the
    function at once and settles its future."""

    def put_nowait(self, item: tuple[asyncio.Future[Any] | None, Callable[[], Any]]) -> None:
        future, function = item
        try:
            result = function()
        except BaseException as exc:
            if future is not None and not future.done():
                future.set_exception(exc)
            elif future is None:
                raise
            return
        if future is not None and not future.done():
            future.set_result(result)


class InlineConnection(aiosqlite.Connection):
    """An :class:`aiosqlite.Connection` whose calls run on the caller's thread."""

    def __init__(self, connector: Callable[[], sqlite3.Connection], busy_timeout_ms: int) -> None:
        super().__init__(connector, iter_chunk_size=64)
        self._tx = _RunNow()  # type: ignore[assignment]
        self._busy_timeout = busy_timeout_ms / 1000

    def __await__(self) -> Generator[Any, None, InlineConnection]:
        # (aiosqlite starts its thread here.)
        return self._connect().__await__()  # type: ignore[return-value]

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        deadline: float | None = None
        wait = _FIRST_WAIT
        while True:
            if not self._running or not self._connection:
                raise ValueError("Connection closed")
            try:
                return fn(*args, **kwargs)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", None) not in _RETRYABLE:
                    raise
                now = asyncio.get_running_loop().time()
                if deadline is None:
                    deadline = now + self._busy_timeout
                if now >= deadline:
                    raise
            await asyncio.sleep(wait)
            wait = min(wait * 2, _LONGEST_WAIT)


def _open(database: str, busy_timeout_ms: int, kwargs: dict[str, Any]) -> sqlite3.Connection:
    conn = sqlite3.connect(database, **kwargs)
    # SQLite must never sleep in this thread: see the module's documentation.
    conn.execute("PRAGMA busy_timeout = 0")
    return conn


def inline_creator(
    database: str, busy_timeout_ms: int, **kwargs: Any
) -> Callable[[], InlineConnection]:
    """An ``async_creator`` for :func:`sqlalchemy.ext.asyncio.create_async_engine`."""
    kwargs["check_same_thread"] = False  # used by one task at a time, from any thread
    connector = functools.partial(_open, database, busy_timeout_ms, kwargs)

    def create() -> InlineConnection:
        return InlineConnection(connector, busy_timeout_ms)

    return create
