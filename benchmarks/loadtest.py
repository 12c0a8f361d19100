"""Load benchmark: the real bot in its own process against the Bot API emulator.

    python -m benchmarks.loadtest                       # 4 tables, SQLite, this checkout
    python -m benchmarks.loadtest --tables 50 --think 3 --db postgresql://postgres@127.0.0.1/postgres
    python -m benchmarks.loadtest --baseline-ref bcd0d71   # today vs that commit, same run
    python -m benchmarks.loadtest --bots minimal,hokm,hokm-nosniffio
    python -m benchmarks.loadtest --mode computers      # 20 tables of 1 person + 3 hard
    python -m benchmarks.loadtest --mode matches --matches 5000

Each bot runs in a child process (so its CPU time and RSS are read from /proc for
that process alone); the emulator and the simulated people run here. The rate
limiter is off and computer players move without a pause. ``minimal`` is a
python-telegram-bot bot that only answers each press and edits one message: the
ratio of CPU per play against it is the project's cost above the stack's floor.
Results are printed and written as JSON under benchmarks/results/.

Bots (``--bots``): ``minimal``, ``minimal-lean`` (the minimal bot on the project's
lean Bot API client, telegram_bot.platform.http, instead of httpx), ``hokm`` (this checkout),
``minimal-aiohttp`` (the same on the aiohttp client),
``hokm-httpx`` (this checkout on python-telegram-bot's httpx client, HOKM_HTTP=httpx),
``hokm-lean`` and ``hokm-aiohttp`` (this checkout on the lean or the aiohttp client),
``hokm-sqlite-threads`` (this checkout with SQLite in aiosqlite's threads),
``hokm-nosniffio`` (this checkout with sniffio made unimportable, as when it is not
installed), ``baseline`` and ``baseline-nosniffio`` (the checkout at ``--baseline-ref``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from testkit.emulator import BotApiEmulator
from testkit.restartable import run_stopping_on_sigterm

from . import procstat
from .botprocess import (
    ROOT,
    BotProcess,
    checkout,
    fresh_database,
    hokm_bot,
    minimal_bot,
)
from .people import Dispatcher, HokmTable, MinimalTable, Recorder, percentile, short_matches

TOKEN = "424242:BENCH-TOKEN"
RESULTS = ROOT / "benchmarks" / "results"
MIB = 1024 * 1024


@dataclass
class Bot:
    name: str
    kind: str  # "hokm" | "minimal"
    source: Path | None = None
    hide_sniffio: bool = False
    env: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------ one phase


async def _wait_ready(emu: BotApiEmulator, proc: BotProcess, webhook: bool, timeout: float) -> None:
    """Until the bot polls (or has set its webhook)."""
    method = "setWebhook" if webhook else "getUpdates"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not any(c.method == method and c.ok is not False for c in emu.calls):
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited:\n{proc.log_tail()}")
        if loop.time() > deadline:
            raise RuntimeError(f"{proc.name} not ready after {timeout}s:\n{proc.log_tail()}")
        await asyncio.sleep(0.05)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _latency(values: list[float]) -> dict[str, float | None]:
    return {
        f"p{q}": None if (v := percentile(values, q / 100)) is None else round(v * 1000, 1)
        for q in (50, 95, 99)
    } | {"n": len(values)}


def _slowest(rec: Recorder, started: float, n: int = 10) -> list[dict[str, float]]:
    """The slowest presses, with when they were made (seconds into the measured
    window): a tail made of one burst shows as presses made together."""
    pairs = sorted(zip(rec.answer, rec.pressed, strict=True), reverse=True)[:n]
    return [{"ms": round(a * 1000, 1), "at_s": round(p - started, 2)} for a, p in pairs]


def _calls(emu: BotApiEmulator, start: int) -> dict[str, Any]:
    methods: dict[str, int] = {}
    not_modified = group_edits = 0
    for call in emu.calls[start:]:
        if call.method == "getUpdates":
            continue
        methods[call.method] = methods.get(call.method, 0) + 1
        if call.method == "editMessageText" and (call.chat_id or 0) < 0:
            group_edits += 1
        if call.ok is False and "not modified" in (call.description or ""):
            not_modified += 1
    return {
        "by_method": methods,
        "total": sum(methods.values()),
        "group_edits": group_edits,
        "not_modified": not_modified,
    }


async def run_phase(bot: Bot, opts: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    emu = BotApiEmulator(token=TOKEN, bot_username="HokmBenchBot", bot_name="Hokm")
    await emu.start()
    db_cm = fresh_database(opts.db, workdir) if bot.kind == "hokm" else contextlib.nullcontext(None)
    try:
        async with db_cm as db_url:
            webhook_port = _free_port() if opts.webhook and bot.kind == "hokm" else None
            if bot.kind == "minimal":
                proc = minimal_bot(
                    bot.name,
                    api_url=emu.base_url,
                    token=TOKEN,
                    hide_sniffio=bot.hide_sniffio,
                    extra_env=bot.env,
                )
            else:
                assert bot.source is not None and db_url is not None
                extra = {"HOKM_THINK_SECONDS": str(opts.think_seconds), **bot.env}
                if opts.think_processes is not None:
                    extra["HOKM_THINK_PROCESSES"] = str(opts.think_processes)
                proc = hokm_bot(
                    bot.name,
                    bot.source,
                    api_url=emu.base_url,
                    token=TOKEN,
                    database_url=db_url,
                    hide_sniffio=bot.hide_sniffio,
                    webhook_port=webhook_port,
                    extra_env=extra,
                )
            await proc.start()
            try:
                await _wait_ready(emu, proc, webhook_port is not None, 120)
                if opts.mode == "matches":
                    result = await _matches(bot, opts, emu, proc)
                else:
                    result = await _measure(bot, opts, emu, proc)
            finally:
                code = await proc.stop()
            result["exit_code"] = code
            result["log"] = str(proc.log_path)
            return result
    finally:
        await emu.stop()


def _tables(bot: Bot, opts: argparse.Namespace, bench: Dispatcher) -> dict[str, list[Any]]:
    """The tables of a phase, by the recorder their figures go to."""
    main, probe = Recorder(), Recorder()
    groups: dict[str, list[Any]] = {}
    if bot.kind == "minimal":
        tables = [MinimalTable(bench, f"T{i}", opts.think, main) for i in range(opts.tables)]
        return {"people": tables}
    if opts.mode == "computers":
        groups["computers"] = [
            HokmTable(bench, f"C{i}", 1, opts.think, main, seed=i, settings={"level": opts.level})
            for i in range(opts.computer_tables)
        ]
        groups["people"] = [
            HokmTable(bench, f"T{i}", 4, opts.think, probe, seed=1000 + i)
            for i in range(opts.tables)
        ]
        return groups
    groups["people"] = [
        HokmTable(bench, f"T{i}", 4, opts.think, main, seed=i) for i in range(opts.tables)
    ]
    return groups


async def _measure(
    bot: Bot, opts: argparse.Namespace, emu: BotApiEmulator, proc: BotProcess
) -> dict[str, Any]:
    bench = Dispatcher(emu)
    groups = _tables(bot, opts, bench)
    everyone = [t for tables in groups.values() for t in tables]
    runs = [asyncio.create_task(t.run()) for t in everyone]
    try:
        await asyncio.wait_for(
            asyncio.gather(*(t.ready.wait() for t in everyone)), opts.setup_timeout
        )
        await asyncio.sleep(opts.warmup)
        for task in runs:
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        load_before = procstat.load_average()
        me_before = procstat.cpu_seconds(_self_pid())
        start_sample = procstat.sample(proc.pid)
        start_call = len(emu.calls)
        started = time.perf_counter()
        recorders = {name: tables[0].recorder for name, tables in groups.items()}
        for rec in recorders.values():
            rec.recording = True
        await asyncio.sleep(opts.duration)
        for rec in recorders.values():
            rec.recording = False
        elapsed = time.perf_counter() - started
        end_sample = procstat.sample(proc.pid)
        me_after = procstat.cpu_seconds(_self_pid())
        load_after = procstat.load_average()
        calls = _calls(emu, start_call)
        for t in everyone:
            if t.failure is not None:
                raise t.failure
    finally:
        for t in everyone:
            await t.stop()
        for task in runs:
            task.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
    plays = sum(r.plays for r in recorders.values())
    cpu = end_sample.cpu - start_sample.cpu
    children_cpu = max(0.0, end_sample.children_cpu - start_sample.children_cpu)
    result: dict[str, Any] = {
        "bot": bot.name,
        "mode": opts.mode,
        "seconds": round(elapsed, 2),
        "plays": plays,
        "plays_per_s": round(plays / elapsed, 2),
        "cpu_ms_per_play": round(1000 * cpu / plays, 2) if plays else None,
        "cpu_share": round(cpu / elapsed, 3),
        "children_cpu_share": round(children_cpu / elapsed, 3),
        "rss_mib": round(end_sample.rss / MIB, 1),
        "children_rss_mib": round(end_sample.children_rss / MIB, 1),
        "calls_per_play": round(calls["total"] / plays, 2) if plays else None,
        "sends_edits_per_play": round(
            (
                calls["by_method"].get("sendMessage", 0)
                + calls["by_method"].get("editMessageText", 0)
            )
            / plays,
            2,
        )
        if plays
        else None,
        "group_edits_per_play": round(calls["group_edits"] / plays, 2) if plays else None,
        "calls": calls,
        "alerts": sum(r.alerts for r in recorders.values()),
        "bench_cpu_share": round((me_after - me_before) / elapsed, 3),
        "load_before": load_before,
        "load_after": load_after,
    }
    for name, rec in recorders.items():
        result[name] = {
            "plays": rec.plays,
            "answer_ms": _latency(rec.answer),
            "table_edit_ms": _latency(rec.table_edit),
            "slowest_answers": _slowest(rec, started),
        }
    result["answer_ms"] = result["people"]["answer_ms"]
    result["table_edit_ms"] = result["people"]["table_edit_ms"]
    return result


async def _matches(
    bot: Bot, opts: argparse.Namespace, emu: BotApiEmulator, proc: BotProcess
) -> dict[str, Any]:
    """Short matches (one person, three computers, to 1 point) until ``--matches``
    have finished; the bot's RSS after 100 and at the end."""
    marks = sorted({100, *opts.rss_marks, opts.matches})
    readings: dict[int, float] = {}
    finished = asyncio.Event()
    load_before = procstat.load_average()
    t0 = time.perf_counter()

    def over(done: int) -> None:
        if done in marks:
            readings[done] = round(procstat.rss_bytes(proc.pid) / MIB, 1)
            print(
                f"  {bot.name}: {done} matches, RSS {readings[done]} MiB"
                f"  ({time.perf_counter() - t0:.0f} s, load {procstat.load_average()[0]:.2f})",
                flush=True,
            )
        if done >= opts.matches:
            finished.set()

    async with short_matches(emu, opts.tables, 1, opts.level, over) as matches:
        await matches.until(finished.wait())
    done = matches.done
    return {
        "bot": bot.name,
        "mode": "matches",
        "matches": done,
        "seconds": round(time.perf_counter() - t0, 1),
        "rss_mib": readings,
        "rss_growth_mib": round(readings[max(readings)] - readings[min(readings)], 1)
        if readings
        else None,
        "load_before": load_before,
        "load_after": procstat.load_average(),
    }


