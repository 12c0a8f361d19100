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
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from telegram import InlineKeyboardMarkup

from core import Event, HandEnded, Match

from .storage import repo

__all__ = ["REPOST_AFTER", "due", "repost"]

#: Messages below the table (the new hand result included) that bring it back down.
REPOST_AFTER = 3


def due(svc: Any, game: Any, match: Match, events: list[Event]) -> bool:
    """Should this render post the table again (a new hand of a group match begins)?"""
    if game.chat_id > 0 or match.is_over or game.table_message_id is None:
        return False
    if not any(isinstance(e, HandEnded) for e in events):
        return False
    newest = svc.outbox.newest_message_id(game.chat_id) or 0
    below = max(0, newest - int(game.table_message_id)) + 1
    return below >= REPOST_AFTER


async def repost(
    svc: Any, s: AsyncSession, game: Any, text: str, markup: InlineKeyboardMarkup | None
) -> None:
    """Delete the table message and send it again, at the bottom of the group."""
    slot = repo.table_slot(game.id)
    await svc.outbox.delete(s, game.chat_id, slot=slot)
    await svc.outbox.send(s, game.chat_id, text, markup, slot=slot)
