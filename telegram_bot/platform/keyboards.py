"""Inline keyboards of plain buttons, kept as the Bot API's JSON fields.

The hand and table keyboards are drawn for every play and only ever written into
the outbox as JSON: building python-telegram-bot's ``InlineKeyboardButton`` objects
(each attribute set through ``TelegramObject.__setattr__``) only to read their fields
back cost more than drawing them. A :class:`PlainKeyboard` holds the buttons as the
dicts the JSON is made of; :meth:`PlainKeyboard.to_json` gives the same text as
``json.dumps(markup.to_dict(), ensure_ascii=False, sort_keys=True)`` would for the
equivalent ``InlineKeyboardMarkup`` (tested), and :meth:`PlainKeyboard.to_markup`
that markup, for code that wants the object.
"""

from __future__ import annotations

import json
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

#: A button's fields: "text" and one of callback_data, url, switch_inline_query,
#: switch_inline_query_current_chat (strings), or web_app (``{"url": ...}``).
Button = dict[str, Any]


def button(text: str, callback_data: str) -> Button:
    """A button that sends ``callback_data`` when pressed."""
    return {"text": text, "callback_data": callback_data}


def web_app_button(text: str, url: str) -> Button:
    """A button that opens the Mini App at ``url`` (private chats only)."""
    return {"text": text, "web_app": {"url": url}}


def _button(fields: Button) -> InlineKeyboardButton:
    web_app = fields.get("web_app")
    if web_app is not None:
        return InlineKeyboardButton(fields["text"], web_app=WebAppInfo(web_app["url"]))
    return InlineKeyboardButton(**fields)


class PlainKeyboard:
    """Rows of plain buttons (see the module's documentation)."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[list[Button]]) -> None:
        self.rows = rows

    def to_json(self) -> str:
        return json.dumps({"inline_keyboard": self.rows}, ensure_ascii=False, sort_keys=True)

    def to_markup(self) -> InlineKeyboardMarkup:
        return InlineKeyboardMarkup([[_button(fields) for fields in row] for row in self.rows])

    @property
    def inline_keyboard(self) -> tuple[tuple[InlineKeyboardButton, ...], ...]:
        return self.to_markup().inline_keyboard

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, PlainKeyboard):
            return self.rows == other.rows
        if isinstance(other, InlineKeyboardMarkup):
            return self.to_markup() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PlainKeyboard({self.rows!r})"
