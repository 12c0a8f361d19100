"""Test-side checks on top of :mod:`testkit.simulation`."""

from __future__ import annotations

from typing import Any

from testkit.emulator import BotApiEmulator
from testkit.simulation import BotRunner, Table, buttons, by_level, lowest_card

__all__ = [
    "BotRunner",
    "Table",
    "assert_no_private_hand_in",
    "buttons",
    "by_level",
    "lowest_card",
]


def assert_no_private_hand_in(emu: BotApiEmulator, chat: Any) -> None:
    """No version of any group message ever carried a hand's buttons.

    (The text side is checked before every action by ``Table.step``: no hidden card
    appears in any group message.)
    """
    for message in emu.chat_log(chat):
        for version in message.edit_history:
            for row in (version.reply_markup or {}).get("inline_keyboard", []):
                for button in row:
                    data = button.get("callback_data") or ""
                    assert not data.startswith(("p:", "t:", "d:", "x:", "k:")), (
                        f"a hand button reached the group: {button}"
                    )
