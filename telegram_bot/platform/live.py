"""The live bus: "game G is now at move M", from whoever committed the move to every
open page of that game.

A notice carries no cards, only the game id and its move number: each listener then
builds its own seat's view, so nothing hidden crosses the bus. A listener that falls
behind loses nothing that matters: notices of one game are coalesced to the newest
move (a page shows the latest state, and catches up from its last move number).

:class:`LocalBus` serves one process (asyncio, in memory). :class:`PgBus` serves
several processes sharing one PostgreSQL database: the committing transaction sends
``pg_notify('hokm_moves', 'G:M')`` (:func:`notify`, so the notice goes out only if the
move commits), and each process LISTENs on one connection of its own, feeding a
LocalBus. A lost connection is opened again; notices sent meanwhile are lost, so
after each LISTEN the bus reads the current move of every game it has listeners on
and announces it (catch-up): a listener then re-reads the view from its last move.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import delete, event, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage.models import OpenPage, utcnow

__all__ = [
    "CHANNEL",
    "LiveBus",
    "LocalBus",
    "OpenPages",
    "PgBus",
    "Subscription",
    "announce",
    "forget_lapsed",
    "notify",
    "open_pages",
    "page_leases",
    "parse_notice",
]

log = logging.getLogger(__name__)

#: The NOTIFY channel of committed moves (payload ``"<game id>:<move>"``).
CHANNEL = "hokm_moves"


class Subscription:
    """One listener on one game: the newest move number announced since it last
    looked. Use as an async context manager (it unsubscribes on exit)."""

    __slots__ = ("_bus", "_changed", "_closed", "_seen", "game_id", "latest")

    def __init__(self, bus: LocalBus, game_id: str) -> None:
        self._bus = bus
        self.game_id = game_id
        #: The newest move announced, or -1 before any.
        self.latest = -1
        self._seen = -1
        self._changed = asyncio.Event()
        self._closed = False

    def _notify(self, move: int) -> None:
        if move > self.latest:
            self.latest = move
            self._changed.set()

    async def next(self, timeout: float | None = None) -> int | None:
        """The newest move announced after the last one returned; None on timeout
        or once closed."""
        while not self._closed:
            if self.latest > self._seen:
                self._seen = self.latest
                self._changed.clear()
                return self._seen
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except TimeoutError:
                return None
        return None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._changed.set()
            self._bus._remove(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def __aiter__(self) -> AsyncIterator[int]:
        while (move := await self.next()) is not None:
            yield move


@runtime_checkable
class LiveBus(Protocol):
    """What the web adapter needs of a live bus."""

    def publish(self, game_id: str, move: int) -> None:
        """Announce that ``game_id`` is now at ``move`` (after the move is committed)."""

    def subscribe(self, game_id: str) -> Subscription:
        """Start listening to ``game_id``; close the subscription when done."""


class LocalBus:
    """The live bus of one process."""

    async def start(self) -> None:
        """Nothing to open (the same life cycle as :class:`PgBus`)."""

    async def close(self) -> None:
        """Nothing to close."""

    def __init__(self) -> None:
        self._subs: dict[str, set[Subscription]] = {}
        #: Notices published so far (a statistic).
        self.published = 0

    def publish(self, game_id: str, move: int) -> None:
        self.published += 1
        for sub in tuple(self._subs.get(game_id, ())):
            sub._notify(move)

    def subscribe(self, game_id: str) -> Subscription:
        sub = Subscription(self, game_id)
        self._subs.setdefault(game_id, set()).add(sub)
        return sub

    def listeners(self, game_id: str | None = None) -> int:
        """How many subscriptions are open (on one game, or on all)."""
        if game_id is not None:
            return len(self._subs.get(game_id, ()))
        return sum(map(len, self._subs.values()))

    def _remove(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.game_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.game_id]


# ------------------------------------------------------------------------ PostgreSQL


async def notify(session: AsyncSession, game_id: str, move: int) -> None:
    """Announce ``game_id`` at ``move`` to every process, inside ``session``'s open
    transaction: PostgreSQL sends the notice when the transaction commits, and never
    if it rolls back. On any other database (one process) it does nothing: the
    committer publishes on its :class:`LocalBus` after commit."""
    if session.get_bind().dialect.name != "postgresql":
        return
    await session.execute(select(func.pg_notify(CHANNEL, f"{game_id}:{int(move)}")))


async def announce(session: AsyncSession, bus: LiveBus | None, game_id: str, move: int) -> None:
    """A move of ``game_id`` stored in ``session``'s open transaction: :func:`notify`
    the other processes in it, and publish on ``bus`` (this process's listeners) once
    the transaction has committed; nothing if it rolls back."""
    await notify(session, game_id, move)
    if bus is None:
        return
    sync = session.sync_session
    pending: dict[str, int] | None = sync.info.get("live_moves")
    if pending is None:
        pending = sync.info["live_moves"] = {}

        def committed(_session: Any) -> None:
            moves = dict(pending)
            pending.clear()
            for gid, m in moves.items():
                bus.publish(gid, m)

        def rolled_back(_session: Any) -> None:
            pending.clear()

        event.listen(sync, "after_commit", committed)
        event.listen(sync, "after_soft_rollback", rolled_back)
    pending[game_id] = max(move, pending.get(game_id, -1))


class OpenPages:
    """Who has a game's page open, kept in the database so that every process sees it
    (a cluster's ingress serves the pages, its workers render the moves).

    The process serving event streams holds one :class:`~telegram_bot.platform.storage.models.OpenPage`
    row per (game, user) with a stream open here (a user's tabs are counted in
    memory: the row goes when the last closes), each a lease of ``lease`` seconds
    pushed forward every ``lease / 3`` seconds while the process lives (:meth:`start`),
    so a killed process's pages count as closed once their lease runs out. Any
    process reads them with :func:`open_pages`, one indexed query. A failed write is
    logged and leaves the chat as it would be without the page (never quieter)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        lease: float = 60.0,
        holder: str | None = None,
    ) -> None:
        self._sessions = sessions
        self.lease = lease
        #: This process's name on its rows (unique per start).
        self.holder = holder or f"{socket.gethostname()[:32]}:{os.getpid()}:{secrets.token_hex(4)}"
        self._open: dict[tuple[str, int], int] = {}
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        #: Statistics: lease renewals made, writes that failed.
        self.renewals = 0
        self.failures = 0

    def watching(self, game_id: str) -> set[int]:
        """The users with a stream on ``game_id`` open in this process."""
        return {uid for (gid, uid) in self._open if gid == game_id}

    async def opened(self, game_id: str, user_id: int) -> None:
        key = (game_id, int(user_id))
        self._open[key] = self._open.get(key, 0) + 1
        if self._open[key] == 1:
            await self._write(game_id, int(user_id), present=True)

    async def closed(self, game_id: str, user_id: int) -> None:
        key = (game_id, int(user_id))
        left = self._open.get(key, 0) - 1
        if left > 0:
            self._open[key] = left
            return
        if self._open.pop(key, None) is not None:
            await self._write(game_id, int(user_id), present=False)

    async def _write(self, game_id: str, user_id: int, *, present: bool) -> None:
        try:
            async with self._sessions() as s, s.begin():
                await s.execute(
                    delete(OpenPage).where(
                        OpenPage.game_id == game_id,
                        OpenPage.user_id == user_id,
                        OpenPage.holder == self.holder,
                    )
                )
                if present:
                    s.add(
                        OpenPage(
                            game_id=game_id,
                            user_id=user_id,
                            holder=self.holder,
                            expires_at=utcnow() + timedelta(seconds=self.lease),
                        )
                    )
        except Exception as exc:  # the database is away: the chat stays as it was
            self.failures += 1
            log.warning("open page of %s not stored: %s", game_id, exc)

    async def renew(self) -> None:
        """Push this process's leases forward (and drop rows whose lease ran out long
        ago: a dead process's)."""
        now = utcnow()
        async with self._sessions() as s, s.begin():
            if self._open:
                await s.execute(
                    update(OpenPage)
                    .where(OpenPage.holder == self.holder)
                    .values(expires_at=now + timedelta(seconds=self.lease))
                )
            await s.execute(
                delete(OpenPage).where(OpenPage.expires_at < now - timedelta(seconds=self.lease))
            )
        self.renewals += 1

    async def start(self) -> None:
        if self._task is None:
            self._stop.clear()
            self._task = asyncio.create_task(self._run(), name="open-pages")

    async def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.lease / 3)
            if self._stop.is_set():
                break
            try:
                await self.renew()
            except Exception as exc:
                self.failures += 1
                log.warning("open pages' leases not renewed: %s", exc)

    async def close(self) -> None:
        """Stop renewing and delete this process's rows (its streams are closed)."""
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            await task
        self._open.clear()
        try:
            async with self._sessions() as s, s.begin():
                await s.execute(delete(OpenPage).where(OpenPage.holder == self.holder))
        except Exception as exc:
            log.warning("open pages not removed (their leases will run out): %s", exc)


