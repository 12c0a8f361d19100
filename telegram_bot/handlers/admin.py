"""Who may end a game, change a group's language or turn its hints on: a group's
admins (asked of Telegram), or in a private chat its owner.

An anonymous admin's message comes from Telegram's GroupAnonymousBot with
``sender_chat`` set to the group itself: only the group's admins can write as the
group, so such a message is an admin's, and Telegram is not asked (getChatMember
of GroupAnonymousBot says "user not found"). A message sent as a linked channel has
``sender_chat`` set to that channel, not to the group: it is nobody's admin.
"""

from __future__ import annotations

from telegram import ChatMember, Update
from telegram.ext import ContextTypes

__all__ = ["GROUP_ANONYMOUS_BOT_ID", "as_the_group", "chat_admin"]

#: The user anonymous admins' messages come from.
GROUP_ANONYMOUS_BOT_ID = 1087968824


def as_the_group(update: Update | None, chat_id: int) -> bool:
    """Was the update's message written as the group ``chat_id`` (an anonymous admin)?"""
    message = update.effective_message if update is not None else None
    sender = message.sender_chat if message is not None else None
    return sender is not None and sender.id == chat_id


async def chat_admin(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int, update: Update | None = None
) -> bool:
    """A group's admin (or, in a private chat, its owner). Given the ``update``, a
    message an anonymous admin wrote as the group counts, with no call to Telegram."""
    if chat_id > 0:
        return chat_id == user_id
    if as_the_group(update, chat_id):
        return True
    if user_id == GROUP_ANONYMOUS_BOT_ID:  # anonymous, but not as this group
        return False
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except Exception:
        return False
    return member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)
