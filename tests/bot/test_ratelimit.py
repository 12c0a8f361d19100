"""The flood limit shared by several workers (telegram_bot.ratelimit), on PostgreSQL.

Two engines stand for two worker processes. Every grant carries the database's time
of it; replaying the grants through an ideal token bucket on those times must never
overdraw it: the combined rate respects the limit whatever the machine's speed. (Two
limiters that do not share their buckets overdraw it, so the check can fail.)
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from telegram_bot.ratelimit import Bucket, SharedLimiter, SharedRateLimiter
from telegram_bot.storage.db import create_engine, migrate
from tests.dbutil import fresh_database_url

pytestmark = pytest.mark.asyncio

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
