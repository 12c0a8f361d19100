"""The method table: Bot API method implementations register with :func:`api_method`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from testkit.emulator.errors import bad_request
from testkit.emulator.models import MessageRecord, SimChat
from testkit.emulator.params import Params
from testkit.emulator.state import World

__all__ = ["Handler", "MethodTable", "api_method"]

Handler = Callable[[Params], Awaitable[Any]]
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def api_method(name: str) -> Callable[[F], F]:
    """Register the decorated coroutine method as the Bot API method ``name``."""

    def mark(func: F) -> F:
        func.__dict__["api_name"] = name
        return func

    return mark


class MethodTable:
    """Base of the method groups; finds the methods marked with :func:`api_method`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._methods: dict[str, tuple[str, Handler]] = {}
        for cls in reversed(type(self).__mro__):
            for attr, func in vars(cls).items():
                name = getattr(func, "api_name", None)
                if name is not None:
                    self._methods[name.lower()] = (name, getattr(self, attr))

    def lookup(self, method: str) -> tuple[str, Handler] | None:
        """The canonical name and handler of ``method`` (names are case-insensitive)."""
        return self._methods.get(method.lower())

    @property
    def names(self) -> list[str]:
        return sorted(name for name, _ in self._methods.values())

    # helpers shared by the method groups ----------------------------------------------

    def chat_for_bot(self, params: Params) -> SimChat:
        """The chat named by ``chat_id``, after checking the bot may act there."""
        chat = self.world.resolve_chat(params.raw("chat_id"))
        self.world.check_access(chat)
        return chat

    def message_in(self, chat: SimChat, message_id: int | None, missing: str) -> MessageRecord:
        """An existing, not deleted message, or 400 ``missing``."""
        record = chat.message(message_id) if message_id is not None else None
        if record is None:
            raise bad_request(missing)
        return record
