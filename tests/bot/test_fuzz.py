"""Hypothesis fuzzes the real bot through the emulator (see ``fuzzer.py``); the short
CI version. ``python -m benchmarks.fuzz`` runs the same for as long as asked."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner

from .fuzzer import Fuzz, program

EXAMPLES = 40


@pytest.mark.slow
def test_fuzzed_updates_are_answered_and_change_nothing_they_should_not(tmp_path):
    with asyncio.Runner() as loop:
        emu = loop.run(BotApiEmulator(token=TOKEN, bot_username="HokmFuzzBot").start())
        runner = BotRunner(emu, f"sqlite+aiosqlite:///{tmp_path / 'fuzz.sqlite3'}")
        loop.run(runner.start())
        fuzz = Fuzz(emu, runner)
        try:
            loop.run(fuzz.start())

            # One bot and one world for every example: state piles up on purpose
            # (old games, old buttons), so examples are not replayed or shrunk.
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(program())
            def one(bursts):
                loop.run(fuzz.play(bursts))

            one()
        finally:
            fuzz.stop()
            loop.run(runner.stop())
            loop.run(emu.stop())
    counts = fuzz.counts
    print("\nfuzz:", dict(sorted(counts.items())))
    assert counts["bursts"] >= EXAMPLES
    assert counts["presses answered"] > 0 and counts["refusals"] > 0
    assert counts["matches"] >= 1 and counts["hidden-card checks"] > 0
