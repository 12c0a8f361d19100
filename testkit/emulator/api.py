"""The complete emulated Bot API: every method group in one table."""

from __future__ import annotations

from testkit.emulator.api_bot import BotMethods
from testkit.emulator.api_chats import ChatMethods
from testkit.emulator.api_messages import MessageMethods
from testkit.emulator.api_topics import TopicMethods

__all__ = ["BotApi"]


class BotApi(BotMethods, ChatMethods, MessageMethods, TopicMethods):
    """All emulated methods; ``lookup(name)`` finds one (case-insensitively)."""
