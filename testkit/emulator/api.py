"""The complete emulated Bot API: every method group in one table."""

from __future__ import annotations

from testkit.emulator.api_bot import BotMethods
from testkit.emulator.api_chats import ChatMethods
from testkit.emulator.api_messages import MessageMethods

__all__ = ["BotApi"]


class BotApi(BotMethods, ChatMethods, MessageMethods):
    """All emulated methods; ``lookup(name)`` finds one (case-insensitively)."""
