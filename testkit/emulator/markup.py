"""Reply markup checks, with Telegram's error texts, and button look-up for tests."""

from __future__ import annotations

from typing import Any

from testkit.emulator.errors import bad_request
from testkit.emulator.models import JSON, MessageRecord, SimulationError, iter_buttons

__all__ = ["MAX_CALLBACK_DATA_BYTES", "find_button", "validate_markup"]

MAX_CALLBACK_DATA_BYTES = 64
MAX_BUTTONS = 100
_BUTTON_ACTIONS = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)


def validate_markup(markup: Any, *, inline_only: bool = False) -> JSON | None:
    """Check a reply markup like Telegram does; return it (``None`` if absent)."""
    if markup is None or markup == "":
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        _validate_inline_keyboard(markup["inline_keyboard"])
    elif inline_only:
        raise bad_request("inline keyboard expected")
    return markup


def _validate_inline_keyboard(rows: Any) -> None:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request(
            'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'
        )
    buttons = [button for row in rows for button in row]
    if len(buttons) > MAX_BUTTONS:
        raise bad_request("reply markup is too long")
    for button in buttons:
        if not isinstance(button, dict) or not button.get("text"):
            raise bad_request('can\'t find field "text"')
        if not any(action in button for action in _BUTTON_ACTIONS):
            raise bad_request("text buttons are unallowed in the inline keyboard")
        if "callback_data" in button:
            data = button["callback_data"]
            size = len(str(data).encode("utf-8"))
            if not isinstance(data, str) or not 1 <= size <= MAX_CALLBACK_DATA_BYTES:
                raise bad_request("BUTTON_DATA_INVALID")


def find_button(record: MessageRecord, text_contains: str, *, kind: str) -> JSON:
    """The first ``kind`` button (e.g. ``callback_data``) matching ``text_contains``.

    A button matches when its label equals or contains ``text_contains``, or when its
    ``kind`` value starts with it; exact label matches win.
    """
    candidates = [b for b in iter_buttons(record.reply_markup) if kind in b]
    for button in candidates:
        if button.get("text") == text_contains:
            return button
    for button in candidates:
        value = button.get(kind)
        if text_contains in str(button.get("text", "")) or (
            isinstance(value, str) and value.startswith(text_contains)
        ):
            return button
    labels = [(b.get("text"), b.get(kind)) for b in candidates]
    raise SimulationError(
        f"no {kind} button matching {text_contains!r} on message {record.message_id} "
        f"in chat {record.chat.id}; buttons: {labels}"
    )
