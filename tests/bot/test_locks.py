"""KeyedLocks: one lock per key, forgotten when nobody holds or awaits it."""

from __future__ import annotations

import asyncio

import pytest

from telegram_bot.platform.locks import KeyedLocks


async def test_one_holder_per_key_and_nothing_kept_afterwards() -> None:
    locks = KeyedLocks()
    inside: list[str] = []
    order: list[str] = []

    async def work(key: str, name: str, gate: asyncio.Event) -> None:
        async with locks[key]:
            inside.append(key)
            assert inside.count(key) == 1, "two holders of one key"
            order.append(name)
            await gate.wait()
            inside.remove(key)

    gate = asyncio.Event()
    tasks = [asyncio.create_task(work(k, f"{k}{i}", gate)) for i in range(3) for k in "ab"]
    while len(order) < 2:  # one holder per key got in, the others wait
        await asyncio.sleep(0)
    assert sorted(order) == ["a0", "b0"] and len(locks) == 2
    assert locks.locked("a") and locks.locked("b")
    gate.set()
    await asyncio.gather(*tasks)
    assert len(order) == 6 and len(locks) == 0 and not locks.locked("a")


async def test_a_waiter_cancelled_leaves_nothing_behind() -> None:
    locks = KeyedLocks()
    release = asyncio.Event()

    async def hold() -> None:
        async with locks["g"]:
            await release.wait()

    holder = asyncio.create_task(hold())
    while not locks.locked("g"):
        await asyncio.sleep(0)

    async def wait_for_it() -> None:
        async with locks["g"]:
            pytest.fail("the cancelled waiter got the lock")

    waiter = asyncio.create_task(wait_for_it())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await holder
    assert len(locks) == 0
    async with locks["g"]:  # usable again
        assert len(locks) == 1
    assert len(locks) == 0
