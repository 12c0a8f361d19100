"""Forum topics and a group's move to a supergroup, in the database."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.chatmove import move_chat
from telegram_bot.platform.storage.models import Chat, OutboxMessage

Sessions = async_sessionmaker[AsyncSession]
OLD, NEW = -4242, -1004242
ALICE, BOB = 11, 12


def seat(uid: int, name: str) -> dict:
    return {"user_id": uid, "name": name, "bot": None, "away": False}


async def test_one_active_game_per_topic(sessions: Sessions) -> None:
    async with sessions.begin() as s:
        await repo.get_or_create_chat(s, NEW, "supergroup", "Forum")
        general = await repo.create_game(s, NEW, ALICE)
        one = await repo.create_game(s, NEW, ALICE, thread_id=7)
        two = await repo.create_game(s, NEW, BOB, thread_id=9)
    async with sessions() as s:
        assert (await repo.get_active_game(s, NEW)).id == general.id  # type: ignore[union-attr]
        assert (await repo.get_active_game(s, NEW, 7)).id == one.id  # type: ignore[union-attr]
        assert (await repo.get_active_game(s, NEW, 9)).id == two.id  # type: ignore[union-attr]
        with pytest.raises(repo.ActiveGameExistsError) as info:
            await repo.create_game(s, NEW, BOB, thread_id=7)
        assert info.value.game_id == one.id
        await s.rollback()


async def test_moving_a_group_to_its_supergroup(sessions: Sessions) -> None:
    async with sessions.begin() as s:
        await repo.get_or_create_chat(s, OLD, "group", "Club", language="en")
        await repo.update_chat_settings(s, OLD, {"target": 3})
        done = await repo.create_game(s, OLD, ALICE, [seat(ALICE, "Alice")], status="finished")
        await repo.record_match_result(
            s,
            chat_id=OLD,
            game_id=done.id,
            variant="4",
            target=3,
            scores=[3, 1],
            winner_side=0,
            hands_played=4,
            players=[{"user_id": ALICE, "name": "Alice", "side": 0, "bot": None}],
        )
        running = await repo.create_game(s, OLD, ALICE, [seat(ALICE, "Alice")])
        await repo.bind_slot(s, repo.table_slot(running.id), 55)
        rows = [
            {"chat_id": OLD, "op": "send", "text": "hand won"},
            {"chat_id": OLD, "op": "edit", "slot": repo.table_slot(running.id), "text": "t"},
            {"chat_id": OLD, "op": "edit", "message_id": 54, "text": "old question"},
            {"chat_id": ALICE, "op": "send", "text": "private"},
        ]
        await s.execute(insert(OutboxMessage), rows)
    async with sessions.begin() as s:
        moved = await move_chat(s, OLD, NEW, title="Club")
    assert moved == [running.id]
    async with sessions() as s:
        assert await repo.get_chat(s, OLD) is None
        chat = await repo.get_chat(s, NEW)
        assert chat is not None and chat.language == "en" and chat.settings == {"target": 3}
        game = await repo.get_active_game(s, NEW)
        assert game is not None and game.id == running.id and game.table_message_id is None
        assert [m.game_id for m in await repo.recent_matches(s, NEW)] == [done.id]
        tally = await repo.get_tally(s, NEW, ALICE)
        assert tally is not None and tally.matches_won == 1 and tally.points == 3
        left = (await s.execute(select(OutboxMessage.chat_id, OutboxMessage.text))).all()
        # The edit naming message 54 of the old group is gone; the others moved.
        assert sorted(left, key=str) == sorted(
            [(NEW, "hand won"), (NEW, "t"), (ALICE, "private")], key=str
        )
    # Again (the second service message, a ChatMigrated): only late rows move.
    async with sessions.begin() as s:
        await s.execute(insert(OutboxMessage), [{"chat_id": OLD, "op": "send", "text": "late"}])
    async with sessions.begin() as s:
        assert await move_chat(s, OLD, NEW) is None
    async with sessions() as s:
        assert (
            await s.scalar(select(OutboxMessage.chat_id).where(OutboxMessage.text == "late"))
        ) == NEW
        assert await s.get(Chat, OLD) is None
