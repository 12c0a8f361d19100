"""The outbox's Bot API calls, and the few it may have in flight at once.

The calls are made with the markup JSON as stored and their answers kept as JSON:
python-telegram-bot's objects (the markup parsed and serialized again, the answer's
Message with its keyboard parsed) cost more than the call itself. (``Bot._post`` is
the layer the rate limiter of ``ExtBot`` hooks into.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Bot
from telegram.constants import ParseMode

from telegram_bot.platform.callslots import CALL_SLOTS
from telegram_bot.platform.outbox.rows import _CALLS_AT_ONCE, _NO_PREVIEW, _Row

__all__ = ["Calls"]


class Calls:
    """The bot, and the slots for calls in flight (see ``_CALLS_AT_ONCE``)."""

    def __init__(self, bot: Bot, at_once: int = _CALLS_AT_ONCE) -> None:
        self.bot = bot
        self._calling = asyncio.Semaphore(at_once)

    async def call(self, method: str, row: _Row, message_id: int | None) -> Any:
        """The row's call (``sendMessage``, ``editMessageText``, ``deleteMessage``):
        Telegram's answer, as JSON."""
        data: dict[str, Any] = {"chat_id": row.chat_id}
        if message_id is not None:
            data["message_id"] = message_id
        elif row.thread_id and method == "sendMessage":
            data["message_thread_id"] = row.thread_id
        if method != "deleteMessage":
            data |= {"text": row.text or "", "parse_mode": ParseMode.HTML}
            data["link_preview_options"] = _NO_PREVIEW
            if row.markup:
                data["reply_markup"] = row.markup  # JSON text, sent as it is
        if getattr(getattr(self.bot, "rate_limiter", None), "takes_call_slots", False):
            # The rate limiter takes the slot once it lets the call through
            # (telegram_bot.platform.callslots): none is held while a group waits.
            token = CALL_SLOTS.set(self._calling)
            try:
                return await self.bot._post(method, data)
            finally:
                CALL_SLOTS.reset(token)
        async with self._calling:
            return await self.bot._post(method, data)

    async def answer_press(self, data: dict[str, Any]) -> None:
        async with self._calling:
            await self.bot._post("answerCallbackQuery", data)

    def stop_pacing(self) -> None:
        """What is queued goes now, within Telegram's limits but not paced below them
        (the group buckets' pacing held "match over" past a graceful stop's grace)."""
        stop_pacing = getattr(getattr(self.bot, "rate_limiter", None), "stop_pacing", None)
        if stop_pacing is not None:
            stop_pacing()
