"""How the fleet tells a wasted edit from one a killed worker had to leave unrecorded."""

from __future__ import annotations

from types import SimpleNamespace

from telegram_bot.fleet import _not_modified

NOT_MODIFIED = "Bad Request: message is not modified"


def _edit(t: float, chat: int, mid: int, ok: bool) -> SimpleNamespace:
    return SimpleNamespace(
        method="editMessageText",
        chat_id=chat,
        params={"message_id": mid},
        time=t,
        ok=ok,
        description=None if ok else NOT_MODIFIED,
    )


def test_a_repeat_across_a_kill_is_the_kills_and_any_other_is_waste():
    calls = [
        _edit(1.0, -1, 5, ok=True),
        _edit(3.0, -1, 5, ok=False),  # the same state again, a kill in between
        _edit(4.0, -1, 5, ok=False),  # still repeating the edit made before the kill
        _edit(5.0, 7, 9, ok=False),  # never edited before: waste
        _edit(6.0, 7, 9, ok=True),
        _edit(7.0, 7, 9, ok=False),  # a kill at 2.0 is before the last edit: waste
    ]
    assert _not_modified(calls, kill_times=[2.0]) == (4, 2)
    assert _not_modified(calls, kill_times=[]) == (4, 0)