async def open_pages(s: AsyncSession, game_id: str, now: datetime | None = None) -> frozenset[int]:
    """The users who have ``game_id``'s page open in any process (a live lease), read
    in ``s``'s transaction (see :func:`page_leases`)."""
    return (await page_leases(s, game_id, now))[0]


async def page_leases(
    s: AsyncSession, game_id: str, now: datetime | None = None
) -> tuple[frozenset[int], frozenset[int]]:
    """Who has ``game_id``'s page open in any process (a live lease), and who had it
    open in a process that stopped renewing (a killed one: every row of theirs has
    run out, and is kept a lease longer, :meth:`OpenPages.renew`). One query on the
    table's key, made once per transaction and game (the views and the online fan-out
    of one move share it)."""
    sync = s.sync_session
    txn = sync.get_transaction()
    cache: dict[str, tuple[frozenset[int], frozenset[int]]] | None = None
    if now is None and txn is not None:
        mark = sync.info.get("open_pages")
        if mark is not None and mark[0] is txn:
            cache = mark[1]
        else:
            cache = {}
            sync.info["open_pages"] = (txn, cache)
        if game_id in cache:
            return cache[game_id]
    at = now or utcnow()
    with sync.no_autoflush:
        rows = (
            await s.execute(
                select(OpenPage.user_id, OpenPage.expires_at).where(OpenPage.game_id == game_id)
            )
        ).all()
    live = frozenset(int(u) for u, expires in rows if expires > at)
    leases = (live, frozenset(int(u) for u, _ in rows) - live)
    if cache is not None:
        cache[game_id] = leases
    return leases


