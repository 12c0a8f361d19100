"""Errors on demand and Telegram's flood limits.

:class:`ErrorInjector` makes chosen calls fail (``emu.inject_error``);
:class:`RateLimiter` answers 429 like Telegram when the bot sends or edits too fast
(``emu.enforce_limits``).
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from testkit.emulator.errors import DEFAULT_DESCRIPTIONS, ApiError, too_many_requests

__all__ = ["ErrorInjector", "InjectedError", "RateLimiter", "RateViolation"]

#: Methods that put a message on screen and so count against flood limits.
COUNTED_METHODS = frozenset(
    {
        "sendmessage",
        "editmessagetext",
        "editmessagereplymarkup",
        "editmessagecaption",
        "editmessagemedia",
        "sendphoto",
        "senddocument",
        "sendsticker",
        "sendanimation",
        "sendaudio",
        "sendvideo",
        "sendvoice",
        "sendpoll",
        "senddice",
        "copymessage",
        "forwardmessage",
    }
)


@dataclass
class InjectedError:
    """A rule making matching calls fail; ``times=None`` keeps it forever."""

    method: str
    chat_id: int | None
    code: int
    description: str
    parameters: dict[str, Any] | None = None
    times: int | None = 1
    hits: int = 0

    def matches(self, method: str, chat_id: int | None) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.method.lower() not in (method.lower(), "*"):
            return False
        return self.chat_id is None or self.chat_id == chat_id

    def error(self) -> ApiError:
        return ApiError(self.code, self.description, self.parameters)


class ErrorInjector:
    """The list of injected error rules, checked before a method runs."""

    def __init__(self) -> None:
        self.rules: list[InjectedError] = []

    def add(
        self,
        method: str,
        *,
        chat_id: int | None = None,
        code: int = 429,
        description: str | None = None,
        retry_after: int | None = None,
        parameters: dict[str, Any] | None = None,
        times: int | None = 1,
    ) -> InjectedError:
        params = dict(parameters or {})
        if code == 429:
            retry_after = 1 if retry_after is None else retry_after
        if retry_after is not None:
            params["retry_after"] = retry_after
        if description is None:
            if code == 429:
                description = f"Too Many Requests: retry after {retry_after}"
            else:
                description = DEFAULT_DESCRIPTIONS.get(code, f"Error {code}")
        rule = InjectedError(method, chat_id, code, description, params or None, times)
        self.rules.append(rule)
        return rule

    def check(self, method: str, chat_id: int | None) -> ApiError | None:
        """The error to answer with, counting the hit, or ``None``."""
        for rule in self.rules:
            if rule.matches(method, chat_id):
                rule.hits += 1
                return rule.error()
        return None

    def clear(self) -> None:
        self.rules.clear()


@dataclass(frozen=True)
class RateViolation:
    """A call refused with 429 by :class:`RateLimiter`."""

    method: str
    chat_id: int | None
    kind: str  # "group" (per group per minute) or "global" (per second)
    retry_after: int
    time: float = field(default_factory=time.time)


class RateLimiter:
    """Sliding-window flood limits: per group per minute and overall per second."""

    def __init__(self) -> None:
        self.enabled = False
        self.per_group_per_minute = 20
        self.per_second = 30
        self._group_sends: dict[int, deque[float]] = {}
        self._all_sends: deque[float] = deque()
        self.violations: list[RateViolation] = []

    def configure(self, per_group_per_minute: int, per_second: int) -> None:
        self.enabled = True
        self.per_group_per_minute = per_group_per_minute
        self.per_second = per_second

    def disable(self) -> None:
        self.enabled = False

    def check(self, method: str, chat_id: int | None, is_group: bool) -> ApiError | None:
        """Refuse the call if it would break a limit; otherwise count it."""
        if not self.enabled or method.lower() not in COUNTED_METHODS:
            return None
        now = time.monotonic()
        everything = _expire(self._all_sends, now - 1.0)
        if len(everything) >= self.per_second:
            return self._refuse(method, chat_id, "global", everything[0] + 1.0 - now)
        group: deque[float] | None = None
        if is_group and chat_id is not None:
            group = _expire(self._group_sends.setdefault(chat_id, deque()), now - 60.0)
            if len(group) >= self.per_group_per_minute:
                return self._refuse(method, chat_id, "group", group[0] + 60.0 - now)
            group.append(now)
        everything.append(now)
        return None

    def _refuse(self, method: str, chat_id: int | None, kind: str, wait: float) -> ApiError:
        retry_after = max(1, math.ceil(wait))
        self.violations.append(RateViolation(method, chat_id, kind, retry_after))
        return too_many_requests(retry_after)


def _expire(window: deque[float], before: float) -> deque[float]:
    while window and window[0] <= before:
        window.popleft()
    return window
