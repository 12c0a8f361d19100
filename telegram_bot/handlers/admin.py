"""Who may end a game, change a group's language or turn its hints on: a group's
admins (asked of Telegram), or in a private chat its owner."""

from __future__ import annotations

from telegram import ChatMember
from telegram.ext import ContextTypes

__all__ = ["chat_admin"]


async def chat_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """A group's admin (or, in a private chat, its owner)."""
    if chat_id > 0:
        return chat_id == user_id
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except Exception:
        return False
    return member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)
