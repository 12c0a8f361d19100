"""The outbox alone, against a stub Bot API that records every call: under many
concurrent transactions and a poll reading the table all the time, each message
goes out once, and the edits of a message in the order they were decided (a stale
edit carried out after a newer one showed people old hands under load)."""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage.db import create_engine, migrate, session_factory

CHATS = 6
#: Transactions per chat; each edits the chat's two messages and sometimes sends one.
ROUNDS = 40


class RecordingBot:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._ids = itertools.count(1000)
        self.rng = random.Random(7)

    async def _post(self, method: str, data: dict[str, Any]) -> Any:
        for _ in range(self.rng.randrange(3)):  # other chats' calls interleave
            await asyncio.sleep(0)
        self.calls.append((method, dict(data)))
        if method == "sendMessage":
            return {"message_id": next(self._ids)}
        return True


async def _decide(outbox: Outbox, chat: int, n: int, rng: random.Random) -> None:
    for _ in range(rng.randrange(3)):
        await asyncio.sleep(0)
    async with outbox.transaction() as s:
        for message_id in (1, 2):
            await outbox.edit(s, chat, f"{message_id}:{n}", message_id=message_id)
        if n % 5 == 0:
            await outbox.send(s, chat, f"news {n}")


async def test_each_message_once_and_edits_in_order_under_a_busy_poll(db_url):
    await migrate(db_url)
    engine = create_engine(db_url)
    try:
        bot = RecordingBot()
        outbox = Outbox(bot, session_factory(engine))  # type: ignore[arg-type]
        await outbox.start()
        # The poll reads the table as often as it can: rows carried out and not yet
        # deleted, or committed and not yet known, must not go out again from there.
        poll = asyncio.create_task(outbox.run_poll(interval=0))
        rng = random.Random(1)
        chats = [100 + c for c in range(CHATS)]
        try:
            for n in range(ROUNDS):
                # One transaction per chat at a time (as a game's lock does), chats at once.
                await asyncio.gather(*(_decide(outbox, chat, n, rng) for chat in chats))
            await outbox.idle()
        finally:
            poll.cancel()
            await asyncio.gather(poll, return_exceptions=True)
            await outbox.close()
        for chat in chats:
            sends = [d["text"] for m, d in bot.calls if m == "sendMessage" and d["chat_id"] == chat]
            assert sends == [f"news {n}" for n in range(0, ROUNDS, 5)], chat
            for message_id in (1, 2):
                shown = [
                    int(d["text"].split(":")[1])
                    for m, d in bot.calls
                    if m == "editMessageText"
                    and d["chat_id"] == chat
                    and d["message_id"] == message_id
                ]
                assert shown == sorted(set(shown)), (chat, message_id, shown)
                assert shown[-1] == ROUNDS - 1, (chat, message_id, shown)
    finally:
        await engine.dispose()
