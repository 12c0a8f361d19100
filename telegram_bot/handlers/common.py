"""What every handler needs: the game service, where the update came from, and the
translator to answer in."""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatType, ParseMode
from telegram.ext import ContextTypes

from telegram_bot.chat import callbacks as cb
from telegram_bot.chat.i18n import Translator, get_translator, language_from_telegram
from telegram_bot.platform.storage import repo
from telegram_bot.service.games import GameService

__all__ = ["is_group", "language_keyboard", "reply", "service", "thread_of", "tr_for", "user_tr"]


def service(context: ContextTypes.DEFAULT_TYPE) -> GameService:
    return context.application.bot_data["service"]


def is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


def thread_of(update: Update) -> int | None:
    """The forum topic the update's message was written in (None: no topic). Only a
    topic message's ``message_thread_id`` names a topic: in a supergroup that is not a
    forum it names the thread of replies a message belongs to."""
    message = update.effective_message
    if message is None or not message.is_topic_message:
        return None
    return message.message_thread_id


async def reply(update: Update, text: str, markup: InlineKeyboardMarkup | None = None) -> None:
    assert update.effective_message is not None
    await update.effective_message.reply_text(text, parse_mode=ParseMode.HTML, reply_markup=markup)


async def tr_for(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Translator:
    svc = service(context)
    if is_group(update):
        return await svc.chat_tr(update.effective_chat.id)
    return await user_tr(update, context)


async def user_tr(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Translator:
    user = update.effective_user
    svc = service(context)
    async with svc.sessions.begin() as s:
        db_user = await repo.get_or_create_user(
            s, user.id, user.first_name, user.username, user.language_code
        )
    return get_translator(db_user.language or language_from_telegram(db_user.telegram_language))


def language_keyboard(target: str) -> InlineKeyboardMarkup:
    """The /language picker: for the group (``c``) or the person (``u``)."""
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    "فارسی", callback_data=cb.encode("g", "", None, f"{target}=fa")
                ),
                InlineKeyboardButton(
                    "English", callback_data=cb.encode("g", "", None, f"{target}=en")
                ),
            ]
        ]
    )
