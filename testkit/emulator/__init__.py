"""A Telegram Bot API emulator for end-to-end tests and demos.

:class:`BotApiEmulator` is a real HTTP server on 127.0.0.1 that the real
python-telegram-bot ``Application`` talks to (``base_url``/``base_file_url``), with
simulated users and chats, Telegram's error texts, flood limits and error injection.
See :mod:`testkit.emulator.emulator` for an example.
"""

from testkit.emulator.emulator import BotApiEmulator, SettleTimeout
from testkit.emulator.errors import ApiError
from testkit.emulator.limits import InjectedError, RateViolation
from testkit.emulator.models import (
    GROUP_ANONYMOUS_BOT,
    ApiCall,
    CallbackAnswer,
    CallbackHandle,
    ForumTopic,
    InlineResults,
    MessageRecord,
    MessageVersion,
    SimChat,
    SimulationError,
    SimUser,
)

__all__ = [
    "GROUP_ANONYMOUS_BOT",
    "ApiCall",
    "ApiError",
    "BotApiEmulator",
    "CallbackAnswer",
    "CallbackHandle",
    "ForumTopic",
    "InjectedError",
    "InlineResults",
    "MessageRecord",
    "MessageVersion",
    "RateViolation",
    "SettleTimeout",
    "SimChat",
    "SimUser",
    "SimulationError",
]
