"""What a pool ping at every checkout costs: transactions of one short query each, on a
pool that pings every checked-out connection (SQLAlchemy's ``pool_pre_ping``) and on
the bot's pool, which pings only a connection idle for IDLE_PING_SECONDS.

    python -m benchmarks.pool_ping --db postgresql://postgres@127.0.0.1/postgres

Both run in this process, alternating in rounds, with ``--tasks`` concurrent tasks (a
worker handles several updates at once); printed: this process's CPU time and the wall
time per 1,000 transactions, and the load average (the machine is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time

from sqlalchemy import text

from telegram_bot.platform.storage.db import create_engine, normalize_url


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _run(engine, transactions: int, tasks: int) -> tuple[float, float]:
    left = transactions

    async def one() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            async with engine.begin() as conn:
                await conn.execute(text("SELECT 1"))

    cpu, wall = _cpu(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(tasks)))
    return _cpu() - cpu, time.perf_counter() - wall


async def main_async(opts: argparse.Namespace) -> int:
    url = normalize_url(opts.db)
    engines = {
        "ping at every checkout": create_engine(url, pool_pre_ping=True),
        "ping when idle (the bot)": create_engine(url),
    }
    totals = {name: [0.0, 0.0] for name in engines}
    try:
        for engine in engines.values():  # warm up: the pool's connections opened
            await _run(engine, 200, opts.tasks)
        for _ in range(opts.rounds):
            for name, engine in engines.items():
                cpu, wall = await _run(engine, opts.transactions, opts.tasks)
                totals[name][0] += cpu
                totals[name][1] += wall
    finally:
        for engine in engines.values():
            await engine.dispose()
    n = opts.rounds * opts.transactions / 1000
    for name, (cpu, wall) in totals.items():
        print(f"{name:26s} CPU {cpu / n * 1000:6.0f} ms, wall {wall / n * 1000:6.0f} ms per 1,000")
    print(
        f"{opts.tasks} tasks, {opts.rounds} rounds of {opts.transactions}; load average "
        f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} cores"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.pool_ping", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--db", required=True, help="a postgresql:// URL")
    p.add_argument("--transactions", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tasks", type=int, default=8)
    return asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
