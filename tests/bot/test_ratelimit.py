"""The flood limit shared by several workers (telegram_bot.platform.ratelimit), on PostgreSQL.

Two engines stand for two worker processes. Every grant carries the database's time
of it; replaying the grants through an ideal token bucket on those times must never
overdraw it: the combined rate respects the limit whatever the machine's speed. (Two
limiters that do not share their buckets overdraw it, so the check can fail.)
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from telegram_bot.platform.ratelimit import (
    MAX_GRANT_AGE,
    Bucket,
    SharedLimiter,
    SharedRateLimiter,
    _Turn,
)
from telegram_bot.platform.storage.db import create_engine, migrate
from tests.dbutil import fresh_database_url

OVERALL = Bucket(capacity=5, rate=40)
GROUP = Bucket(capacity=2, rate=8)
GROUP_CHAT = -100123


def overdraw(times: list[datetime], bucket: Bucket) -> float:
    """The most an ideal bucket, full at the start, would be overdrawn by these grants
    (0 if it never is)."""
    tokens, last, worst = bucket.capacity, None, 0.0
    for t in sorted(times):
        if last is not None:
            tokens = min(bucket.capacity, tokens + bucket.rate * (t - last).total_seconds())
        tokens -= 1
        last = t
        worst = max(worst, -tokens)
    return worst


async def _hammer(limiters: list[SharedLimiter], grants: int) -> dict[str, list[datetime]]:
    """Tasks on every limiter take tokens, for a group and for private chats, until
    ``grants`` were given; the database times of the grants, per bucket key."""
    times: dict[str, list[datetime]] = {}
    given = 0

    async def worker(limiter: SharedLimiter, chat: int) -> None:
        nonlocal given
        while given < grants:
            grant = await limiter.take(chat)
            given += 1
            for key, at in grant.at.items():
                times.setdefault(key, []).append(at)

    await asyncio.gather(
        *(
            worker(limiter, GROUP_CHAT if i % 2 else 1000 + i)
            for limiter in limiters
            for i in range(6)
        )
    )
    return times


async def test_two_engines_share_one_budget(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        engines = [create_engine(url) for _ in range(2)]
        try:
            shared = [SharedLimiter(e, "42", overall=OVERALL, group=GROUP) for e in engines]
            times = await _hammer(shared, grants=120)
            bot_key, _ = shared[0].keys(None)[0]
            group_key, _ = shared[0].keys(GROUP_CHAT)[1]
            # Both buckets were contended (far more grants than a full bucket holds) ...
            assert len(times[bot_key]) >= 120 and len(times[group_key]) > 4 * GROUP.capacity
            # ... and neither was ever overdrawn (float noise aside).
            assert overdraw(times[bot_key], OVERALL) < 1e-6
            assert overdraw(times[group_key], GROUP) < 1e-6

            # Per-process buckets (different keys) let both engines spend the budget.
            apart = [
                SharedLimiter(e, f"apart{i}", overall=OVERALL, group=GROUP)
                for i, e in enumerate(engines)
            ]
            times = await _hammer(apart, grants=120)
            combined = [t for key, ts in times.items() if key.startswith("bot:") for t in ts]
            assert overdraw(combined, OVERALL) >= 1
        finally:
            for e in engines:
                await e.dispose()


async def test_the_bot_paces_only_messages_and_groups_by_chat(tmp_path):
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        limiter = SharedRateLimiter(url, "42:SECRET", overall=OVERALL, group=GROUP)
        await limiter.initialize()
        taken: list[int | str | None] = []
        try:
            assert limiter.limiter is not None
            real = limiter.limiter.take

            async def spy(chat):
                taken.append(chat)
                return await real(chat)

            limiter.limiter.take = spy  # type: ignore[method-assign]

            async def call(**kw):
                return kw

            for endpoint, data in [
                ("sendMessage", {"chat_id": GROUP_CHAT}),
                ("editMessageText", {"chat_id": "7"}),
                ("answerCallbackQuery", {"callback_query_id": "1"}),
                ("getChatMember", {"chat_id": GROUP_CHAT}),
                ("sendMessage", {"chat_id": "@channel"}),
            ]:
                out = await limiter.process_request(call, (), {"x": 1}, endpoint, data, None)
                assert out == {"x": 1}
            assert taken == [GROUP_CHAT, 7, "@channel"]
            keys = [k for k, _ in limiter.limiter.keys("@channel")]
            assert keys == ["bot:42", "group:42:@channel"]
        finally:
            await limiter.shutdown()


def _busiest(times: list[float], window: float = 1.0) -> int:
    """The most of ``times`` within any ``window`` seconds."""
    times, most, first = sorted(times), 0, 0
    for last, t in enumerate(times):
        while times[first] <= t - window:
            first += 1
        most = max(most, last - first + 1)
    return most


async def _starved_calls(limiter: SharedRateLimiter, calls: int, check_age: bool) -> list[float]:
    """``calls`` messages sent through the limiter by 64 tasks; for one second in the
    middle, the worker is starved right after each grant: its granted calls all go out
    when the second ends. When each call went out (this loop's clock). Without
    ``check_age``, every grant is used however old."""
    loop = asyncio.get_running_loop()
    assert limiter.limiter is not None
    real = limiter.limiter.take
    sent: list[float] = []
    start = loop.time()
    starved_from, starved_to = start + 1.5, start + 2.5

    async def take(chat):
        grant = await real(chat)
        if starved_from <= loop.time() < starved_to:
            await asyncio.sleep(starved_to - loop.time())
        return grant

    limiter.limiter.take = take  # type: ignore[method-assign]
    if not check_age:
        limiter.limiter.take_fresh = take  # type: ignore[method-assign]

    async def call() -> None:
        sent.append(loop.time())

    async def task(i: int) -> None:
        while len(sent) < calls:
            await limiter.process_request(call, (), {}, "sendMessage", {"chat_id": 7 + i}, None)

    await asyncio.gather(*(task(i) for i in range(64)))
    return sent


@pytest.mark.slow
async def test_a_grant_the_worker_was_too_starved_to_use_is_taken_again(tmp_path):
    """A worker starved between its grants and its calls would send them together (a
    burst the buckets never granted); grants older than MAX_GRANT_AGE are given up."""
    overall = Bucket(capacity=2, rate=40)
    # What the buckets allow, with a call going out at most MAX_GRANT_AGE after its
    # grant: every call in a second was granted within 1 + MAX_GRANT_AGE seconds.
    bound = overall.most_in(1 + MAX_GRANT_AGE)
    async with fresh_database_url("postgresql", tmp_path) as url:  # skips without PG
        await migrate(url)
        # Without the check (the control: the test can fail), the starved second's
        # calls come as a burst; a machine busy enough may spread the starved calls
        # itself, so the control gets three tries to show it.
        for check_age, tries in ((True, 1), (False, 3)):
            bursts = []
            for attempt in range(tries):
                limiter = SharedRateLimiter(
                    url, f"{int(check_age)}:{attempt}:X", overall=overall, group=GROUP
                )
                await limiter.initialize()
                try:
                    assert limiter.limiter is not None
                    sent = await _starved_calls(limiter, 200, check_age)
                    busiest = _busiest(sent)
                    if check_age:
                        assert limiter.limiter.stale > 0
                        assert busiest <= bound, (busiest, bound)
                    bursts.append(busiest)
                finally:
                    await limiter.shutdown()
                if not check_age and busiest > bound:
                    break
            if not check_age:
                assert max(bursts) > bound, (bursts, bound)


async def test_a_handlers_reply_asks_before_the_outboxs_queued_calls() -> None:
    """The turn to ask the buckets: callers that are not the outbox (a handler's own
    reply, with a person waiting) go before the outbox's calls queued earlier, each
    kind in its order; a waiter cancelled before or after its turn came never keeps
    the others waiting."""
    turn = _Turn()
    order: list[str] = []
    gate = asyncio.Event()

    async def ask(name: str, first: bool) -> None:
        async with turn(first):
            order.append(name)
            if name == "holder":
                await gate.wait()

    holder = asyncio.create_task(ask("holder", False))
    await asyncio.sleep(0)
    tasks = [asyncio.create_task(ask(f"outbox{i}", False)) for i in range(3)]
    await asyncio.sleep(0)
    gone = asyncio.create_task(ask("cancelled", True))
    tasks += [asyncio.create_task(ask(f"reply{i}", True)) for i in range(2)]
    await asyncio.sleep(0)
    gone.cancel()
    gate.set()
    await asyncio.gather(holder, *tasks)
    assert order == ["holder", "reply0", "reply1", "outbox0", "outbox1", "outbox2"]

    # Handed the turn, then cancelled before running: the next waiter still gets it.
    gate.clear()
    order.clear()
    holder = asyncio.create_task(ask("holder", False))
    await asyncio.sleep(0)
    handed = asyncio.create_task(ask("handed", True))
    after = asyncio.create_task(ask("after", False))
    await asyncio.sleep(0)
    gate.set()
    await asyncio.sleep(0)  # the holder leaves and hands the turn to "handed"
    handed.cancel()
    async with asyncio.timeout(30):  # a cap on a hang (a turn never passed on)
        await asyncio.gather(holder, after, return_exceptions=True)
        assert handed.cancelled() and order == ["holder", "after"]
        async with turn(False):  # and free again
            pass
