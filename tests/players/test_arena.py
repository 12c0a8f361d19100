"""Seeded mini-arenas: normal and hard beat random by a wide margin."""

from __future__ import annotations

import pytest

from core.arena import ArenaResult, HandRecord, run_arena, seatings, wilson
from core.match import Match
from core.variant import Variant


def test_wilson_and_seatings() -> None:
    lo, hi = wilson(80, 100)
    assert 0.70 < lo < 0.80 < hi < 0.88
    assert seatings(4) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    three = seatings(3)
    assert len(three) == 6
    for seat in range(3):  # each player sits at every seat equally often
        assert sum(s[seat] for s in three) == 3


@pytest.mark.slow
def test_normal_beats_random_four_players() -> None:
    r = run_arena("normal0", "random", players=4, deals=150, seed=777)
    assert r.hands == 300
    assert r.hand_wins(0) / r.hands > 0.75
    # Today's normal (rules, corrections, a light look-ahead), on fewer deals.
    r = run_arena("normal", "random", players=4, deals=10, seed=777)
    assert r.hand_wins(0) / r.hands > 0.75


@pytest.mark.parametrize("players", [2, 3])
def test_normal_beats_random_two_three_players(players: int) -> None:
    r = run_arena("normal", "random", players=players, deals=40, seed=778)
    assert r.hand_wins(0) / r.hands > 0.65


def test_hard_beats_random_two_players() -> None:
    r = run_arena("hard", "random", players=2, deals=20, seed=779, budget=0.01)
    assert r.hand_wins(0) / r.hands > 0.75


def test_hard_beats_random_four_players() -> None:
    """A seeded mini-arena of 200 four-player hands: even with almost no thinking
    time (one or two sampled deals per card, each a noisy double-dummy
    score) the search beats random play widely (it won 77-80% here; equal players 50%)."""
    r = run_arena("hard", "random", players=4, deals=100, seed=780, budget=0.003)
    assert r.hands == 200
    assert r.hand_wins(0) / r.hands > 0.7


def test_saved_runs_pool_into_one_result(tmp_path) -> None:
    from core.arena import load_records, save_records

    first = run_arena("normal0", "random", players=4, deals=6, seed=900)
    second = run_arena("normal0", "random", players=4, deals=4, seed=906)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    save_records(str(a), first, 900, None)
    save_records(str(b), second, 906, None)
    pooled = load_records([str(a), str(b)])
    whole = run_arena("normal0", "random", players=4, deals=10, seed=900)
    assert pooled.hands == whole.hands == 20
    assert pooled.deals == 10
    assert pooled.hand_wins(0) == whole.hand_wins(0)
    assert pooled.matches(7) == whole.matches(7)
    assert [r.points for r in pooled.records] == [r.points for r in whole.records]
    # The same hands twice, or another setting, are refused rather than pooled.
    with pytest.raises(ValueError, match="saved twice"):
        load_records([str(a), str(a)])
    other = tmp_path / "c.jsonl"
    save_records(str(other), run_arena("normal0", "easy", players=4, deals=1, seed=950), 950, None)
    with pytest.raises(ValueError, match="differs"):
        load_records([str(a), str(other)])


def test_settings_of_a_reach_the_player_and_runs_compare_deal_by_deal(tmp_path) -> None:
    from core.arena import load_records, paired_difference, parse_settings, save_records

    # Easy with no random cards is the rule-based player (normal0): the same hands.
    plain = run_arena("easy", "random", players=4, deals=20, seed=960, a_set=(("randomness", "0"),))
    normal = run_arena("normal0", "random", players=4, deals=20, seed=960)
    assert plain.a == "easy[randomness=0]"
    assert [r.points for r in plain.records] == [r.points for r in normal.records]
    assert paired_difference(plain, normal)[1:] == (0.0, 0.0, 0)
    # Real easy differs on some deals.
    easy = run_arena("easy", "random", players=4, deals=20, seed=960)
    n, mean, se, changed = paired_difference(easy, normal)
    assert n == 20 and changed > 0 and se > 0
    assert mean == pytest.approx((easy.hand_wins() - normal.hand_wins()) / easy.hands)
    # A tuned run is saved under its own name, so it is never pooled with the default.
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    save_records(str(a), plain, 960, None)
    save_records(str(b), easy, 960, None)
    assert load_records([str(a)]).a == "easy[randomness=0]"
    with pytest.raises(ValueError, match="differs"):
        load_records([str(a), str(b)])
    assert parse_settings(["prior=1.5", "search = 1"]) == (("prior", "1.5"), ("search", "1"))
    for bad in (["prior"], ["=1"]):
        with pytest.raises(ValueError):
            parse_settings(bad)
    with pytest.raises(ValueError, match="no setting"):
        run_arena("normal", "random", deals=1, a_set=(("randomness", "0"),))
    with pytest.raises(ValueError, match="no setting"):
        run_arena("hard", "random", deals=1, a_set=(("time_budget_typo", "1"),))


