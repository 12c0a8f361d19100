"""The errors of handlers: Telegram refusing for reasons outside the bot is one log
line; anything else is logged with its traceback."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.ext import ContextTypes

from telegram_bot.handlers.common import service

__all__ = ["expected_api_error", "old_query", "on_error"]

# The handlers' logger name from before they were split, so log filters still match.
log = logging.getLogger("telegram_bot.handlers.commands")


#: Bad requests that come from the world moving on, not from a bug of ours.
_EXPECTED_BAD_REQUESTS = (
    "query is too old",
    "query id is invalid",
    "message is not modified",
    "message to edit not found",
    "message can't be edited",
    "message to be replied not found",
    "chat not found",
    "not enough rights",
    "have no rights",
    "user not found",
)


def expected_api_error(error: BaseException | None) -> bool:
    """Telegram refusing for reasons outside the bot: flood limits, a blocked
    bot, a removed group, an old query, the network. One log line, no traceback."""
    if isinstance(error, RetryAfter | Forbidden | TimedOut | NetworkError) and not isinstance(
        error, BadRequest
    ):
        return True
    if isinstance(error, BadRequest):
        message = str(error).lower()
        return any(text in message for text in _EXPECTED_BAD_REQUESTS)
    return False


def old_query(error: BaseException | None) -> bool:
    """A press answered too late, or already (by a worker killed after answering it,
    whose update another worker then got): expected after every kill, so one INFO line."""
    message = str(error).lower()
    return isinstance(error, BadRequest) and (
        "query is too old" in message or "query id is invalid" in message
    )


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    update_id = getattr(update, "update_id", "?")
    error = context.error
    if isinstance(error, ChatMigrated):
        # A call of a handler named a group that is now a supergroup: move the chat
        # (the outbox does the same when its calls meet it).
        chat = update.effective_chat if isinstance(update, Update) else None
        log.info("update %s: chat is now the supergroup %s", update_id, error.new_chat_id)
        if chat is not None and chat.id != error.new_chat_id:
            await service(context).moves.migrate(chat.id, error.new_chat_id, chat.title)
        return
    if old_query(context.error):
        log.info("update %s: an old press: %s", update_id, context.error)
        return
    if expected_api_error(context.error):
        log.warning(
            "update %s: Telegram refused: %s: %s",
            update_id,
            type(context.error).__name__,
            context.error,
        )
        return
    log.error("update %s failed", update_id, exc_info=context.error)
