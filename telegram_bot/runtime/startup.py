"""What every command of the bot shares at start-up: the exit codes, the help texts,
and turning a start-up failure into one line on stderr.

A process that cannot start (no token, a malformed one, Telegram or the database out
of reach) says why in one line and exits with a documented code, instead of a
traceback: under ``restart: unless-stopped`` a traceback would repeat forever, and a
newcomer cannot tell a typo from an outage in one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from telegram.error import InvalidToken, NetworkError

from telegram_bot.runtime.config import ENVIRONMENT, Settings, token_problem

__all__ = [
    "EXIT_CODES",
    "EXIT_FAILED",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "ROLES",
    "SETTINGS",
    "ConfigError",
    "Unavailable",
    "add_roles",
    "explain",
    "guarded",
    "require_token",
    "safe_url",
    "say",
]

EXIT_FAILED = 1
#: Usage or configuration: a bad option, no token or a malformed one, a token
#: Telegram refused, SQLite where PostgreSQL is needed.
EXIT_USAGE = 2
#: Telegram, the database or the webhook's port could not be reached.
EXIT_UNAVAILABLE = 3

EXIT_CODES = f"""\
exit status:
  0  stopped (SIGTERM or Ctrl-C) after finishing its work
  {EXIT_FAILED}  a bug (with its traceback), or a cluster child killed by a signal; 'all'
     exits with the status of the child that failed
  {EXIT_USAGE}  usage or configuration: a bad option, BOT_TOKEN missing, malformed or
     refused by Telegram, PostgreSQL needed for the cluster roles
  {EXIT_UNAVAILABLE}  Telegram, the database or the webhook port could not be reached"""

SETTINGS = "settings (environment variables):\n" + "\n".join(
    f"  {name:<21} {meaning}" for name, meaning in ENVIRONMENT
)

BAD_TOKEN = (
    "Telegram refused BOT_TOKEN (401 Unauthorized): copy the token @BotFather gave you "
    "(/mybots, then API Token), e.g. 123456789:AA..."
)
UNREACHABLE = "Could not reach the Telegram Bot API at {where}: {error}"
NO_DATABASE = "Could not reach the database at {where}: {error}"

#: The roles of several processes (telegram_bot.runtime.cluster), with their help.
ROLES: dict[str, tuple[str, str]] = {
    "ingress": (
        "receive Telegram's webhook and store each update in PostgreSQL",
        "Receives Telegram's webhook on WEBHOOK_LISTEN:WEBHOOK_PORT (plain HTTP, behind\n"
        "a reverse proxy holding the certificate), registers WEBHOOK_URL with Telegram\n"
        "(setWebhook, WEBHOOK_SECRET) and stores each update in PostgreSQL for the\n"
        "workers. One is enough; it plays no game. Needs DATABASE_URL=postgresql://...",
    ),
    "worker": (
        "play the stored updates (run as many as the load needs)",
        "Takes updates from PostgreSQL and plays them: lobby, moves, timers, computer\n"
        "turns, messages to Telegram. Run several; one that dies loses nothing (another\n"
        "takes its updates and turns over). Needs DATABASE_URL=postgresql://...",
    ),
    "all": (
        "the ingress and --workers workers as child processes",
        "Starts the ingress and --workers workers as child processes and stops them\n"
        "together: on SIGTERM, or when one of them exits. Exits with the status of a\n"
        "child that failed (non-zero), 0 when stopped. Needs DATABASE_URL=postgresql://...",
    ),
}


class ConfigError(Exception):
    """A setting that cannot work (exit 2)."""


class Unavailable(Exception):
    """Something the process needs is out of reach (exit 3)."""


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def add_roles(subparsers: argparse._SubParsersAction, roles: list[str]) -> None:  # type: ignore[type-arg]
    """The cluster's roles as subcommands, each with its own --help."""
    for role in roles:
        summary, description = ROLES[role]
        sub = subparsers.add_parser(
            role,
            help=summary,
            description=description,
            epilog=f"{SETTINGS}\n\n{EXIT_CODES}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if role == "all":
            sub.add_argument(
                "--workers", type=int, default=2, metavar="N", help="how many workers (default 2)"
            )


def require_token(settings: Settings) -> None:
    """Raise ConfigError for a missing or malformed token, before any network call."""
    if not settings.token:
        raise ConfigError("BOT_TOKEN is not set: get a token from @BotFather (see README)")
    problem = token_problem(settings.token, settings.api_url)
    if problem:
        raise ConfigError(problem)


def safe_url(url: str) -> str:
    """A database URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: say so rather than echo it
        return "(unparsable DATABASE_URL)"


def first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def explain(error: BaseException, settings: Settings) -> tuple[int, str] | None:
    """(exit status, one line) for a failure a user can act on; None for a bug."""
    if isinstance(error, ConfigError):
        return EXIT_USAGE, str(error)
    if isinstance(error, InvalidToken):
        return EXIT_USAGE, BAD_TOKEN
    if isinstance(error, NetworkError):  # TimedOut is one
        where = settings.api_url or "https://api.telegram.org"
        return EXIT_UNAVAILABLE, UNREACHABLE.format(where=where, error=first_line(error))
    if isinstance(error, Unavailable):
        return EXIT_UNAVAILABLE, str(error)
    if isinstance(error, DBAPIError | OSError) or _is_asyncpg_error(error):
        where = safe_url(settings.database_url)
        return EXIT_UNAVAILABLE, NO_DATABASE.format(where=where, error=first_line(error))
    return None


def _is_asyncpg_error(error: BaseException) -> bool:
    module = type(error).__module__ or ""
    return module.startswith("asyncpg")


def guarded(call: Callable[[], object], settings: Settings) -> int:
    """Call ``call``; a failure a user can act on becomes one line on stderr and its
    exit status (anything else is a bug, and keeps its traceback)."""
    try:
        call()
    except Exception as error:
        known = explain(error, settings)
        if known is None:
            raise
        say(known[1])
        return known[0]
    return 0
