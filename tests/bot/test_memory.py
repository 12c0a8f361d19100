"""Finished games leave nothing behind in the service: many short matches in a row
and its per-game structures stay empty between them (the RSS side is measured by
``python -m benchmarks.loadtest --mode matches``)."""

from __future__ import annotations

from telegram_bot import languages

from .driver import Table, by_level
from .test_game_flow import _data, _open, _people

MATCHES = 10


def _sizes(service) -> dict[str, int]:
    return {
        "locks": len(service._locks),
        "players": len(service._players),
        "timers": len(service._timers),
        "background": len(service._background),
    }


async def test_many_short_matches_leave_no_per_game_state(emu, runner, monkeypatch):
    monkeypatch.setattr(languages, "LANG_CACHE_SIZE", 3)
    service = runner.service
    seen = []
    for k in range(MATCHES):
        # A new person each time, so the language cache meets more users than it keeps.
        person = (await _people(emu, [f"P{k}"], lang="en"))[0]
        group = emu.add_group(f"G{k % 3}", members=[person], admins=[person])
        game, lobby = await _open(emu, runner, group, person, target=1)
        await emu.press(person, group.id, lobby.message_id, _data(game.id, "s"))
        await runner.settle()
        table = Table(emu, runner, group, [person])
        await table.play_out({person.id: by_level("normal", seed=k)})
        await runner.settle()
        assert (await table.game()).status == "finished"
        seen.append(_sizes(service))
        assert 0 < len(service.languages) <= 3
    assert seen == [dict.fromkeys(("locks", "players", "timers", "background"), 0)] * MATCHES
