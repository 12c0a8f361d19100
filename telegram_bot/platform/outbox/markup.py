"""Markup as the JSON that is stored and sent, written from a keyboard's fields."""

from __future__ import annotations

import json

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from telegram_bot.platform.keyboards import PlainKeyboard


def _markup_json(markup: InlineKeyboardMarkup | PlainKeyboard | None) -> str | None:
    """The markup as JSON (what is stored and sent). Keyboards of plain buttons (text
    and a string callback, URL or inline query: all the bot draws) are written from
    their fields directly, the same JSON ``to_dict()`` gives at a fraction of its
    cost; anything else goes through ``to_dict()``. A :class:`PlainKeyboard` is
    those fields already."""
    if markup is None:
        return None
    if type(markup) is PlainKeyboard:
        return markup.to_json()
    if not markup.api_kwargs:
        rows = []
        for row in markup.inline_keyboard:
            out = []
            for button in row:
                fields = _plain_button(button)
                if fields is None:
                    break
                out.append(fields)
            else:
                rows.append(out)
                continue
            break
        else:
            return PlainKeyboard(rows).to_json()
    return json.dumps(markup.to_dict(), ensure_ascii=False, sort_keys=True)


#: InlineKeyboardButton's fields a plain button has (as strings, when not None).
_PLAIN_FIELDS = ("callback_data", "url", "switch_inline_query", "switch_inline_query_current_chat")
_OTHER_FIELDS = tuple(
    f for f in InlineKeyboardButton.__slots__ if f not in {"text", *_PLAIN_FIELDS}
)


def _plain_button(button: InlineKeyboardButton) -> dict[str, str] | None:
    if button.api_kwargs or type(button) is not InlineKeyboardButton:
        return None
    for name in _OTHER_FIELDS:
        if getattr(button, name) is not None:
            return None
    fields = {"text": button.text}
    for name in _PLAIN_FIELDS:
        value = getattr(button, name)
        if value is not None:
            if not isinstance(value, str):
                return None
            fields[name] = value
    return fields
