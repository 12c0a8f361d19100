"""Holding a press's messages until the press is answered.

A button press is answered before any other Bot API call it causes: the person's
spinner stops first, and the answer is not queued behind the group's flood limit
(Telegram gives up on an answer after about 15 s: "query is too old"). While a
:class:`Hold` is current (a context variable, so it covers the handler and the tasks
it starts), :meth:`Outbox.kick` notes the chats instead of starting their drains; the
handler releases the hold once its answer has gone, and the drains start then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Hold", "current_hold", "holding"]


class Hold:
    """Chats whose drains wait for a press's answer."""

    def __init__(self, kick: Callable[[int], None]) -> None:
        self._kick = kick
        self.chats: list[int] = []
        self.released = False

    def note(self, chat_id: int) -> bool:
        """Keep the kick for later; False once released (kick at once)."""
        if self.released:
            return False
        if chat_id not in self.chats:
            self.chats.append(chat_id)
        return True

    def release(self) -> None:
        """The answer has gone (or failed): the held drains start now."""
        if self.released:
            return
        self.released = True
        for chat_id in self.chats:
            self._kick(chat_id)
        self.chats.clear()


_HOLD: ContextVar[Hold | None] = ContextVar("outbox_hold", default=None)


def current_hold() -> Hold | None:
    return _HOLD.get()


@contextmanager
def holding(kick: Callable[[int], None]) -> Iterator[Hold]:
    """Hold the kicks of this context until ``release()`` (at the latest, on exit)."""
    hold = Hold(kick)
    token = _HOLD.set(hold)
    try:
        yield hold
    finally:
        _HOLD.reset(token)
        hold.release()
