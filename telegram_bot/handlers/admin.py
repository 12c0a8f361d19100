"""Who may end a game, change a group's language or turn its hints on: a group's
admins (asked of Telegram), or in a private chat its owner.

Telegram's answer is kept for a few minutes (:data:`KEEP_SECONDS`), so that a press
by someone asked about lately (by their /cancel, /language or an earlier press) is
answered with its result at once, without a call to Telegram before the answer.

An anonymous admin's message comes from Telegram's GroupAnonymousBot with
``sender_chat`` set to the group itself: only the group's admins can write as the
group, so such a message is an admin's, and Telegram is not asked (getChatMember
of GroupAnonymousBot says "user not found"). A message sent as a linked channel has
``sender_chat`` set to that channel, not to the group: it is nobody's admin.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from telegram import ChatMember, Update
from telegram.ext import ContextTypes

__all__ = [
    "GROUP_ANONYMOUS_BOT_ID",
    "KEEP_SECONDS",
    "admin_known",
    "as_the_group",
    "chat_admin",
    "learn_admins",
]

#: The user anonymous admins' messages come from.
GROUP_ANONYMOUS_BOT_ID = 1087968824
#: How long Telegram's word on someone's being a group's admin is trusted.
KEEP_SECONDS = 300.0
_KEPT_AT_MOST = 4096


def as_the_group(update: Update | None, chat_id: int) -> bool:
    """Was the update's message written as the group ``chat_id`` (an anonymous admin)?"""
    message = update.effective_message if update is not None else None
    sender = message.sender_chat if message is not None else None
    return sender is not None and sender.id == chat_id


def _kept(context: ContextTypes.DEFAULT_TYPE) -> OrderedDict[tuple[int, int], tuple[float, bool]]:
    """This application's answers (per application: each bot asks its own)."""
    return context.application.bot_data.setdefault("admins_known", OrderedDict())


def _lists(context: ContextTypes.DEFAULT_TYPE) -> OrderedDict[int, tuple[float, frozenset[int]]]:
    """A group's admins, as Telegram listed them lately (per application)."""
    return context.application.bot_data.setdefault("admin_lists", OrderedDict())


async def learn_admins(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> None:
    """Ask Telegram for a group's admins now (with a command that opens buttons:
    /newgame, /cancel, /language), so that the presses on those buttons are answered
    with their result at once."""
    if chat_id > 0:
        return
    try:
        members = await context.bot.get_chat_administrators(chat_id)
    except Exception:
        return  # asked per person, after answering, when it matters
    lists = _lists(context)
    lists[chat_id] = (time.monotonic(), frozenset(m.user.id for m in members))
    lists.move_to_end(chat_id)
    while len(lists) > _KEPT_AT_MOST:
        lists.popitem(last=False)


def admin_known(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool | None:
    """Whether the user is the chat's admin, if known without asking Telegram."""
    if chat_id > 0:
        return chat_id == user_id
    if user_id == GROUP_ANONYMOUS_BOT_ID:  # a press is never anonymous; a message may be
        return False
    listed = _lists(context).get(chat_id)
    if listed is not None and time.monotonic() - listed[0] <= KEEP_SECONDS:
        return user_id in listed[1]
    kept = _kept(context).get((chat_id, user_id))
    if kept is None or time.monotonic() - kept[0] > KEEP_SECONDS:
        return None
    return kept[1]


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
        return False  # not kept: asked again next time
    admin = member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)
    known = _kept(context)
    known[(chat_id, user_id)] = (time.monotonic(), admin)
    known.move_to_end((chat_id, user_id))
    while len(known) > _KEPT_AT_MOST:
        known.popitem(last=False)
    return admin
