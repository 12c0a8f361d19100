"""Where does the bot's memory go as matches accumulate? A diagnostic, not a benchmark.

    python -m benchmarks.memtrace --marks 150,400 --frames 25 --out /tmp/trace

The bot runs in a child process (as in ``python -m benchmarks.loadtest --mode
matches``) with tracemalloc on; at each mark (finished matches) the bot is sent
SIGUSR1 and, in its handler, collects garbage and writes a tracemalloc snapshot, the
counts of live objects by type, ``sys.getallocatedblocks()`` and its RSS into
``--out``, with glibc's ``mallinfo2``/``malloc_info`` (in use and free in the heap),
SQLite's own memory (``sqlite3_status64``), the pool's connects and closes, and
``/proc/self/smaps``. Compare two marks with ``--compare A B``.

Settings for the bot (``--env NAME=VALUE``) to try a cause: ``MEMTRACE_POOL=15,0``
(the engine's pool size and overflow), ``MEMTRACE_TRIM=1`` (``malloc_trim`` at each
mark, RSS read after), ``MEMTRACE_TRIM_EVERY=5`` (``malloc_trim`` every 5 s),
``MEMTRACE_SQL=1`` (SQLAlchemy's statements logged, the database copied at each mark),
``HOKM_SQLITE_THREADS=1``, ``MALLOC_ARENA_MAX=2``, ...

How issue 14's RSS growth was found (``--level easy --frames 0``): Python's blocks
and live objects flat, tracemalloc's total flat, SQLite's memory and glibc's free
space in the main heap growing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from testkit.emulator import BotApiEmulator
from testkit.restartable import run_stopping_on_sigterm

from . import botprocess, procstat
from .botprocess import ROOT, fresh_database, hokm_bot
from .loadtest import TOKEN, _wait_ready
from .people import short_matches

MIB = 1024 * 1024

# Runs in the bot's process before the bot.
_PRELUDE = """
import collections, gc, json, os, signal, sys, tracemalloc
_frames = int(os.environ.get("MEMTRACE_FRAMES", "0"))
if _frames:
    tracemalloc.start(_frames)
