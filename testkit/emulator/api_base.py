"""The method table: Bot API method implementations register with :func:`api_method`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from testkit.emulator.errors import bad_request
from testkit.emulator.models import MessageRecord, SimChat
from testkit.emulator.params import Params
from testkit.emulator.state import World

__all__ = ["THREAD_NOT_FOUND", "TOPIC_CLOSED", "Handler", "MethodTable", "api_method"]

THREAD_NOT_FOUND = "message thread not found"
TOPIC_CLOSED = "TOPIC_CLOSED"

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

    def thread_for_send(
        self,
        p: Params,
        chat: SimChat,
        reply_to: MessageRecord | None,
        *,
        check_closed: bool = True,
    ) -> int | None:
        """The topic a new message goes to: ``message_thread_id``, else the topic of
        the message it replies to, else none (a forum's General topic).

        In a forum an unknown or deleted topic is 400 *message thread not found* and a
        closed one 400 *TOPIC_CLOSED* (unless the bot manages topics). Outside forums
        the thread of a supergroup is a reply thread: it must name a message there;
        private chats and basic groups have none, and the parameter is ignored.
        """
        thread_id = p.opt_int("message_thread_id")
        if not chat.is_forum:
            in_supergroup = chat.type == "supergroup"
            if thread_id is not None and in_supergroup and chat.message(thread_id) is None:
                raise bad_request(THREAD_NOT_FOUND)
            return None
        if thread_id is None:
            thread_id = reply_to.thread_id if reply_to is not None else None
            if thread_id is None:
                return None
        topic = chat.topic(thread_id)
        if topic is None:
            raise bad_request(THREAD_NOT_FOUND)
        if check_closed and topic.closed and not (chat.bot_is_admin and chat.bot_manages_topics):
            raise bad_request(TOPIC_CLOSED)
        return topic.thread_id
