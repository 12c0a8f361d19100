"""Telegram's flood limits shared by every worker of one bot: token buckets in PostgreSQL.

Telegram lets a bot post about 30 messages a second overall and 20 a minute in one
group. One process paces itself with python-telegram-bot's ``AIORateLimiter``; several
workers of one bot must share the budget, so here each budget is a row of
``rate_buckets`` and taking a token is one statement that refills the bot's bucket and
the group's by the time passed (on the database's clock), and takes one token from
both or from neither. The rows are locked in key order, so two callers never deadlock.

A token bucket of capacity ``C`` refilled at ``r`` a second grants at most ``C + r·W``
calls in any window of ``W`` seconds: :data:`OVERALL` (2, 20/s) never passes 22 in a
second, :data:`GROUP` (3, one per 4 s) never passes 18 in a minute. The rest of
Telegram's 30 and 20 is a margin for the time from a grant to the call's arrival, which
varies: calls granted over ``1 + J`` seconds that arrive within one second number at
most ``C + r·(1 + J)``, so up to ``J`` = 0.4 s of jitter keeps under 30 (and 8 s under
20 a minute in a group). A worker starved of CPU right after its grant would send its
granted calls late and together: a grant older than :data:`MAX_GRANT_AGE` when its call
is about to go is given up and a token taken again (at most :data:`STALE_RETRIES`
times). (With bursts of 10 and 4, 200 tables and a worker killed every 30 s drew 17
refusals in 10 minutes; with 5 and 3 and no check of a grant's age, 15.)

:class:`SharedRateLimiter` plugs this into python-telegram-bot (``rate_limiter=``), so
every message the worker posts or edits waits for its tokens: the outbox's, and a
handler's own replies. :class:`PacingRateLimiter` is python-telegram-bot's
``AIORateLimiter`` for one process, without its ERROR and traceback for every 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram.error import RetryAfter
from telegram.ext import AIORateLimiter, BaseRateLimiter

from telegram_bot.platform.callslots import CALL_SLOTS, in_slot
from telegram_bot.platform.storage.db import create_engine

__all__ = [
    "GROUP",
    "OVERALL",
    "Bucket",
    "Grant",
    "PacingRateLimiter",
    "SharedLimiter",
    "SharedRateLimiter",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Bucket:
    #: Tokens a full bucket holds (the burst).
    capacity: float
    #: Tokens added per second.
    rate: float

    def most_in(self, seconds: float) -> float:
        """The most calls granted in any window of ``seconds``."""
        return self.capacity + self.rate * seconds


OVERALL = Bucket(capacity=2, rate=20)
GROUP = Bucket(capacity=3, rate=0.25)

#: Seconds from asking for a token to the call's going out, past which the grant is
#: given up (the worker was starved meanwhile; the call would arrive out of its turn).
MAX_GRANT_AGE = 0.5
#: Grants given up in a row, at most; then the call goes with the last one.
STALE_RETRIES = 3

#: Methods that put a message on screen: the ones Telegram's flood limits count.
COUNTED = frozenset(
    m.lower()
    for m in (
        "sendMessage",
        "editMessageText",
        "editMessageReplyMarkup",
        "editMessageCaption",
        "editMessageMedia",
        "sendPhoto",
        "sendDocument",
        "sendSticker",
        "sendAnimation",
        "sendAudio",
        "sendVideo",
        "sendVoice",
        "sendPoll",
        "sendDice",
        "copyMessage",
        "forwardMessage",
    )
)

# Refill each bucket named in ``w`` (locked in key order), then take a token from all
# of them if every one has one. The time is read once per row, after its lock is held
# (and never before the row's own time), so no stretch of time refills twice.
_TAKE = """
WITH w(key, capacity, rate) AS (SELECT * FROM unnest(
        CAST(:keys AS text[]), CAST(:capacities AS float8[]), CAST(:rates AS float8[]))),