def _memtrace_dump(signum, frame):
    out = os.environ["MEMTRACE_DIR"]
    n = open(os.path.join(out, "request")).read().strip()
    gc.collect()
    objs = gc.get_objects()
    counts = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objs)  # (some C types' __module__ is a descriptor)
    del objs
    if tracemalloc.is_tracing():
        tracemalloc.take_snapshot().dump(os.path.join(out, f"snap-{n}.pickle"))
    with open(f"/proc/{os.getpid()}/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    import ctypes
    class _MI(ctypes.Structure):
        _fields_ = [(k, ctypes.c_size_t) for k in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MI
    mi = libc.mallinfo2()
    libc.fopen.restype = ctypes.c_void_p
    fp = libc.fopen(os.path.join(out, f"mallocinfo-{n}.xml").encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(fp))
    libc.fclose(ctypes.c_void_p(fp))
    rss_trimmed = None
    if os.environ.get("MEMTRACE_TRIM"):
        libc.malloc_trim(0)
        with open(f"/proc/{os.getpid()}/statm") as f:
            rss_trimmed = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    lite = ctypes.CDLL("libsqlite3.so.0")
    cur, high = ctypes.c_int64(), ctypes.c_int64()
    lite.sqlite3_status64(0, ctypes.byref(cur), ctypes.byref(high), 0)
    info = {"mallinfo": {k: getattr(mi, k) for k, _ in _MI._fields_},
            "sqlite_memory": cur.value, "rss_trimmed": rss_trimmed, "pool": dict(_pool_events), "blocks": sys.getallocatedblocks(), "rss": rss, "gc_objects": sum(counts.values()),
            "types": dict(counts), "gc_counts": gc.get_count(), "gc_stats": gc.get_stats(),
            "traced": tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else None}
    with open("/proc/self/smaps") as src, open(os.path.join(out, f"smaps-{n}.txt"), "w") as dst:
        dst.write(src.read())
    with open(os.path.join(out, f"info-{n}.json"), "w") as f:
        json.dump(info, f)
    if os.environ.get("MEMTRACE_SQL"):
        import shutil
        shutil.copy(os.environ["DATABASE_URL"].split("///", 1)[1], os.path.join(out, f"db-{n}.sqlite3"))
    os.rename(os.path.join(out, "request"), os.path.join(out, f"done-{n}"))
signal.signal(signal.SIGUSR1, _memtrace_dump)
_pool_events = collections.Counter()
from sqlalchemy import event as _event
from sqlalchemy.pool import Pool as _Pool
for _name in ("connect", "close", "close_detached", "detach", "invalidate", "soft_invalidate"):
    _event.listen(_Pool, _name, (lambda n: lambda *a: _pool_events.update([n]))(_name))
if os.environ.get("MEMTRACE_POOL"):
    import telegram_bot.platform.storage.db as _db
    _orig_create_engine = _db.create_engine
    _size, _over = map(int, os.environ["MEMTRACE_POOL"].split(","))
    def _create_engine(*a, **k):
        k.setdefault("pool_size", _size)
        k.setdefault("max_overflow", _over)
        return _orig_create_engine(*a, **k)
    _db.create_engine = _create_engine
if os.environ.get("MEMTRACE_STMTS"):
    import telegram_bot.platform.storage.inline_sqlite as _inline
    _orig_open = _inline._open
    def _open_cached(database, busy, kwargs):
        return _orig_open(database, busy, {**kwargs, "cached_statements": int(os.environ["MEMTRACE_STMTS"])})
    _inline._open = _open_cached
if os.environ.get("MEMTRACE_TRIM_EVERY"):
    import asyncio as _asyncio, ctypes as _ctypes
    _libc = _ctypes.CDLL("libc.so.6")
    _every = float(os.environ["MEMTRACE_TRIM_EVERY"])
    _orig_run = _asyncio.BaseEventLoop.run_forever
    def _trimmer(loop):
        _libc.malloc_trim(0)
        loop.call_later(_every, _trimmer, loop)
    def _run_forever(self):
        self.call_later(_every, _trimmer, self)
        return _orig_run(self)
    _asyncio.BaseEventLoop.run_forever = _run_forever
if os.environ.get("MEMTRACE_SQL"):
    import logging
    logging.getLogger("sqlalchemy.engine").setLevel(logging.INFO)
"""


async def _dump(pid: int, out: Path, mark: int) -> None:
    (out / "request").write_text(str(mark))
    os.kill(pid, signal.SIGUSR1)
    while not (out / f"done-{mark}").exists():
        await asyncio.sleep(0.05)


async def run(opts: argparse.Namespace) -> None:
    out: Path = opts.out
    out.mkdir(parents=True, exist_ok=True)
    emu = BotApiEmulator(token=TOKEN, bot_username="HokmBenchBot", bot_name="Hokm")
    await emu.start()
    botprocess._RUN_HOKM = _PRELUDE + botprocess._RUN_HOKM  # type: ignore[attr-defined]
    env = {
        "MEMTRACE_DIR": str(out),
        "MEMTRACE_FRAMES": str(opts.frames),
        "HOKM_THINK_SECONDS": "1.0",
    }
    if opts.think_processes is not None:
        env["HOKM_THINK_PROCESSES"] = str(opts.think_processes)
    for kv in opts.env:
        k, _, v = kv.partition("=")
        env[k] = v
    try:
        with tempfile.TemporaryDirectory(prefix="hokm-memtrace-") as tmp:
            async with fresh_database(opts.db, Path(tmp)) as url:
                proc = hokm_bot(
                    "memtrace", ROOT, api_url=emu.base_url, token=TOKEN,
                    database_url=url, extra_env=env,
                )  # fmt: skip
                await proc.start()
                try:
                    await _wait_ready(emu, proc, False, 120)
                    await _play(opts, emu, proc, out)
                finally:
                    await proc.stop()
                print(f"log: {proc.log_path}")
    finally:
        await emu.stop()


async def _play(opts: argparse.Namespace, emu: BotApiEmulator, proc: Any, out: Path) -> None:
    marks = sorted(opts.marks)
    pending: asyncio.Queue[int] = asyncio.Queue()
    t0 = time.perf_counter()

    def over(done: int) -> None:
        if done in marks:
            pending.put_nowait(done)

    async with short_matches(emu, opts.tables, opts.people, opts.level, over) as matches:
        for _ in marks:
            mark = await matches.until(pending.get())
            await _dump(proc.pid, out, mark)
            info = json.loads((out / f"info-{mark}.json").read_text())
            print(
                f"{mark} matches  {time.perf_counter() - t0:.0f} s  RSS {info['rss'] / MIB:.1f} MiB"
                f"  blocks {info['blocks']}  gc objects {info['gc_objects']}"
                f"  malloc in use {info['mallinfo']['uordblks'] / MIB:.1f} free {info['mallinfo']['fordblks'] / MIB:.1f}"
                f" mmapped {info['mallinfo']['hblkhd'] / MIB:.1f}  sqlite {info['sqlite_memory'] / MIB:.2f} MiB"
                f"  pool {info['pool']}  trimmed {(info['rss_trimmed'] or 0) / MIB:.1f}  traced {info['traced']}  load {procstat.load_average()[0]:.2f}",
                flush=True,
            )


def compare(out: Path, a: int, b: int, top: int, frames: int = 25) -> None:
    import tracemalloc

    ia = json.loads((out / f"info-{a}.json").read_text())
    ib = json.loads((out / f"info-{b}.json").read_text())
    print(f"RSS {ia['rss'] / MIB:.1f} -> {ib['rss'] / MIB:.1f} MiB")
    print(
        f"blocks {ia['blocks']} -> {ib['blocks']}  gc objects {ia['gc_objects']} -> {ib['gc_objects']}"
    )
    diff = {
        t: ib["types"].get(t, 0) - ia["types"].get(t, 0)
        for t in set(ia["types"]) | set(ib["types"])
    }
    print("object counts that grew:")
    for t, d in sorted(diff.items(), key=lambda kv: -kv[1])[:top]:
        if d > 0:
            print(f"  {d:+7d}  {t}  ({ib['types'].get(t, 0)})")
    sa, sb = out / f"snap-{a}.pickle", out / f"snap-{b}.pickle"
    if not (sa.exists() and sb.exists()):
        return
    before = tracemalloc.Snapshot.load(str(sa))
    after = tracemalloc.Snapshot.load(str(sb))
    for key in ("filename", "traceback"):
        stats = after.compare_to(before, key)
        grew = sum(s.size_diff for s in stats)
        print(f"\n=== tracemalloc by {key}: total {grew / 1024:+.1f} KiB ===")
        for s in stats[:top]:
            if s.size_diff <= 0:
                continue
            print(
                f"{s.size_diff / 1024:+9.1f} KiB  {s.count_diff:+6d} blocks  (now {s.size / 1024:.1f} KiB)"
            )
            if key == "traceback":
                for line in s.traceback.format()[-2 * frames :]:
                    print("      " + line)
            else:
                print(f"      {s.traceback[0].filename}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.memtrace")
    p.add_argument("--marks", type=lambda s: [int(x) for x in s.split(",")], default=[150, 400])
    p.add_argument("--frames", type=int, default=25, help="tracemalloc frames, 0 = off")
    p.add_argument("--tables", type=int, default=16)
    p.add_argument("--people", type=int, default=1)
    p.add_argument("--level", default="normal")
    p.add_argument("--think-processes", type=int)
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the bot")
    p.add_argument("--db", default="sqlite")
    p.add_argument("--out", type=Path, default=Path("/tmp/memtrace"))
    p.add_argument("--compare", type=int, nargs=2)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--show-frames", type=int, default=25)
    opts = p.parse_args(argv)
    if opts.compare:
        compare(opts.out, *opts.compare, opts.top, opts.show_frames)
        return 0
    print(f"load average {procstat.load_average()}", flush=True)
    run_stopping_on_sigterm(run(opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
