"""SIGKILL (and SIGTERM) of the real bot process at random steps of a match: the match
finishes, every decided message arrives once, no accepted play is lost."""

from __future__ import annotations

import pytest

from testkit.chaos import play_with_kills


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3])
async def test_kills_during_a_match_lose_nothing(emu, db_url, tmp_path, seed):
    report = await play_with_kills(
        emu, db_url, kills=4, people=2, target=1, seed=seed, log_dir=tmp_path
    )
    assert report.problems == [], report.summary()
    assert report.kills + report.terminations == 4
    assert report.hands >= 1 and report.accepted > 0
