"""What remembering users' languages saves, to choose what workers sharing a database do.

    python -m benchmarks.languages --database-url postgresql://postgres@127.0.0.1:5432/postgres

Plays a match (2 people, 2 computers) twice through the real bot on a fresh PostgreSQL
database: languages remembered (one process, or workers told of changes by NOTIFY) and
read from the database at each lookup (what workers would do with no cache, or with a
version column to check). Prints, per human play, the language lookups and the SQL
statements of each run, then the time of one lookup: remembered, read in the caller's
transaction, and read in a session of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine

from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, BotRunner, Table, by_level

from .botprocess import fresh_database

STATEMENTS = 0


def _count(*_args: object) -> None:
    global STATEMENTS
    STATEMENTS += 1


async def _match(db_url: str, remember: bool) -> tuple[int, int, int]:
    """(human plays, language lookups, SQL statements) of one match."""
    global STATEMENTS
    async with BotApiEmulator(token=TOKEN, bot_username="HokmBenchBot") as emu:
        runner = BotRunner(emu, db_url)
        await runner.start()
        try:
            languages = runner.service.languages
            languages.remember = remember
            lookups = 0
            real_get = languages.get

            async def counted(user_id, s=None):
                nonlocal lookups
                lookups += 1
                return await real_get(user_id, s)

            languages.get = counted
            people = [emu.add_user(f"P{i}", language_code="en") for i in range(2)]
            for p in people:
                await emu.send_message(p, p.private_chat_id, "/start")
            group = emu.add_group("Bench", members=people, admins=people[:1])
            await runner.settle()
            await emu.send_message(people[0], group.id, "/newgame")
            await runner.settle()
            table = Table(emu, runner, group, people)
            game = await table.game()
            lobby = game.table_message_id
            for who, action in ((0, "o:{g}::target=1"), (1, "j:{g}"), (0, "s:{g}")):
                await emu.press(people[who], group.id, lobby, action.format(g=game.id))
                await runner.settle()
            lookups, STATEMENTS = 0, 0
            await table.play_out({p.id: by_level("normal", seed=p.id) for p in people})
            return table.presses, lookups, STATEMENTS
        finally:
            await runner.stop()


async def _lookup_times(db_url: str, n: int) -> dict[str, float]:
    from telegram_bot.platform.storage import create_engine, migrate, repo
    from telegram_bot.platform.storage.db import session_factory
    from telegram_bot.service.languages import Languages

    await migrate(db_url)
    engine = create_engine(db_url)
    sessions = session_factory(engine)
    try:
        async with sessions.begin() as s:
            await repo.get_or_create_user(s, 7, "x", None, "en")
        kept, read = Languages(sessions, remember=True), Languages(sessions, remember=False)
        times = {}
        t = time.perf_counter()
        for _ in range(n):
            await kept.get(7)
        times["remembered"] = time.perf_counter() - t
        async with sessions() as s:
            t = time.perf_counter()
            for _ in range(n):
                await read.get(7, s)
            times["read in the caller's transaction"] = time.perf_counter() - t
        t = time.perf_counter()
        for _ in range(n):
            await read.get(7)
        times["read in a session of its own"] = time.perf_counter() - t
        return {k: 1000 * v / n for k, v in times.items()}
    finally:
        await engine.dispose()


async def main_async(admin_url: str, lookups: int) -> None:
    event.listen(Engine, "before_cursor_execute", _count)
    with tempfile.TemporaryDirectory() as tmp:
        for remember in (True, False):
            async with fresh_database(admin_url, Path(tmp)) as url:
                plays, looked, statements = await _match(url, remember)
            mode = "remembered" if remember else "read at each lookup"
            print(
                f"{mode:20}: {plays} plays, {looked / plays:.2f} lookups and "
                f"{statements / plays:.1f} SQL statements per play"
            )
        async with fresh_database(admin_url, Path(tmp)) as url:
            per = await _lookup_times(url, lookups)
    for name, ms in per.items():
        print(f"one lookup, {name:34}: {ms:.3f} ms")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True, help="a PostgreSQL server (admin URL)")
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(main_async(args.database_url, args.lookups))


if __name__ == "__main__":
    main()
