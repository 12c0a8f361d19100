"""The complete emulated Bot API: every method group in one table."""

from __future__ import annotations

from .api_bot import BotMethods
from .api_chats import ChatMethods
from .api_messages import MessageMethods

__all__ = ["BotApi"]


class BotApi(BotMethods, ChatMethods, MessageMethods):
    """All emulated methods; ``lookup(name)`` finds one (case-insensitively)."""
