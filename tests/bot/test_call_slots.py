"""A group edit waiting for its group's budget holds none of the outbox's call slots,
so a private hand edit goes out meanwhile (the open-loop benchmark's finding: with six
busy groups every slot was held by a group edit waiting its turn)."""

from __future__ import annotations

import asyncio

from telegram_bot.platform.outbox.calls import Calls
from telegram_bot.platform.outbox.rows import _Row
from telegram_bot.platform.ratelimit import PacingRateLimiter

GROUP, PERSON = -1001, 42


class _Bot:
    """What the outbox calls: ``_post`` through the rate limiter, as ExtBot does."""

    def __init__(self, rate_limiter: PacingRateLimiter) -> None:
        self.rate_limiter = rate_limiter
        self.sent: list[int] = []
        self.in_limiter: list[int] = []

    async def _post(self, method: str, data: dict) -> dict:
        self.in_limiter.append(data["chat_id"])
        return await self.rate_limiter.process_request(
            self._http, (method, data), {}, method, data, None
        )

    async def _http(self, method: str, data: dict) -> dict:
        self.sent.append(data["chat_id"])
        return {"message_id": len(self.sent)}


def _row(chat_id: int) -> _Row:
    return _Row(1, chat_id, "send", text="text")


async def test_a_private_edit_is_not_kept_waiting_by_a_group_that_waits_for_its_budget():
    # One group message an hour, one call slot: the second group message waits in the
    # limiter for an hour; the private one must not wait behind it.
    limiter = PacingRateLimiter(
        overall_max_rate=1000, overall_time_period=1, group_max_rate=1, group_time_period=3600
    )
    await limiter.initialize()
    bot = _Bot(limiter)
    call = Calls(bot, at_once=1).call  # type: ignore[arg-type]
    await call("sendMessage", _row(GROUP), None)  # the group's one message
    waiting = asyncio.create_task(call("sendMessage", _row(GROUP), None))
    while bot.in_limiter.count(GROUP) < 2:  # the second group call is in the limiter
        await asyncio.sleep(0)
    for _ in range(10):  # and has had its chance to take the slot, if it would
        await asyncio.sleep(0)
    private = asyncio.create_task(call("sendMessage", _row(PERSON), None))
    # The timeout only ends a hang (the failure): the private call needs no time at all.
    done, _ = await asyncio.wait(
        {private, waiting}, timeout=60, return_when=asyncio.FIRST_COMPLETED
    )
    assert private in done, "the private edit waited behind a group's budget"
    assert bot.sent == [GROUP, PERSON]
    waiting.cancel()
    await limiter.shutdown()
