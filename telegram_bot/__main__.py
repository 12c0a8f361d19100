"""python -m telegram_bot [run | migrate | ingress | worker | all]: the bot's one front.

With no command it runs the bot (``run``), so ``BOT_TOKEN=... python -m telegram_bot``
stays the way to start it. The cluster's roles are also reachable as
``python -m telegram_bot.runtime.cluster ROLE``; docker-compose.yml uses this front
(see the cluster module for why).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from telegram_bot.runtime import app, cluster
from telegram_bot.runtime.config import Settings
from telegram_bot.runtime.startup import EXIT_CODES, SETTINGS, add_roles, guarded, safe_url

DESCRIPTION = """\
Hokm, the Persian trick-taking card game, as a Telegram bot.

One process (the default, 'run'): long polling, or a webhook when WEBHOOK_URL is set;
SQLite unless DATABASE_URL says otherwise. Several processes on PostgreSQL: the
'ingress' and 'worker' roles (or 'all'). No token? Watch a match against a local
Bot API emulator: python -m testkit.demo"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m telegram_bot",
        description=DESCRIPTION,
        epilog=f"{SETTINGS}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "run",
        help="run the bot in one process (the default)",
        description="Runs the bot in one process: long polling, or a webhook server when\n"
        "WEBHOOK_URL is set. Migrates the database first. Stops on SIGTERM or Ctrl-C\n"
        "after sending what is queued.",
        epilog=f"{SETTINGS}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands.add_parser(
        "migrate",
        help="bring the database to the newest schema, then exit",
        description="Runs the Alembic migrations up to head on DATABASE_URL (or the default\n"
        "SQLite file) and exits. Every role also migrates on start; this is for\n"
        "upgrades that migrate before any new process starts.",
        epilog=f"{SETTINGS}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_roles(commands, ["ingress", "worker", "all"])
    return parser


def migrate() -> int:
    from telegram_bot.platform.storage.db import migrate as run_migrations

    settings = Settings.from_env()

    def call() -> None:
        asyncio.run(run_migrations(settings.database_url))
        print(f"{safe_url(settings.database_url)}: migrated to the newest schema")

    return guarded(call, settings)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in (None, "run"):
        return app.main()
    if args.command == "migrate":
        return migrate()
    return cluster.run_role(args)


if __name__ == "__main__":
    sys.exit(main())
