"""Who may end a game, change a group's language or turn its hints on: a group's
admins (asked of Telegram), or in a private chat its owner.

Telegram's answer is kept for a few minutes (:data:`KEEP_SECONDS`), so that a press
by someone asked about lately (by their /cancel, /language or an earlier press) is
answered with its result at once, without a call to Telegram before the answer."""

from __future__ import annotations

import time
from collections import OrderedDict

from telegram import ChatMember
from telegram.ext import ContextTypes

__all__ = ["KEEP_SECONDS", "admin_known", "chat_admin", "learn_admins"]

#: How long Telegram's word on someone's being a group's admin is trusted.
KEEP_SECONDS = 300.0
_KEPT_AT_MOST = 4096


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
    listed = _lists(context).get(chat_id)
    if listed is not None and time.monotonic() - listed[0] <= KEEP_SECONDS:
        return user_id in listed[1]
    kept = _kept(context).get((chat_id, user_id))
    if kept is None or time.monotonic() - kept[0] > KEEP_SECONDS:
        return None
    return kept[1]


async def chat_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """A group's admin (or, in a private chat, its owner)."""
    if chat_id > 0:
        return chat_id == user_id
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
