"""Decoding request parameters the way the Bot API does.

python-telegram-bot posts ``application/x-www-form-urlencoded`` (or multipart) forms
in which strings are sent as they are and everything else (numbers, booleans,
``reply_markup`` ...) as JSON text. Other clients post JSON bodies or use the query
string. :func:`decode_form_value` undoes the form encoding, and :class:`Params`
reads typed values with Telegram's error texts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from testkit.emulator.errors import bad_request

__all__ = ["STRING_PARAMS", "Params", "decode_form_value"]

T = TypeVar("T")

#: Parameters whose type is String: form values are taken literally, never JSON-decoded.
STRING_PARAMS = frozenset(
    {
        "text",
        "caption",
        "parse_mode",
        "callback_query_id",
        "inline_query_id",
        "inline_message_id",
        "url",
        "query",
        "next_offset",
        "secret_token",
        "ip_address",
        "language_code",
        "action",
        "name",
        "description",
        "short_description",
        "title",
        "custom_title",
        "business_connection_id",
        "message_effect_id",
        "emoji",
        "icon_custom_emoji_id",
    }
)


def decode_form_value(name: str, value: str) -> Any:
    """A form field's value: JSON-decoded unless the parameter is a string."""
    if name in STRING_PARAMS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


class Params:
    """A method call's parameters, with typed getters raising Telegram's 400s."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __contains__(self, name: str) -> bool:
        return self.data.get(name) is not None

    def raw(self, name: str) -> Any:
        return self.data.get(name)

    def _get(self, name: str, convert: Callable[[Any], T], default: T) -> T:
        value = self.data.get(name)
        if value is None or value == "":
            return default
        try:
            return convert(value)
        except (TypeError, ValueError):
            raise bad_request(f'can\'t parse parameter "{name}"') from None

    def get_str(self, name: str, default: str = "") -> str:
        return self._get(name, str, default)

    def opt_str(self, name: str) -> str | None:
        value = self.data.get(name)
        return None if value is None else str(value)

    def get_int(self, name: str, default: int = 0) -> int:
        return self._get(name, int, default)

    def get_float(self, name: str, default: float = 0.0) -> float:
        return self._get(name, float, default)

    def opt_int(self, name: str) -> int | None:
        return self._get(name, int, None)

    def require_int(self, name: str, missing: str | None = None) -> int:
        value = self.opt_int(name)
        if value is None:
            raise bad_request(missing or f"{name} is empty")
        return value

    def get_bool(self, name: str, default: bool = False) -> bool:
        return self._get(name, _to_bool, default)

    def get_json(self, name: str) -> Any:
        """An object or array parameter (accepted as such or as JSON text)."""
        value = self.data.get(name)
        if isinstance(value, str):
            if not value:
                return None
            try:
                return json.loads(value)
            except ValueError:
                raise bad_request(f'can\'t parse parameter "{name}" as JSON') from None
        return value


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(text)
