"""How many solo tables (one person, three hard computers) one bot process holds.

    python -m benchmarks.solo_capacity --tables 10,20,40,80 --budget 0.25

For each count, one :mod:`benchmarks.loadtest` phase (``--mode computers``: the real
bot in its own process, its search in its think processes, against the emulator;
each person presses ``--think`` seconds after their turn shows) and its figures:
the person's press→answer p50/p99, press→table edit p50/p99 (their card shown with
the computers' three, so it includes their thinking), plays a second and the CPU of
the bot and its children. The process holds a count while press→answer stays under
``--limit`` ms at p99 (the issue's 200 ms); the largest such count is printed.
The 1-minute load average is printed with each count.

With ``--baseline-ref REF`` the checkout at REF is measured too, right after today's
bot at each count (loadtest's ``baseline`` bot): before and after in one run;
``--baseline-budget`` gives it its own seconds a move (the same strength may cost
a different budget). Both are the bots' ``HOKM_THINK_SECONDS``: since ``a4652e3``
the bot's hard computers think half of it at a 4-player table, so today's bot at
``--budget 0.25`` thinks 0.125 s a move here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def phase(tables: int, opts: argparse.Namespace, out: Path) -> list[dict]:
    """One loadtest run at ``tables`` tables: a result per bot measured."""
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.loadtest",
        "--mode",
        "computers",
        "--bots",
        "hokm,baseline" if opts.baseline_ref else "hokm",
        "--computer-tables",
        str(tables),
        "--think",
        str(opts.think),
        "--think-seconds",
        str(opts.budget),
        "--duration",
        str(opts.duration),
        "--level",
        opts.level,
        "--out",
        str(out),
    ]
    if opts.baseline_ref:
        cmd += ["--baseline-ref", opts.baseline_ref]
        if opts.baseline_budget is not None:
            cmd += ["--baseline-think-seconds", str(opts.baseline_budget)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["results"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", default="10,20,40,80", help="comma list of table counts")
    p.add_argument("--budget", type=float, default=0.25, help="the bot's HOKM_THINK_SECONDS")
    p.add_argument("--think", type=float, default=2.0, help="a person's seconds a press")
    p.add_argument("--duration", type=float, default=30.0, help="measured seconds a count")
    p.add_argument("--level", default="hard")
    p.add_argument("--limit", type=float, default=200.0, help="p99 press→answer, ms")
    p.add_argument("--baseline-ref", help="a commit to measure beside today's, at each count")
    p.add_argument(
        "--baseline-budget",
        type=float,
        help="the baseline's HOKM_THINK_SECONDS (default: --budget)",
    )
    opts = p.parse_args()
    held: dict[str, int] = {}
    print(
        f"{opts.level} computers, budget {opts.budget} s"
        + (f" (baseline {opts.baseline_budget} s)" if opts.baseline_budget is not None else "")
        + f", a press {opts.think} s after the"
        f" turn shows, {os.cpu_count()} cores"
    )
    print(
        "bot                tables  load  plays/s  answer p50/p99 ms"
        "  table edit p50/p99 ms  CPU bot+children"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in opts.tables.split(",")):
            for r in phase(n, opts, Path(tmp) / f"{n}.json"):
                c = r["computers"]
                a, e = c["answer_ms"], c["table_edit_ms"]
                cpu = r["cpu_share"] + r["children_cpu_share"]
                print(
                    f"{r['bot']:<18} {n:>6}  {os.getloadavg()[0]:>4.1f}  {r['plays_per_s']:>7.2f}"
                    f"  {a['p50']:>7.1f} / {a['p99']:>7.1f}"
                    f"  {e['p50']:>9.0f} / {e['p99']:>9.0f}  {cpu:>6.2f} cores",
                    flush=True,
                )
                held.setdefault(r["bot"], 0)
                if a["p99"] is not None and a["p99"] < opts.limit:
                    held[r["bot"]] = max(held[r["bot"]], n)
    for bot, n in held.items():
        print(f"{bot}: largest count with press→answer p99 < {opts.limit:.0f} ms: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
