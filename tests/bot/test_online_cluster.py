"""Play with anyone across processes: 8 people press "4 players" at once while three
worker processes of :mod:`telegram_bot.runtime.cluster` (behind the webhook ingress,
on one PostgreSQL database) each run the matching loop. Exactly 2 tables are made,
nobody is seated twice, and nobody is left in the queue. (PostgreSQL only.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage.models import Game
from testkit.emulator import BotApiEmulator
from tests.clusterutil import running_cluster
from tests.dbutil import fresh_database_url

from .driver import buttons

WORKERS = 3
PEOPLE = 8


@pytest.mark.slow
async def test_eight_people_across_three_workers_make_exactly_two_tables(tmp_path: Path):
    async with fresh_database_url("postgresql", tmp_path) as db_url:  # skips without PG
        async with BotApiEmulator(bot_username="HokmOnlineBot", bot_name="Hokm") as emu:
            await _run(emu, db_url, tmp_path)


async def _run(emu: BotApiEmulator, db_url: str, log_dir: Path) -> None:
    env = {
        "HOKM_COMPUTER_DELAY": "0.2",
        "HOKM_ONLINE_INTERVAL": "0.05",  # every worker matches, often
        "HOKM_ONLINE_WAIT": "600",
    }
    async with running_cluster(emu, db_url, log_dir, WORKERS, env) as sessions:
        people = [emu.add_user(f"P{i}", language_code="en", started=True) for i in range(PEOPLE)]
        for p in people:
            await emu.send_message(p, p.private_chat_id, "/online")

        def asked(p) -> bool:
            return any(
                m.from_bot and any(b.get("callback_data") == "q:::4" for b in buttons(m))
                for m in emu.chat_log(p.private_chat_id)
            )

        await emu.wait_until(lambda: all(asked(p) for p in people), timeout=60)
        menus = [
            next(m for m in emu.chat_log(p.private_chat_id) if m.from_bot and buttons(m))
            for p in people
        ]
        handles = await asyncio.gather(
            *(
                emu.press(p, p.private_chat_id, m.message_id, "q:::4")
                for p, m in zip(people, menus, strict=True)
            )
        )
        for handle in handles:
            await handle.wait_answer(timeout=60)

        def seated_and_dealt(p) -> bool:
            """The person was told of their table, then got its table and hand messages."""
            mine = [m for m in emu.chat_log(p.private_chat_id) if m.from_bot]
            told = [i for i, m in enumerate(mine) if "A table is ready" in (m.text or "")]
            return len(told) == 1 and len(mine) - told[0] >= 3

        # The workers' loops seat them: wait for that progress (the emulator's bound
        # fails only a bot that stops making any).
        await emu.wait_until(lambda: all(seated_and_dealt(p) for p in people), timeout=120)
        async with sessions() as s:
            found = list((await s.scalars(select(Game).where(Game.chat_id < -(10**15)))).all())
        assert len(found) == 2, [g.seats for g in found]
        seated = [uid for g in found for uid in g.user_ids()]
        assert sorted(seated) == sorted(p.id for p in people)  # each once
        assert all(len(set(g.user_ids())) == 4 and g.settings["online"]["rated"] for g in found)
        async with sessions() as s:
            assert await store.waiting(s) == []

        # Each person's hand message is bound in their table's game. The binding is
        # written once the send returns, just after the emulator shows the message:
        # wait for that progress too.
        async def unbound() -> list[int]:
            async with sessions() as s:
                games = (await s.scalars(select(Game).where(Game.chat_id < -(10**15)))).all()
            return [
                uid
                for g in games
                for uid in g.user_ids()
                if str(uid) not in (g.private_messages or {})
            ]

        for _ in range(1200):  # a cap for a bot that stops making progress, not a deadline
            if not await unbound():
                break
            await asyncio.sleep(0.05)
        assert await unbound() == []
