"""How the fleet tells a wasted edit from one a killed worker had to leave unrecorded."""

from __future__ import annotations

from types import SimpleNamespace

from testkit.fleet import _not_modified

NOT_MODIFIED = "Bad Request: message is not modified"


def _edit(t: float, chat: int, mid: int, ok: bool, peer: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(
        method="editMessageText",
        chat_id=chat,
        params={"message_id": mid},
        time=t,
        ok=ok,
        description=None if ok else NOT_MODIFIED,
        peer=peer,
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
    assert _not_modified(calls, kill_times=[2.0])[:2] == (4, 2)
    assert _not_modified(calls, kill_times=[])[:2] == (4, 0)
    # Each wasted one is shown with the calls its message had until then.
    lines = _not_modified(calls, kill_times=[2.0])[2]
    assert sum(line.startswith("  a wasted edit") for line in lines) == 2


def test_the_client_port_tells_whose_edit_was_repeated():
    calls = [
        # Sent by the worker on port 100 just before its kill at 2.0, taken after it.
        _edit(2.05, -1, 5, ok=True, peer=100),
        _edit(3.0, -1, 5, ok=False, peer=200),  # the kill's: its edit was not recorded
        # A live worker's edit, repeated by another across the kill: waste.
        _edit(1.0, -1, 6, ok=True, peer=300),
        _edit(3.5, -1, 6, ok=False, peer=200),
    ]
    wasted, kills, lines = _not_modified(calls, kill_times=[2.0], killed_ports={100: 2.0})
    assert (wasted, kills) == (2, 1)
    assert "message 6" in lines[0] and "port 300" in lines[1]
    # By times alone, the first would be waste (taken after the kill) and the second not.
    assert _not_modified(calls, kill_times=[2.0])[:2] == (2, 1)
    assert "message 5" in _not_modified(calls, kill_times=[2.0])[2][0]


def test_a_process_tcp_ports_are_read_from_proc():
    import os
    import socket

    from testkit.restartable import tcp_ports

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert server.getsockname()[1] in tcp_ports(os.getpid())


def test_takeovers_and_stale_grants_are_read_from_the_workers_logs(tmp_path):
    from datetime import datetime

    from testkit.fleet import FleetReport, _takeovers

    def at(text: str) -> float:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").timestamp()

    (tmp_path / "worker0.log").write_text(
        "2026-11-25 20:00:01,500 worker[1] INFO telegram_bot.service.games: taking over the "
        "computers of game a at move 3 (its worker died)\n"
        "2026-11-25 20:00:02,000 worker[1] INFO telegram_bot.service.games: taking over the "
        "timer of game b at move 9 (its worker died)\n"
        "2026-11-25 20:00:03,000 worker[1] INFO telegram_bot.service.games: taking over the "
        "computers of game c at move 4 (late)\n"
        "2026-11-25 20:00:04,000 worker[1] INFO telegram_bot.service.games: resumed 0 game(s)\n"
    )
    (tmp_path / "worker1.log").write_text(
        "2026-11-25 20:00:09,250 worker[2] INFO telegram_bot.service.games: taking over the "
        "computers of game d at move 5 (its worker died)\n"
        "2026-11-25 20:00:09,300 worker[2] INFO telegram_bot.platform.ratelimit: a grant for chat "
        "-100 was 0.71 s old: taking another\n"
    )
    report = FleetReport()
    kills = [at("2026-11-25 20:00:01,000"), at("2026-11-25 20:00:08,000")]
    _takeovers(report, tmp_path, kills)
    assert [round(d, 2) for d in report.takeover_delays] == [0.5, 1.25]
    assert report.takeover_timers == 1 and report.takeovers_late == 1
    assert report.stale_grants == 1
    assert "2 computers' turns of killed workers taken over" in report.summary()