def _self_pid() -> int:
    return os.getpid()


# ------------------------------------------------------------------ the run


#: This checkout, with settings that undo one change each (same run, same code).
_HOKM_VARIANTS: dict[str, dict[str, str]] = {
    "hokm": {},
    "hokm-httpx": {"HOKM_HTTP": "httpx"},
    "hokm-lean": {"HOKM_HTTP": "lean"},
    "hokm-aiohttp": {"HOKM_HTTP": "aiohttp"},
    "hokm-sqlite-threads": {"HOKM_SQLITE_THREADS": "1"},
}


def _bots(opts: argparse.Namespace, baseline: Path | None) -> list[Bot]:
    names = [n.strip() for n in opts.bots.split(",") if n.strip()] if opts.bots else None
    if names is None:
        names = ["minimal", "hokm"] if opts.mode != "matches" else ["hokm"]
        if opts.baseline_ref:
            names.append("baseline")
    bots = []
    for name in names:
        hide = name.endswith("-nosniffio")
        base = name.removesuffix("-nosniffio")
        if base in ("minimal", "minimal-lean", "minimal-aiohttp"):
            env = {"MINIMAL_HTTP": base.removeprefix("minimal-")} if base != "minimal" else {}
            bots.append(Bot(name, "minimal", hide_sniffio=hide, env=env))
        elif base in _HOKM_VARIANTS:
            bots.append(Bot(name, "hokm", ROOT, hide, env=_HOKM_VARIANTS[base]))
        elif base == "baseline":
            if baseline is None:
                raise SystemExit("the baseline bots need --baseline-ref")
            env = {}
            if opts.baseline_think_seconds is not None:
                env["HOKM_THINK_SECONDS"] = str(opts.baseline_think_seconds)
            bots.append(Bot(f"{name}@{opts.baseline_ref}", "hokm", baseline, hide, env=env))
        else:
            raise SystemExit(f"unknown bot {name!r}")
    return bots


