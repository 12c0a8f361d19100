"""Database work per press: SQL statements, transactions and pool checkouts.

    python -m benchmarks.statements                  # SQLite
    python -m benchmarks.statements --db postgresql://postgres@127.0.0.1/postgres -v
    python -m benchmarks.statements --db postgresql://… --pre-ping   # the old pool


The real bot against the Bot API emulator in this process: a table of four people
plays ``--presses`` cards (after its first three), and every statement the bot's
engine runs meanwhile is counted, those run on asyncpg directly too
(``telegram_bot.platform.storage.pgdirect``; the driver's own reads of the game are not). Unlike
CPU time these counts do not depend on the machine's load, so a change to the hot
path shows in them exactly; ``-v`` lists the statements. Pool pings are counted too
(with asyncpg each is three round trips: BEGIN, an empty query, ROLLBACK);
``--pre-ping`` runs the bot with SQLAlchemy's ping at every checkout, as before
``telegram_bot.platform.storage.db`` pinged only idle connections. The CPU time of this process
(the bot and the emulator) per press is printed with the load average: it depends on
the machine, so compare runs made side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import os
import resource
import sys
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import event

from telegram_bot.platform.storage import pgdirect
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner, Table, by_level

from .botprocess import fresh_database


class _Counting(Table):
    """A table whose own reads of the game are not counted."""

    counting = False

    async def game(self) -> Any:
        was, self.counting = self.counting, False
        try:
            return await super().game()
        finally:
            self.counting = was


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure(db_url: str, presses: int, pre_ping: bool = False) -> dict[str, Any]:
    if pre_ping:
        import telegram_bot.runtime.app
        from telegram_bot.platform.storage.db import create_engine

        telegram_bot.runtime.app.create_engine = functools.partial(
            create_engine, pool_pre_ping=True
        )
    async with BotApiEmulator(token=TOKEN, bot_username="HokmBenchBot", bot_name="Hokm") as emu:
        runner = BotRunner(emu, db_url)
        await runner.start()
        try:
            people = [emu.add_user(n, language_code="en") for n in "ABCD"]
            for person in people:
                await emu.send_message(person, person.private_chat_id, "/start")
            group = emu.add_group("Statements", members=people, admins=people[:1])
            await runner.settle()
            await emu.send_message(people[0], group.id, "/newgame")
            await runner.settle()
            table = _Counting(emu, runner, group, people)
            table.check_hidden = False
            game = await table.game()
            lobby = emu.chat_log(group.id)[-1]
            owner, g = people[0], game.id
            presses_ = [(owner, f"o:{g}::timer=0"), *[(p, f"j:{g}") for p in people[1:]]]
            for presser, data in [*presses_, (owner, f"s:{g}")]:
                await emu.press(presser, group.id, lobby.message_id, data)
                await runner.settle()
            strategies = {p.id: by_level("easy", seed=i) for i, p in enumerate(people)}
            for _ in range(3):
                await table.step(strategies)
            engine = runner.app.bot_data["engine"].sync_engine
            counts: collections.Counter[str] = collections.Counter()
            statements: collections.Counter[str] = collections.Counter()

            def executed(_conn: Any, _cur: Any, statement: str, *_: Any) -> None:
                if table.counting:
                    counts["statements"] += 1
                    statements[" ".join(statement.split())[:120]] += 1

            def bump(name: str) -> Any:
                def on(*_: Any) -> None:
                    if table.counting:
                        counts[name] += 1

                return on

            event.listen(engine, "before_cursor_execute", executed)
            pgdirect.observers.append(functools.partial(executed, None, None))
            event.listen(engine, "commit", bump("commits"))
            event.listen(engine.pool, "checkout", bump("checkouts"))
            event.listen(engine.pool, "connect", bump("connections opened"))
            real_ping = engine.dialect.do_ping

            def ping(dbapi_connection: Any) -> Any:
                if table.counting:
                    counts["pings"] += 1
                return real_ping(dbapi_connection)

            engine.dialect.do_ping = ping  # type: ignore[method-assign]
            cpu_before = _cpu()
            calls_before = sum(1 for c in emu.calls if c.method != "getUpdates")
            done = 0
            table.counting = True
            for _ in range(presses):
                if not await table.step(strategies):
                    break
                done += 1
            table.counting = False
            pgdirect.observers.clear()
            cpu = _cpu() - cpu_before
            calls = sum(1 for c in emu.calls if c.method != "getUpdates") - calls_before
        finally:
            await runner.stop()
    return {
        "presses": done,
        "per_press": {k: round(v / done, 2) for k, v in sorted(counts.items())},
        "api_calls_per_press": round(calls / done, 2),
        "cpu_ms_per_press": round(1000 * cpu / done, 1),
        "statements": {s: round(n / done, 2) for s, n in statements.most_common()},
    }


async def main_async(opts: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="hokm-statements-") as tmp:
        async with fresh_database(opts.db, Path(tmp)) as url:
            result = await measure(url, opts.presses, opts.pre_ping)
    per = ", ".join(f"{k} {v}" for k, v in result["per_press"].items())
    pool = " (ping at every checkout)" if opts.pre_ping else ""
    print(
        f"{opts.db}{pool}: {result['presses']} presses; per press: {per},"
        f" Bot API calls {result['api_calls_per_press']}; CPU of this process (bot and"
        f" emulator) {result['cpu_ms_per_press']} ms a press, load {os.getloadavg()[0]:.2f}"
    )
    if opts.verbose:
        for statement, n in result["statements"].items():
            print(f"  {n:5.2f}  {statement}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.statements", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--db", default="sqlite", help="'sqlite' or a postgresql:// URL of a server")
    p.add_argument("--presses", type=int, default=40)
    p.add_argument("-v", "--verbose", action="store_true", help="list the statements")
    p.add_argument(
        "--pre-ping", action="store_true", help="ping pooled connections at every checkout"
    )
    return asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
