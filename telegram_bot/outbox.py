"""Sending and editing messages without ever stalling a game.

Edits are fire-and-forget: the game logic records the state a message should show,
and one task per message sends the newest state when it can. States that arrive
while an edit is in flight are coalesced (only the last is sent), edits that would
not change the message are skipped before they are sent, and a 429 Too Many
Requests only delays that message. Blocked users and removed groups are logged and
skipped; nothing here raises into a handler.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut

__all__ = ["Outbox"]

log = logging.getLogger(__name__)

Key = tuple[int, int]
Signature = tuple[str, str | None]

_MAX_RETRIES = 5


def _signature(text: str, markup: InlineKeyboardMarkup | None) -> Signature:
    return text, markup.to_json() if markup is not None else None


def _retry_after_seconds(exc: RetryAfter) -> float:
    ra = exc.retry_after
    return ra.total_seconds() if hasattr(ra, "total_seconds") else float(ra)


class Outbox:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self._want: dict[Key, tuple[str, InlineKeyboardMarkup | None, Signature]] = {}
        self._shown: dict[Key, Signature] = {}
        self._tasks: dict[Key, asyncio.Task[None]] = {}
        #: Called with (chat_id, message_id) when a message to edit is gone.
        self.on_lost: Callable[[int, int], Awaitable[None]] | None = None
        self.skipped = 0

    # ------------------------------------------------------------------ edits

    def edit(
        self, chat_id: int, message_id: int | None, text: str, markup: InlineKeyboardMarkup | None
    ) -> None:
        """Make the message show ``text`` and ``markup`` soon; returns at once."""
        if message_id is None:
            return
        key = (chat_id, message_id)
        sig = _signature(text, markup)
        if key not in self._want and self._shown.get(key) == sig:
            self.skipped += 1
            return
        self._want[key] = (text, markup, sig)
        task = self._tasks.get(key)
        if task is None or task.done():
            self._tasks[key] = asyncio.create_task(self._drain(key), name=f"edit {key}")

    def remember(
        self, chat_id: int, message_id: int, text: str, markup: InlineKeyboardMarkup | None
    ) -> None:
        """Record what a message shows (after sending it), so equal edits are skipped."""
        self._shown[(chat_id, message_id)] = _signature(text, markup)

    async def _drain(self, key: Key) -> None:
        retries = 0
        while key in self._want:
            text, markup, sig = self._want.pop(key)
            if self._shown.get(key) == sig:
                self.skipped += 1
                continue
            try:
                await self.bot.edit_message_text(
                    chat_id=key[0],
                    message_id=key[1],
                    text=text,
                    reply_markup=markup,
                    parse_mode=ParseMode.HTML,
                    disable_web_page_preview=True,
                )
                self._shown[key] = sig
                retries = 0
            except RetryAfter as exc:
                # Keep the newest wanted state; wait out the flood limit for this
                # message only.
                self._want.setdefault(key, (text, markup, sig))
                await asyncio.sleep(_retry_after_seconds(exc))
            except BadRequest as exc:
                msg = str(exc).lower()
                if "not modified" in msg:
                    self._shown[key] = sig
                elif "not found" in msg or "can't be edited" in msg:
                    log.warning("message %s is gone: %s", key, exc)
                    self._shown.pop(key, None)
                    if self.on_lost is not None:
                        await self._safe(self.on_lost(*key))
                else:
                    log.error("edit of %s refused: %s", key, exc)
            except Forbidden as exc:
                log.info("cannot edit %s: %s", key, exc)
            except (TimedOut, NetworkError) as exc:
                retries += 1
                log.warning("edit of %s failed (%s), retry %d", key, exc, retries)
                if retries <= _MAX_RETRIES:
                    self._want.setdefault(key, (text, markup, sig))
                    await asyncio.sleep(min(2**retries, 30))
                else:
                    log.error("giving up on edit of %s: %s", key, exc)
            except Exception:  # never let one message kill the drain task
                log.exception("edit of %s failed", key)

    async def _safe(self, coro: Awaitable[Any]) -> None:
        try:
            await coro
        except Exception:
            log.exception("on_lost hook failed")

    # ------------------------------------------------------------------ sends

    async def send(
        self, chat_id: int, text: str, markup: InlineKeyboardMarkup | None = None
    ) -> Message | None:
        """Send a new message; None if the chat refuses the bot. Retries 429s."""
        for attempt in range(_MAX_RETRIES):
            try:
                message = await self.bot.send_message(
                    chat_id=chat_id,
                    text=text,
                    reply_markup=markup,
                    parse_mode=ParseMode.HTML,
                    disable_web_page_preview=True,
                )
                self.remember(chat_id, message.message_id, text, markup)
                return message
            except RetryAfter as exc:
                await asyncio.sleep(_retry_after_seconds(exc))
            except Forbidden as exc:
                log.info("cannot send to %s: %s", chat_id, exc)
                return None
            except BadRequest as exc:
                log.error("send to %s refused: %s", chat_id, exc)
                return None
            except (TimedOut, NetworkError) as exc:
                log.warning("send to %s failed (%s), attempt %d", chat_id, exc, attempt + 1)
                await asyncio.sleep(min(2**attempt, 10))
        return None

    def send_later(
        self, chat_id: int, text: str, markup: InlineKeyboardMarkup | None = None
    ) -> None:
        """Send without waiting (announcements the game does not depend on)."""
        task = asyncio.create_task(self.send(chat_id, text, markup), name=f"send {chat_id}")
        self._tasks[(chat_id, -id(task))] = task

    async def idle(self, private_only: bool = False) -> None:
        """Wait until every queued edit and send is done (tests and shutdown), or with
        ``private_only`` those to private chats (group edits may be rate limited)."""
        while True:
            pending = [
                t
                for (chat_id, _), t in self._tasks.items()
                if not t.done() and (chat_id > 0 or not private_only)
            ]
            if not pending:
                break
            await asyncio.gather(*pending, return_exceptions=True)
        self._tasks = {k: t for k, t in self._tasks.items() if not t.done()}