async def forget_lapsed(s: AsyncSession, game_id: str, users: frozenset[int]) -> None:
    """Drop the run-out rows of ``users`` at ``game_id``, in ``s``'s transaction: their
    chat has been brought up to date, so the next move finds them neither open nor
    lapsed."""
    if not users:
        return
    await s.execute(
        delete(OpenPage).where(
            OpenPage.game_id == game_id,
            OpenPage.user_id.in_(sorted(users)),
            OpenPage.expires_at <= utcnow(),
        )
    )
    mark = s.sync_session.info.get("open_pages")
    if mark is not None:
        mark[1].pop(game_id, None)


def parse_notice(payload: str) -> tuple[str, int] | None:
    """``"G:M"`` as (game id, move); None if malformed."""
    game_id, sep, move = payload.rpartition(":")
    if not sep or not game_id or not move.isascii() or not move.isdigit() or len(move) > 9:
        return None
    return game_id, int(move)


#: Reads the current move of some games on the listening connection: (conn, ids) ->
#: {id: move}. The default reads the ``games`` table.
CatchUp = Callable[[Any, list[str]], Awaitable[dict[str, int]]]


async def read_moves(conn: Any, game_ids: list[str]) -> dict[str, int]:
    rows = await conn.fetch("SELECT id, move FROM games WHERE id = ANY($1::text[])", game_ids)
    return {row["id"]: row["move"] for row in rows}


def asyncpg_dsn(url: str) -> str:
    """A SQLAlchemy ``postgresql+asyncpg://`` URL as asyncpg's DSN."""
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


