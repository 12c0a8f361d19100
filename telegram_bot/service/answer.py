"""What the service tells the person who pressed a button (a toast, an alert, a link)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Answer"]


@dataclass
class Answer:
    """What to tell the user who pressed a button (a toast, or an alert)."""

    text: str | None = None
    alert: bool = False
    url: str | None = None