def _fmt(v: Any) -> str:
    return "-" if v is None else str(v)


def _print_measure(r: dict[str, Any]) -> None:
    a, e = r["answer_ms"], r["table_edit_ms"]
    print(
        f"{r['bot']:<28} plays/s {r['plays_per_s']:>7}  CPU/play {_fmt(r['cpu_ms_per_play']):>6} ms"
        f"  CPU {r['cpu_share']:.2f} (+children {r['children_cpu_share']:.2f})"
        f"  RSS {r['rss_mib']} MiB  calls/play {_fmt(r['calls_per_play'])}"
        f" (sends+edits {_fmt(r['sends_edits_per_play'])},"
        f" group edits {_fmt(r['group_edits_per_play'])})"
        f"  not-modified {r['calls']['not_modified']}  alerts {r['alerts']}"
    )
    print(
        f"{'':<28} press→answer p50/p95/p99 {_fmt(a['p50'])}/{_fmt(a['p95'])}/{_fmt(a['p99'])} ms"
        f"  press→table edit {_fmt(e['p50'])}/{_fmt(e['p95'])}/{_fmt(e['p99'])} ms"
        f"  load {r['load_before'][0]:.2f}→{r['load_after'][0]:.2f}"
        f"  bench CPU {r['bench_cpu_share']:.2f}"
    )
    slowest = r.get("people", {}).get("slowest_answers") or []
    if slowest:
        listed = ", ".join(f"{x['ms']:.0f} ms at {x['at_s']:.1f} s" for x in slowest[:5])
        print(f"{'':<28} slowest press→answer (when pressed, into the window): {listed}")
    if "computers" in r:
        c = r["computers"]["answer_ms"]
        print(
            f"{'':<28} tables with computers: {r['computers']['plays']} plays,"
            f" press→answer p50/p95/p99 {_fmt(c['p50'])}/{_fmt(c['p95'])}/{_fmt(c['p99'])} ms"
        )