class PgBus:
    """The live bus of one process among several on one PostgreSQL database.

    Moves reach it as notices on :data:`CHANNEL`, sent by :func:`notify` in the
    committing transaction of any process (this one too). ``publish`` announces to
    this process's listeners at once, without waiting for the notice to come back.
    :meth:`start` opens the LISTEN connection in a task of its own, which keeps it
    open: when it is lost (the server restarts, the network drops, or a ping every
    ``ping_interval`` seconds goes unanswered) the task opens a new one after a
    back-off, LISTENs, and then catches up (see the module's text).
    """

    def __init__(
        self,
        dsn: str,
        *,
        connect: Callable[[str], Awaitable[Any]] | None = None,
        catch_up: CatchUp = read_moves,
        ping_interval: float = 30.0,
        retry: tuple[float, float] = (0.5, 15.0),
        pause: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.dsn = asyncpg_dsn(dsn)
        self.local = LocalBus()
        self._connect = connect
        self._catch_up = catch_up
        self.ping_interval = ping_interval
        self.retry = retry
        #: Waits between attempts to connect (``asyncio.sleep``; tests hold it).
        self._pause = pause
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._changed = asyncio.Condition()
        self._conn: Any = None
        #: Statistics: LISTEN connections opened, lost, and notices received.
        self.connections = 0
        self.losses = 0
        self.received = 0

    # -- the LiveBus interface

    def publish(self, game_id: str, move: int) -> None:
        self.local.publish(game_id, move)

    def subscribe(self, game_id: str) -> Subscription:
        return self.local.subscribe(game_id)

    def listeners(self, game_id: str | None = None) -> int:
        return self.local.listeners(game_id)

    @property
    def published(self) -> int:
        return self.local.published

    # -- life cycle

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def server_pid(self) -> int | None:
        """The listening connection's backend pid (for tests and diagnostics)."""
        return self._conn.get_server_pid() if self._conn is not None else None

    async def start(self) -> None:
        """Start listening; returns once the first LISTEN is in place (or has failed
        once, in which case the task goes on trying)."""
        if self._task is None:
            self._stop.clear()
            self._task = asyncio.create_task(self._run(), name="live-bus")
            await self.wait_for(lambda: self.connections > 0 or self.losses > 0)

    async def close(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            await task

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds, checked each time the connection opens
        or is lost, and each time a notice comes."""
        async with self._changed:
            await self._changed.wait_for(predicate)

    async def _progress(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def _on_notice(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        self.received += 1
        notice = parse_notice(payload)
        if notice is None:
            log.warning("malformed live notice %r", payload[:64])
        else:
            self.local.publish(*notice)
        asyncio.get_running_loop().create_task(self._progress())

    async def _open(self) -> Any:
        if self._connect is not None:
            return await self._connect(self.dsn)
        import asyncpg

        return await asyncpg.connect(self.dsn, timeout=10)

    async def _run(self) -> None:
        delay = self.retry[0]
        while not self._stop.is_set():
            conn = None
            lost = asyncio.Event()
            try:
                conn = await self._open()
                conn.add_termination_listener(lambda _c, gone=lost: gone.set())
                await conn.add_listener(CHANNEL, self._on_notice)
                # After LISTEN: anything committed later comes as a notice, anything
                # before is in the rows.
                games = list(self.local._subs)
                if games:
                    for game_id, move in (await self._catch_up(conn, games)).items():
                        self.local.publish(game_id, move)
                self._conn = conn
                self.connections += 1
                delay = self.retry[0]
                await self._progress()
                await self._watch(conn, lost)
            except Exception as exc:
                if not self._stop.is_set():
                    log.warning("live bus connection failed: %s", exc)
            finally:
                if not self._stop.is_set():
                    self.losses += 1
                self._conn = None
                if conn is not None:
                    await _close_quietly(conn)
                await self._progress()
            if self._stop.is_set():
                break
            await self._wait(delay * (0.5 + random.random()))
            delay = min(delay * 2, self.retry[1])

    async def _watch(self, conn: Any, lost: asyncio.Event) -> None:
        """Return when the connection is lost or the bus closes."""
        stop = asyncio.ensure_future(self._stop.wait())
        gone = asyncio.ensure_future(lost.wait())
        try:
            while True:
                done, _ = await asyncio.wait(
                    {stop, gone}, timeout=self.ping_interval, return_when=asyncio.FIRST_COMPLETED
                )
                if done:
                    return
                await asyncio.wait_for(conn.fetchval("SELECT 1"), self.ping_interval)
        finally:
            stop.cancel()
            gone.cancel()

    async def _wait(self, delay: float) -> None:
        if self._pause is not None:
            waiter = asyncio.ensure_future(self._pause(delay))
            stop = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait({waiter, stop}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            stop.cancel()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), delay)


async def _close_quietly(conn: Any) -> None:
    try:
        if not conn.is_closed():
            await asyncio.wait_for(conn.close(), 5)
    except Exception:  # a broken connection
        conn.terminate()
