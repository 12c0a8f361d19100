"""Finished games leave nothing behind in the service: many short matches in a row
and its per-game structures stay empty between them (the RSS side is measured by
``python -m benchmarks.loadtest --mode matches``)."""

from __future__ import annotations

import itertools

import pytest

from telegram_bot.service import languages

from .driver import Table, by_level
from .test_game_flow import _data, _open, _people

#: Matches in a row, each with a new person: more people than the language cache keeps (3).
MATCHES = 6


def _sizes(service) -> dict[str, int]:
    sizes = service.sizes()
    return {k: sizes[k] for k in ("locks", "players", "timers", "background")}


@pytest.mark.slow
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


#: Matches in each of the two windows measured by tracemalloc, after warming up
#: (connections, compiled statements).
TRACED = 8
#: What a window may leave allocated from the bot's and the rules' code: a few
#: containers' worth of noise. Keeping what a message showed, or which message a slot
#: named, for each finished game came to ~1 KiB a match.
TRACED_BYTES = TRACED * 512
#: Frames kept per allocation: enough to reach the bot's code from the libraries it
#: calls (the filters below keep a trace with any frame in it). Each frame costs:
#: at 10 the traced matches ran about 6 times slower than at 4.
FRAMES = 4


async def _quiet(service) -> None:
    """Until nothing runs: the computers' turns, the messages, and the outbox's
    deferred deletion of rows carried out (it holds their ids for up to half a second)."""
    await service.idle()
    await service.outbox.write_deletions()


@pytest.mark.slow
@pytest.mark.one_backend
async def test_finished_matches_leave_no_per_game_state_through_the_service(db_url):
    """Matches played to the end through the service (the driver of
    ``python -m benchmarks.memory``): every per-game structure of the service and of
    the outbox is empty afterwards, the per-chat and per-user ones hold one entry per
    chat or user at most, no Match or Game object is left alive, and what the bot's
    code allocated does not grow with the matches."""
    import gc
    import tracemalloc

    from benchmarks.memory import Tables, per_game_state
    from core import Match
    from telegram_bot.platform.storage.models import Game

    tables = 4
    keep = tracemalloc.Filter(True, "*/telegram_bot/*", all_frames=True)
    rules = tracemalloc.Filter(True, "*/core/*", all_frames=True)
    ignore = [
        # Not asyncpg's: each pooled connection caches up to 100 prepared statements (in
        # asyncpg and in SQLAlchemy's adapter), and the pool opens and closes
        # connections as the load comes and goes (bounded by the pool's size, and not
        # the bot's own).
        tracemalloc.Filter(False, "*asyncpg*", all_frames=True),
        # Nor the sqlite3 module's: its per-connection cache of prepared statements (128
        # each) fills as the pool's connections meet each statement. Those allocations
        # have inline_sqlite.py's call as their innermost Python frame.
        tracemalloc.Filter(False, "*/telegram_bot/platform/storage/inline_sqlite.py"),
        # Nor the tables of weak registries (SQLAlchemy's live sessions, asyncio's
        # tasks) and of the event loop's timer heap: they are resized to the most that
        # were alive at once (KiBs either way), and a weak reference keeps nothing.
        tracemalloc.Filter(False, "*/weakref.py"),
        tracemalloc.Filter(False, "*/_weakrefset.py"),
        tracemalloc.Filter(False, "*/asyncio/base_events.py"),
    ]

    async def snapshot() -> tracemalloc.Snapshot:
        await _quiet(t.service)
        gc.collect()
        return tracemalloc.take_snapshot().filter_traces([keep, rules, *ignore])

    async with Tables(db_url, tables) as t:
        await t.play(tables)  # warm up: the pool's connections, compiled statements
        tracemalloc.start(FRAMES)
        try:
            await t.play(tables)
            snapshots = [await snapshot()]
            for _ in range(2):
                await t.play(TRACED)
                snapshots.append(await snapshot())
        finally:
            tracemalloc.stop()
        state = per_game_state(t.service)
        alive = [o for o in gc.get_objects() if isinstance(o, Match | Game)]
    assert t.finished == 2 * tables + 2 * TRACED
    per_chat = {"service.langs", "service.chat_langs", "outbox.newest"}  # bounded, per user or chat
    assert {k: v for k, v in state.items() if k in per_chat and v > 2 * tables} == {}
    assert {k: v for k, v in state.items() if k not in per_chat | {"outbox.stats"} and v} == {}
    assert alive == []
    # What is kept per match is kept in both windows; a container that grows to a new
    # size once (a dict resized past its most entries so far) is seen in one only.
    growth = [
        sum(d.size_diff for d in later.compare_to(earlier, "traceback"))
        for earlier, later in itertools.pairwise(snapshots)
    ]
    assert min(growth) < TRACED_BYTES, f"{growth} bytes kept over {TRACED} matches each"


async def test_periodic_passes_read_only_the_active_games(emu, runner, db_url):
    """What runs every few seconds whatever the load (the sweeper's idle and ping
    queries, the clock's poll for run-out turns) reads the partial index of active
    games, never the whole games table: finished games stay in it for good. The ping
    query once scanned every game ever played, every 5 s; on SQLite each pooled
    connection kept the pages it read in its page cache, so the bot's RSS grew with
    the matches finished (and the scan's time with them)."""
    if not db_url.startswith("sqlite"):
        pytest.skip("SQLite's query plans (PostgreSQL plans a scan for a small table)")
    from datetime import timedelta

    from sqlalchemy import event

    from telegram_bot.platform.storage.models import utcnow

    engine = runner.app.bot_data["engine"]
    ran: list[tuple[str, object]] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if "games" in statement:
            ran.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        await runner.app.bot_data["sweeper"].sweep(now=utcnow() + timedelta(days=2))
        await runner.service.sweep()
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    assert len(ran) >= 3  # idle games, waiting turns, run-out turns
    scans = {}
    async with engine.connect() as conn:
        for statement, parameters in ran:
            plan = await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
            details = [row[-1] for row in plan]
            if any(d.startswith("SCAN games") and " INDEX " not in d for d in details):
                scans[statement] = details
    assert scans == {}


def _plain_http_server():
    """A blocking HTTP/1.1 server in a thread (not asyncio: its reads are its own),
    answering every POST with a small Bot API result."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = b'{"ok": true, "result": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("kind", ["aiohttp", "lean"])
async def test_bot_api_calls_read_in_small_pieces(kind):
    """The Bot API clients read an answer a few KiB at a time (the lean one into its
    connection's own buffer, the aiohttp one with its transports' read size lowered).
    With asyncio's defaults every read allocated 256 KiB and shrank it to the bytes
    that came: in glibc's heap those blocks and what got placed in the space they gave
    back made the bot's RSS grow with its calls (about half a MiB per 100 finished
    matches, Python's own allocations flat). Here no call takes more than a few tens
    of KiB."""
    import tracemalloc

    from telegram_bot.platform.http import AiohttpRequest, LeanRequest

    server = _plain_http_server()
    request = {"aiohttp": AiohttpRequest, "lean": LeanRequest}[kind](connection_pool_size=1)
    await request.initialize()
    url = f"http://127.0.0.1:{server.server_address[1]}/bot1:T/getMe"
    try:
        await request.do_request(url, "POST")  # the connection, opened once
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            for _ in range(20):
                code, body = await request.do_request(url, "POST")
                assert (code, body) == (200, b'{"ok": true, "result": true}')
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    finally:
        await request.shutdown()
        server.shutdown()
        server.server_close()
    assert peak < 64 * 1024, f"a call took {peak} bytes at its peak"
