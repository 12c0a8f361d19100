"""What the service tells the person who pressed a button (a toast, an alert, a link)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Answer", "Refused"]


@dataclass
class Answer:
    """What to tell the user who pressed a button (a toast, or an alert)."""

    text: str | None = None
    alert: bool = False
    url: str | None = None


class Refused(Exception):
    """An action refused, for a caller that shows its own words (the Mini App): a
    stable ``code`` (``no_such_game``, ``not_seated``, ``not_playing``, ``stale_move``
    with ``move``, or core's :class:`~core.ErrorCode` value) and details."""

    def __init__(self, code: str, **info: object) -> None:
        super().__init__(code)
        self.code = code
        self.info = info