def test_share_of_the_oracles_edge_on_common_deals() -> None:
    from core.arena import oracle_share

    oracle = run_arena("normal0", "random", players=4, deals=30, seed=970)
    half = run_arena("easy", "random", players=4, deals=20, seed=970)
    n, ra, ro, share, (lo, hi) = oracle_share(half, oracle)
    assert n == 20
    common = [r for r in oracle.records if r.deal < 990]
    assert ro == sum(r.winner == 0 for r in common) / len(common)
    assert share == pytest.approx((ra - 0.5) / (ro - 0.5))
    assert lo <= share <= hi
    # A player against itself takes the whole edge.
    assert oracle_share(oracle, oracle)[3] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same B"):
        oracle_share(run_arena("easy", "normal0", players=4, deals=2, seed=970), oracle)


def test_a_run_cut_off_keeps_the_deals_it_finished(tmp_path) -> None:
    from core.arena import RecordWriter, load_records

    path = str(tmp_path / "cut.jsonl")
    writer = RecordWriter(path, "normal", "random", 4, False, None)
    seen: list[int] = []

    def on_deal(recs) -> None:
        writer.hands(recs)
        seen.append(recs[0].deal)
        if len(seen) == 3:
            raise KeyboardInterrupt  # the sitting ends midway: no run line is written

    with pytest.raises(KeyboardInterrupt):
        run_arena("normal0", "random", players=4, deals=6, seed=950, on_deal=on_deal)
    kept = load_records([path])
    assert seen == [950, 951, 952]
    assert kept.deals == 3 and kept.hands == 6
    full = run_arena("normal0", "random", players=4, deals=3, seed=950)
    assert [(r.deal, r.seating, r.points, r.winner) for r in kept.records] == [
        (r.deal, r.seating, r.points, r.winner) for r in full.records
    ]


def test_four_player_report_splits_hands_by_role() -> None:
    """The hakem's side wins both seatings of one deal, A wins both of another."""
    records = []
    for deal, hakem_side_wins in ((501, True), (502, False)):
        hakem = Match.new(Variant(players=4), deal)[0].hakem
        for seating in ((0, 1, 0, 1), (1, 0, 1, 0)):
            a_is_hakem = seating[hakem] == 0
            winner = (0 if a_is_hakem else 1) if hakem_side_wins else 0
            records.append(
                HandRecord(deal, seating, (1, 0) if winner == 0 else (0, 1), winner, False)
            )
    r = ArenaResult("x", "y", 4, False, 2, records, 0.0)
    assert r.by_role() == ((2, 2), (1, 2))
    assert r.deal_outcomes() == (1, 1, 0)
    text = r.report()
    assert "as the hakem's side: 2/2 = 100.0%; as defenders: 1/2 = 50.0%" in text
    assert "won twice by A: 1, split: 1, won twice by B: 0" in text


def test_burner_starts_and_stops_its_processes() -> None:
    from core.burner import Burner

    with Burner(1) as b:
        assert b.running == 1
        procs = list(b._procs)
    assert all(p.poll() is not None for p in procs)


def test_clock_report_relative_to_budget() -> None:
    from core.arena import quantile

    times = [0.05] * 97 + [0.11, 0.13, 0.25]
    rec = HandRecord(1, (0, 1, 0, 1), (1, 0), 0, False, (times, []), [(0, 0.25, "trump", 0.2)])
    r = ArenaResult("hard", "normal", 4, False, 1, [rec], 1.0, budget=0.1)
    text = r.clock_report(0, 0.1)
    assert "p50 0.50x" in text and "p99 1.30x" in text and "max 2.50x" in text
    assert "over 1.2x: 2, over 2x: 1 of 100" in text
    assert "trump 2.50x (CPU 2.00x)" in text
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert "relative to the 0.1 s budget" in r.report()


def test_normal_bidding_matches_end() -> None:
    """Normal against normal in the bidding variant: matches to 500 end, and soon
    (blind nil only as a last chance, not whenever far behind)."""
    from core.full_match import run_matches

    recs = run_matches("normal", "normal", 100, seed=61000, cap=150)
    assert all(r.winner is not None for r in recs)
    assert sum(1 for r in recs if r.hands <= 60) >= 99
    assert sum(r.blind_nils for r in recs) < sum(r.hands for r in recs) / 10
