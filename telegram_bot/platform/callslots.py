"""The outbox's few Bot API calls in flight, held around the HTTP call alone.

The outbox lets at most a few calls be in flight at once. A call first waits in the rate
limiter for its group's budget (4 edits in 16 s), which can take seconds; a slot held
through that wait is a slot no other chat can use. With six busy groups every slot was
held by a group edit waiting its turn, and the private hand edits (9 ms each) queued
behind them: the next player's "your turn" came 1.2 s after a play at the median, 3.4 s
at p95 (docs/performance.md, the open-loop benchmark). So the outbox names its slots
here, and the rate limiters take one only once they let the call through.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any

__all__ = ["CALL_SLOTS", "in_slot"]

#: The outbox's slots, set around a call it makes; None for any other caller.
CALL_SLOTS: ContextVar[asyncio.Semaphore | None] = ContextVar("hokm_call_slots", default=None)


async def in_slot(
    callback: Callable[..., Coroutine[Any, Any, Any]], *args: Any, **kwargs: Any
) -> Any:
    """``callback(*args, **kwargs)``, in one of the outbox's slots if it is the caller."""
    slots = CALL_SLOTS.get()
    if slots is None:
        return await callback(*args, **kwargs)
    async with slots:
        return await callback(*args, **kwargs)
