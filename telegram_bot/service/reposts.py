"""The group table comes back into view when other messages have pushed it up.

Hand results, moves sent from the group with inline mode and people's chat all land
below the table message, which is edited in place and so drifts out of sight. At the
start of a hand, if at least :data:`REPOST_AFTER` messages (the hand result just
decided included) were posted in the group since the table, the table is deleted and
sent again at the bottom, once for that hand.

Messages are counted by their ids, which Telegram numbers in order within a chat: the
newest id the bot knows (its own sends, and any group update it receives, chat it
cannot read with privacy mode on included once a later message shows the gap) minus
the table's id. The bot only knows what it saw since it started, so after a restart it
counts low and re-posts later, never more often.

Workers sharing a database each see only some of a group's messages (the updates they
claimed, the messages they sent), so each writes the newest ids it saw into
``chats.newest_message_id`` every second (:func:`share_newest`), and the worker that
ends a hand counts from the highest of its own and the stored one. (It may count a
second's messages low: a re-post comes later, never more often.)
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import bindparam, or_, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import InlineKeyboardMarkup

from core import Event, HandEnded, Match
from telegram_bot.platform.keyboards import PlainKeyboard
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Chat

__all__ = ["REPOST_AFTER", "due", "repost", "share_newest"]

log = logging.getLogger(__name__)

#: Messages below the table (the new hand result included) that bring it back down.
REPOST_AFTER = 3


async def due(
    outbox: Outbox, s: AsyncSession, game: Any, match: Match, events: list[Event]
) -> bool:
    """Should this render post the table again (a new hand of a group match begins)?"""
    if game.chat_id > 0 or match.is_over or game.table_message_id is None:
        return False
    if not any(isinstance(e, HandEnded) for e in events):
        return False
    newest = outbox.newest_message_id(game.chat_id) or 0
    if outbox.shared:  # what the other workers saw
        chat = await repo.get_chat(s, game.chat_id)
        newest = max(newest, (chat.newest_message_id or 0) if chat else 0)
    below = max(0, newest - int(game.table_message_id)) + 1
    return below >= REPOST_AFTER


async def repost(
    outbox: Outbox,
    s: AsyncSession,
    game: Any,
    text: str,
    markup: InlineKeyboardMarkup | PlainKeyboard | None,
) -> None:
    """Delete the table message and send it again, at the bottom of the group."""
    slot = repo.table_slot(game.id)
    await outbox.delete(s, game.chat_id, slot=slot)
    await outbox.send(s, game.chat_id, text, markup, slot=slot, thread=game.thread_id)


async def share_newest(
    outbox: Outbox, sessions: async_sessionmaker[AsyncSession], interval: float = 1.0
) -> None:
    """Forever, in each of several workers: store the newest message ids this worker
    saw (only ever raising the stored ones); a last time when cancelled."""
    written: dict[int, int] = {}

    async def flush() -> None:
        fresh = [
            {"c": chat_id, "m": mid}
            for chat_id, mid in outbox.newest_message_ids().items()
            if chat_id < 0 and written.get(chat_id, 0) < mid
        ]
        if not fresh:
            return
        stmt = (
            update(Chat)
            .where(Chat.id == bindparam("c"))
            .where(or_(Chat.newest_message_id.is_(None), Chat.newest_message_id < bindparam("m")))
            .values(newest_message_id=bindparam("m"))
        )
        async with sessions.begin() as s:
            conn = await s.connection()
            await conn.execute(stmt, fresh)
        written.update({row["c"]: row["m"] for row in fresh})

    try:
        while True:
            await asyncio.sleep(interval)
            try:
                await flush()
            except asyncio.CancelledError:
                raise
            except Exception:  # the ids stay in memory: the next round writes them
                log.exception("could not store the newest message ids")
    except asyncio.CancelledError:
        try:
            await flush()
        except Exception:
            log.warning("could not store the newest message ids", exc_info=True)
        raise
