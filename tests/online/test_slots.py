"""Each person's copy of an online table (slot ``t:<game>:<user>``) is named in the
database, beside the hands and apart from them, so that every worker edits it (a
worker that had not sent it knew no message to edit, and the copy froze)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import repo
from telegram_bot.service.online_seats import ONLINE_CHAT_BASE, online_slot


async def test_a_persons_table_copy_is_stored_apart_from_the_hands(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chat = ONLINE_CHAT_BASE - 7
    async with sessions.begin() as s:
        await repo.get_or_create_chat(s, chat, "online")
        game = await repo.create_game(s, chat, 1)
    async with sessions.begin() as s:
        await repo.bind_slot(s, repo.hand_slot(game.id, 1), 11)
        await repo.bind_slot(s, online_slot(game.id, 1), 12)
        await repo.bind_slot(s, online_slot(game.id, 2), 22)
        await repo.bind_slot(s, repo.table_slot(game.id), 5)
    async with sessions() as s:
        assert await repo.slot_message_id(s, repo.hand_slot(game.id, 1)) == 11
        assert await repo.slot_message_id(s, online_slot(game.id, 1)) == 12
        assert await repo.slot_message_id(s, online_slot(game.id, 2)) == 22
        assert await repo.slot_message_id(s, repo.hand_slot(game.id, 2)) is None
        assert await repo.slot_message_ids(s, [game.id]) == {
            repo.table_slot(game.id): 5,
            repo.hand_slot(game.id, 1): 11,
            online_slot(game.id, 1): 12,
            online_slot(game.id, 2): 22,
        }
    assert repo.slot_game_id(online_slot(game.id, 2)) == game.id
    async with sessions.begin() as s:
        await repo.bind_slot(s, online_slot(game.id, 1), None)
    async with sessions() as s:
        assert await repo.slot_message_id(s, online_slot(game.id, 1)) is None
        assert await repo.slot_message_id(s, repo.hand_slot(game.id, 1)) == 11