cur AS (
    SELECT b.key, b.tokens, b.updated_at, w.capacity, w.rate,
           GREATEST(clock_timestamp(), b.updated_at) AS at
    FROM rate_buckets b JOIN w ON w.key = b.key
    ORDER BY b.key
    FOR UPDATE OF b
),
refilled AS (
    SELECT key, rate, at,
           LEAST(capacity, tokens + rate * EXTRACT(EPOCH FROM at - updated_at)) AS tokens
    FROM cur
),
verdict AS (SELECT bool_and(tokens >= 1) AS ok FROM refilled)
UPDATE rate_buckets b
SET tokens = r.tokens - CASE WHEN verdict.ok THEN 1 ELSE 0 END, updated_at = r.at
FROM refilled r, verdict
WHERE b.key = r.key
RETURNING b.key, verdict.ok, r.tokens, r.rate, r.at
"""

_CREATE = """
INSERT INTO rate_buckets (key, tokens, updated_at)
SELECT key, capacity, clock_timestamp()
FROM unnest(CAST(:keys AS text[]), CAST(:capacities AS float8[])) AS w(key, capacity)
ON CONFLICT (key) DO NOTHING
"""

#: Buckets not used for this long are full again: their rows can go.
_PRUNE = "DELETE FROM rate_buckets WHERE updated_at < clock_timestamp() - interval '1 hour'"


@dataclass(frozen=True)
class Grant:
    """The answer to one try: granted or not, and if not, how long to wait."""

    granted: bool
    #: Seconds until the bucket that lacked a token has one (0 when granted).
    wait: float
    #: The lacking bucket was the group's (so other chats need not wait).
    group_short: bool
    #: The database's time of the decision, per bucket key.
    at: dict[str, datetime]
    #: This process's monotonic time when the deciding statement was sent (the
    #: decision came after it).
    asked: float = 0.0


class _Turn:
    """One asker of the database's buckets at a time in this process, the outbox's calls
    after everyone else's: a handler's own reply (a person waiting for it, one of the
    worker's few update slots held meanwhile) does not queue behind a burst of the
    outbox's messages. (200 people sending /online to 3 workers within 10 s, limiter
    on: their presses were answered 13.5 s after at the median while the replies
    queued behind the outbox; ``python -m benchmarks.online --mode cluster --limiter``.)"""

    def __init__(self) -> None:
        self._held = False
        self._first: deque[asyncio.Future[None]] = deque()
        self._rest: deque[asyncio.Future[None]] = deque()

    @contextlib.asynccontextmanager
    async def __call__(self, first: bool) -> AsyncIterator[None]:
        if self._held:
            queue = self._first if first else self._rest
            fut = asyncio.get_running_loop().create_future()
            queue.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._pass_on()  # handed the turn, then cancelled: the next one's
                else:
                    with contextlib.suppress(ValueError):
                        queue.remove(fut)
                raise
        self._held = True
        try:
            yield
        finally:
            self._pass_on()

    def _pass_on(self) -> None:
        for queue in (self._first, self._rest):
            while queue:
                fut = queue.popleft()
                if not fut.done():
                    fut.set_result(None)  # still held: handed over
                    return
        self._held = False


class SharedLimiter:
    """Token buckets of one bot (``bot_key``) in PostgreSQL, shared by its processes."""

    def __init__(
        self,
        engine: AsyncEngine,
        bot_key: str,
        *,
        overall: Bucket = OVERALL,
        group: Bucket = GROUP,
    ) -> None:
        self.engine = engine
        self.bot_key = bot_key
        self.overall = overall
        self.group = group
        # One waiter per process asks the database for the bot's bucket at a time (the
        # others queue here, the outbox's last); a group's empty bucket is waited for
        # outside it.
        self._turn = _Turn()
        #: Grants given up for their age (see :meth:`take_fresh`).
        self.stale = 0

    def keys(self, chat_id: int | str | None) -> list[tuple[str, Bucket]]:
        """The buckets a call about ``chat_id`` takes from: (key, bucket)."""
        keys = [(f"bot:{self.bot_key}", self.overall)]
        # Negative ids are groups (and channels); "@name" only names a channel.
        if isinstance(chat_id, str) or (chat_id is not None and chat_id < 0):
            keys.append((f"group:{self.bot_key}:{chat_id}", self.group))
        return keys

    async def try_take(self, chat_id: int | str | None) -> Grant:
        """One statement: a token from the bot's bucket and the group's, or none."""
        keys = self.keys(chat_id)
        params = {
            "keys": [k for k, _ in keys],
            "capacities": [b.capacity for _, b in keys],
            "rates": [b.rate for _, b in keys],
        }
        async with self.engine.begin() as conn:
            asked = asyncio.get_running_loop().time()
            rows = (await conn.execute(text(_TAKE), params)).all()
            if len(rows) < len(keys):  # a bucket never used (or pruned): a full one
                await conn.execute(text(_CREATE), params)
                rows = []
        if not rows:
            return await self.try_take(chat_id)
        at = {r.key: r.at for r in rows}
        if rows[0].ok:
            return Grant(True, 0.0, False, at, asked)
        short = [r for r in rows if r.tokens < 1]
        lacking = max(short, key=lambda r: (1 - r.tokens) / r.rate)
        wait = (1 - lacking.tokens) / lacking.rate
        return Grant(False, wait, lacking.key.startswith("group:"), at, asked)

    async def take(self, chat_id: int | str | None) -> Grant:
        """Wait until a call about ``chat_id`` may go."""
        # Not the outbox's (platform.callslots): a handler's reply, first.
        first = CALL_SLOTS.get() is None
        while True:
            async with self._turn(first):
                grant = await self.try_take(chat_id)
                if grant.granted:
                    return grant
                if not grant.group_short:
                    # The bot's bucket is empty for every chat: wait holding the turn.
                    await asyncio.sleep(grant.wait)
                    continue
            await asyncio.sleep(grant.wait)

    async def take_fresh(self, chat_id: int | str | None) -> Grant:
        """:meth:`take`, and again while the grant is older than :data:`MAX_GRANT_AGE`
        by the time the caller runs (at most :data:`STALE_RETRIES` times)."""
        loop = asyncio.get_running_loop()
        for _ in range(STALE_RETRIES):
            grant = await self.take(chat_id)
            age = loop.time() - grant.asked
            if age <= MAX_GRANT_AGE:
                return grant
            self.stale += 1
            log.info("a grant for chat %s was %.2f s old: taking another", chat_id, age)
        return await self.take(chat_id)

    async def prune(self) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(text(_PRUNE))


class SharedRateLimiter(BaseRateLimiter[None]):
    """python-telegram-bot's rate limiter for a worker of several: the calls that post
    or edit a message take tokens from the buckets in PostgreSQL first. A 429 that still
    comes back goes to the caller (the outbox reschedules the message)."""

    #: Takes the outbox's call slot only once a call is let through (platform.callslots).
    takes_call_slots = True

    def __init__(
        self,
        database_url: str,
        token: str,
        *,
        overall: Bucket = OVERALL,
        group: Bucket = GROUP,
    ) -> None:
        self.database_url = database_url
        # The bot's id (the token's public part): bots sharing a database keep apart.
        self.bot_key = token.split(":", 1)[0]
        self.overall, self.group = overall, group
        self.limiter: SharedLimiter | None = None

    async def initialize(self) -> None:
        # Its own small pool: callers may hold the outbox's connections while they wait.
        # None closed after a burst (see create_engine: connections opened and closed
        # again and again fragment the heap).
        engine = create_engine(self.database_url, pool_size=4, max_overflow=0)
        self.limiter = SharedLimiter(engine, self.bot_key, overall=self.overall, group=self.group)
        try:
            await self.limiter.prune()
        except Exception:  # never keep a worker from starting over housekeeping
            log.warning("could not prune the rate buckets", exc_info=True)

    async def shutdown(self) -> None:
        if self.limiter is not None:
            await self.limiter.engine.dispose()
            self.limiter = None

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> Any:
        if self.limiter is not None and endpoint.lower() in COUNTED:
            chat_id = data.get("chat_id")
            try:
                chat = int(chat_id) if chat_id is not None else None
            except (TypeError, ValueError):  # "@channel"
                chat = str(chat_id)
            # Nothing slow between a fresh grant and the call's start: a grant the
            # worker was too starved to use at once is given up, not sent late. (The
            # outbox's call slot taken after it is held only by calls in flight.)
            await self.limiter.take_fresh(chat)
        return await in_slot(callback, *args, **kwargs)


class _Refused(Exception):
    """A 429 carried past ``AIORateLimiter``, which would log it with a traceback."""

    def __init__(self, error: RetryAfter) -> None:
        super().__init__(str(error))
        self.error = error


class PacingRateLimiter(AIORateLimiter):
    """python-telegram-bot's ``AIORateLimiter`` (leaky buckets in this process) that
    never retries: a 429 goes straight to the caller (the outbox reschedules the
    message; a handler's reply is dropped), logged here as one INFO line.

    ``AIORateLimiter`` with ``max_retries=0`` logs every 429 as an ERROR with a
    traceback ("Rate limit hit after maximum of 0 retries"): a flood limit is Telegram
    working as documented, not a failure of the bot.
    """

    #: Takes the outbox's call slot only once a call is let through (platform.callslots).
    takes_call_slots = True

    def __init__(self, **limits: Any) -> None:
        limits["max_retries"] = 0
        super().__init__(**limits)
        # Each group's grants of the last minute (Telegram's window), and whether
        # they alone decide (see stop_pacing).
        self._grants: OrderedDict[str | int, deque[float]] = OrderedDict()
        self._window_calls = (
            int(limits.get("group_max_rate", 20))
            + int(
                60 / float(limits.get("group_time_period", 60)) * limits.get("group_max_rate", 20)
            )
            - 1
        )
        self._paced = True

    def stop_pacing(self) -> None:
        """A graceful stop: the groups' buckets pace calls well below Telegram's limit
        (one call each 4 s once a burst is spent), so the last messages of a match
        (table, hand result, "match over") could wait past the stop's grace. From now
        on a group's calls wait only when the last minute already holds one call fewer
        than the buckets ever allow in a minute (18 of 19): the same bound, without the
        pacing. (The next process's buckets start full anyway.)"""
        self._paced = False

    def _get_group_limiter(self, group_id: str | int | bool) -> Any:
        paced = super()._get_group_limiter(group_id)
        return _GroupWindow(self, group_id, paced)

    async def _window_wait(self, group_id: str | int | bool) -> None:
        loop = asyncio.get_running_loop()
        grants = self._grants.get(group_id)
        while grants is not None and len(grants) >= self._window_calls:
            wait = grants[0] + 60.0 - loop.time()
            if wait <= 0:
                grants.popleft()
                continue
            await asyncio.sleep(wait)

    def _granted(self, group_id: str | int | bool) -> None:
        now = asyncio.get_running_loop().time()
        grants = self._grants.get(group_id)
        if grants is None:
            grants = self._grants[group_id] = deque()
        self._grants.move_to_end(group_id)
        grants.append(now)
        while grants and grants[0] < now - 60.0:
            grants.popleft()
        while len(self._grants) > 1024:
            self._grants.popitem(last=False)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        async def once(*a: Any, **kw: Any) -> Any:
            try:
                return await in_slot(callback, *a, **kw)
            except RetryAfter as exc:
                raise _Refused(exc) from None

        try:
            return await super().process_request(
                once, args, kwargs, endpoint, data, rate_limit_args
            )
        except _Refused as refused:
            log.info(
                "%s to chat %s: flood limit (429): %s",
                endpoint,
                data.get("chat_id"),
                refused.error,
            )
            raise refused.error from None


class _GroupWindow:
    """A group's limiter for :class:`PacingRateLimiter`: its leaky bucket while it
    paces, the window of its last minute's grants once it stops pacing."""

    def __init__(self, owner: PacingRateLimiter, group_id: Any, paced: Any) -> None:
        self._owner, self._group, self._paced = owner, group_id, paced

    async def __aenter__(self) -> None:
        if self._owner._paced:
            await self._paced.__aenter__()
        else:
            await self._owner._window_wait(self._group)
        self._owner._granted(self._group)

    async def __aexit__(self, *exc: Any) -> None:
        return None
