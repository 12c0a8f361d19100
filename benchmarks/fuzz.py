"""Long fuzz runs of the real bot: the fuzzer of tests/bot/test_fuzz.py, for longer.

    python -m benchmarks.fuzz [--updates 100000] [--db sqlite|postgresql] [--batch 50]

Hypothesis generates bursts of updates (forged callback data, old and other games'
buttons, stale moves, inline queries and chosen results, edits, stickers, members
joining and leaving, the bot removed) between real moves, against the real
Application and the Bot API emulator, until the people have sent ``--updates``
updates. Every check of ``tests/bot/fuzzer.py`` runs after every burst; the first
failure stops the run with its report (exit status 1). Prints the counts, the time
taken, press->answer percentiles and the machine's load average. SIGINT or SIGTERM
stops it after the current batch, with the same report.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import time
from contextlib import AsyncExitStack

from hypothesis import HealthCheck, Phase, given, settings

from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner
from tests.bot.fuzzer import Fuzz, FuzzFailure, program
from tests.dbutil import fresh_postgres_url, sqlite_url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__)
    parser.add_argument("--updates", type=int, default=100_000, help="stop after this many")
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--batch", type=int, default=50, help="hypothesis examples per report line")
    args = parser.parse_args(argv)
    if args.updates < 1 or args.batch < 1:
        parser.error("--updates and --batch must be at least 1")
    with asyncio.Runner() as loop, tempfile.TemporaryDirectory() as tmp:
        stack = AsyncExitStack()
        url = (
            loop.run(stack.enter_async_context(fresh_postgres_url()))
            if args.db == "postgresql"
            else sqlite_url(tmp, "fuzz.sqlite3")
        )
        emu = loop.run(BotApiEmulator(token=TOKEN, bot_username="HokmFuzzBot").start())
        runner = BotRunner(emu, url)
        loop.run(runner.start())
        fuzz = Fuzz(emu, runner)
        started = time.monotonic()

        @settings(
            max_examples=args.batch,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(program())
        def batch(bursts):
            loop.run(fuzz.play(bursts))

        status = 0
        stopping: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):  # stop after the batch, with the report
            signal.signal(sig, lambda signum, _frame: stopping.append(signum))
        try:
            loop.run(fuzz.start())
            while sent(emu) < args.updates and not stopping:
                batch()
                elapsed = time.monotonic() - started
                print(
                    f"{sent(emu):>8} updates  {elapsed:7.0f} s  bursts {fuzz.counts['bursts']}"
                    f"  presses {fuzz.counts['presses answered']}"
                    f"  matches {fuzz.counts['matches']}"
                    f"  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        except FuzzFailure as failure:
            print(f"FAILED: {failure}", file=sys.stderr)
            status = 1
        finally:
            fuzz.stop()
            loop.run(runner.stop())
            loop.run(emu.stop())
            loop.run(stack.aclose())
        elapsed = time.monotonic() - started
        if stopping:
            print(f"\nstopped by signal {stopping[0]} before --updates {args.updates}")
        print(f"\ndatabase: {args.db}; updates sent: {sent(emu)} in {elapsed:.0f} s")
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for name, count in sorted(fuzz.counts.items()):
            print(f"  {name}: {count}")
        print(latency_report(fuzz.answer_latencies))
        print(
            "errors logged: 0; unanswered presses: 0; refused input that changed a game: 0"
            if status == 0
            else "stopped at the first failure (above)"
        )
        return status


def latency_report(latencies: list[float]) -> str:
    """Press->answer percentiles: how long a person's button spinner ran."""
    if not latencies:
        return "press->answer: no presses"
    ordered = sorted(latencies)

    def pct(p: float) -> str:
        return f"{ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000:.0f} ms"

    late = sum(1 for x in ordered if x > 1.0)
    return (
        f"press->answer over {len(ordered)} presses: p50 {pct(0.50)}, p95 {pct(0.95)},"
        f" p99 {pct(0.99)}, max {ordered[-1] * 1000:.0f} ms; over 1 s: {late}"
    )


def sent(emu: BotApiEmulator) -> int:
    """Updates the people sent the bot, fuzzed and real moves alike."""
    return emu.world.updates._next_id - 1


if __name__ == "__main__":
    sys.exit(main())