def _summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    by_bot: dict[str, list[float]] = {}
    for r in results:
        if r.get("cpu_ms_per_play") is not None:
            by_bot.setdefault(r["bot"], []).append(r["cpu_ms_per_play"])
    medians = {b: statistics.median(v) for b, v in by_bot.items()}
    plays: dict[str, list[float]] = {}
    for r in results:
        if "plays_per_s" in r:
            plays.setdefault(r["bot"], []).append(r["plays_per_s"])
    out: dict[str, Any] = {"cpu_ms_per_play_median": medians}
    floor = medians.get("minimal") or next(
        (v for b, v in medians.items() if b.startswith("minimal")), None
    )
    if floor:
        out["cpu_ratio_to_minimal"] = {b: round(v / floor, 2) for b, v in medians.items()}
    lean = medians.get("minimal-lean")
    if lean:
        # The floor on the same Bot API client as the project's bot.
        out["cpu_ratio_to_minimal_lean"] = {b: round(v / lean, 2) for b, v in medians.items()}
    out["plays_per_s_median"] = {b: statistics.median(v) for b, v in plays.items()}
    return out


async def main_async(opts: argparse.Namespace) -> int:
    started = datetime.now(UTC)
    print(
        f"load average {procstat.load_average()}  cores {os.cpu_count()}"
        f"  mode {opts.mode}  db {opts.db}  tables {opts.tables}  think {opts.think}s",
        flush=True,
    )
    results: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        baseline = stack.enter_context(checkout(opts.baseline_ref)) if opts.baseline_ref else None
        bots = _bots(opts, baseline)
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hokm-bench-")))
        for round_no in range(opts.rounds):
            for bot in bots:
                r = await run_phase(bot, opts, workdir)
                r["round"] = round_no
                results.append(r)
                if opts.mode == "matches":
                    print(
                        f"{r['bot']:<28} {r['matches']} matches in {r['seconds']} s"
                        f"  RSS {r['rss_mib']} MiB  growth {r['rss_growth_mib']} MiB"
                        f"  load {r['load_before'][0]:.2f}→{r['load_after'][0]:.2f}",
                        flush=True,
                    )
                else:
                    _print_measure(r)
                    sys.stdout.flush()
    summary = _summary(results) if opts.mode != "matches" else {}
    if summary.get("cpu_ratio_to_minimal"):
        ratios = "  ".join(f"{b} {v}" for b, v in summary["cpu_ratio_to_minimal"].items())
        print(f"CPU per play / minimal bot's (median over rounds): {ratios}")
    if summary.get("cpu_ratio_to_minimal_lean"):
        ratios = "  ".join(f"{b} {v}" for b, v in summary["cpu_ratio_to_minimal_lean"].items())
        print(f"CPU per play / minimal-lean bot's (median over rounds): {ratios}")
    report = {
        "started": started.isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks.loadtest", *sys.argv[1:]]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "options": {k: v for k, v in vars(opts).items() if k != "out"},
        "results": results,
        "summary": summary,
    }
    out = opts.out or RESULTS / f"loadtest-{opts.mode}-{started:%Y%m%dT%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"written to {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.loadtest", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--mode", choices=("people", "computers", "matches"), default="people")
    p.add_argument("--tables", type=int, default=4, help="tables of four people (default 4)")
    p.add_argument("--think", type=float, default=0.0, help="seconds before each press")
    p.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds played before measuring")
    p.add_argument("--setup-timeout", type=float, default=120.0)
    p.add_argument("--db", default="sqlite", help="'sqlite' or a postgresql:// URL of a server")
    p.add_argument("--bots", help="comma list: minimal, hokm, hokm-nosniffio, baseline, ...")
    p.add_argument("--baseline-ref", help="a commit to measure in the same run (git worktree)")
    p.add_argument("--rounds", type=int, default=1, help="repeat the bots in turn")
    p.add_argument("--webhook", action="store_true", help="webhook instead of long polling")
    p.add_argument("--computer-tables", type=int, default=20, help="--mode computers")
    p.add_argument(
        "--level",
        help="computer level: in --mode computers (default hard) and --mode matches"
        " (default normal; easy makes a match several times cheaper)",
    )
    p.add_argument("--think-seconds", type=float, default=1.0, help="the bot's HOKM_THINK_SECONDS")
    p.add_argument(
        "--baseline-think-seconds",
        type=float,
        help="the baseline bot's budget, when it differs (default: --think-seconds)",
    )
    p.add_argument("--think-processes", type=int, help="HOKM_THINK_PROCESSES for the bot")
    p.add_argument("--matches", type=int, default=5000, help="--mode matches: how many")
    p.add_argument(
        "--rss-marks",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[],
        help="--mode matches: more match counts to read RSS at",
    )
    p.add_argument("--out", type=Path, help="JSON results file")
    opts = p.parse_args(argv)
    if opts.mode == "computers" and "--tables" not in (argv or sys.argv):
        opts.tables = 1
    if opts.mode == "matches" and "--tables" not in (argv or sys.argv):
        opts.tables = 8
    if opts.level is None:
        opts.level = "normal" if opts.mode == "matches" else "hard"
    return opts


def main(argv: list[str] | None = None) -> int:
    code = run_stopping_on_sigterm(main_async(parse_args(argv)))
    return 143 if code is None else code


if __name__ == "__main__":
    sys.exit(main())
