"""Settings from the environment (12-factor: nothing is read from files)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from telegram_bot.platform.storage.db import database_url_from_env

__all__ = ["ENVIRONMENT", "Settings", "token_problem"]

#: Every variable the bot reads, with what it means: printed by ``--help`` and kept
#: in step with README's table and with the code by tests/bot/test_cli.py.
ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("BOT_TOKEN", "the bot's token from @BotFather (required)"),
    ("DATABASE_URL", "default SQLite hokm.sqlite3; postgresql://... for PostgreSQL"),
    ("HOKM_DATA_DIR", "the folder of the default SQLite file (the image: /data)"),
    ("HOKM_DB_POOL", "database connections this process keeps (PostgreSQL 15, SQLite 10+5)"),
    ("WEBHOOK_URL", "public HTTPS URL: webhook mode (long polling when unset)"),
    ("WEBHOOK_LISTEN", "address the webhook server listens on (default 0.0.0.0)"),
    ("WEBHOOK_PORT", "its port (default 8443)"),
    ("WEBHOOK_SECRET", "secret Telegram sends with every webhook delivery"),
    ("TELEGRAM_API_URL", "a self-hosted Bot API server (or the emulator)"),
    ("HOKM_COMPUTER_DELAY", "seconds before a computer plays (default 1)"),
    ("HOKM_HAND_PAUSE", "seconds of pause after a hand (default 2)"),
    (
        "HOKM_THINK_SECONDS",
        "hard computer's budget per move, 2-3 players; half with 4 (default 0.25)",
    ),
    ("HOKM_THINK_PROCESSES", "processes for its search (default one per core; 0: a thread)"),
    ("HOKM_WEBAPP_URL", "the Mini App's public https URL (unset: no Mini App)"),
    ("HOKM_WEBAPP_PORT", "the port the single process serves it on (default 8080)"),
    ("HOKM_WEBAPP_LISTEN", "the address it listens on (default 0.0.0.0)"),
    ("HOKM_WEBAPP_SHORT_NAME", "its short name from @BotFather's /newapp: a link in groups"),
    ("HOKM_ONLINE_WAIT", "/online: seconds in the queue before computers are offered (60)"),
    ("HOKM_ONLINE_INTERVAL", "/online: seconds between matching passes (1; 0: none here)"),
    ("HOKM_HTTP", "Bot API client: lean (default), aiohttp or httpx"),
    ("HOKM_SQLITE_THREADS", "1: SQLite calls in aiosqlite's threads"),
    ("HOKM_RATE_LIMIT", "0: no client-side pacing of Bot API calls"),
    ("HOKM_IDLE_HOURS", "games idle this long end as abandoned (default 24; 0: never)"),
    ("HOKM_SWEEP_SECONDS", "how often idle games and waiting turns are looked for (default 5)"),
    ("HOKM_DEAL_SEED", "tests and demos only: reproducible deals"),
    ("HOKM_PROGRESS_FILE", "tests only: the last update handled, written when idle"),
    ("HOKM_LOCALES_DIR", "where the catalogs are (default locales/ of the checkout)"),
    ("HOKM_IN_CONTAINER", "set by the image: messages give docker commands"),
    ("HOKM_SHARED", "set for cluster workers: one of several processes on PostgreSQL"),
    ("HOKM_DEBUG", "cluster roles: log the bot's own steps at DEBUG"),
)

#: What a token looks like: the bot's id, a colon, a secret of letters, digits, - and _.
#: Telegram's secrets are 35 characters; fakes for an emulator may be shorter.
_TOKEN_SHAPE = re.compile(r"^\d+:[A-Za-z0-9_-]+$")
_TELEGRAM_SECRET_MIN = 30


def token_problem(token: str, api_url: str | None) -> str | None:
    """Why ``token`` cannot be a bot token, or None: checked before any network call,
    so a typo is reported as one, not as an unreachable Telegram."""
    if not _TOKEN_SHAPE.match(token):
        return "BOT_TOKEN is malformed: a token looks like 123456789:AA... (digits, a colon, the secret)"
    secret = token.partition(":")[2]
    if api_url is None and len(secret) < _TELEGRAM_SECRET_MIN:
        return (
            f"BOT_TOKEN is malformed: its secret after the colon has {len(secret)} characters, "
            "Telegram's have 35; copy the whole token @BotFather gave you"
        )
    return None


@dataclass(frozen=True)
class Settings:
    token: str
    database_url: str
    #: A self-hosted Bot API server (or the tests' emulator), e.g. http://127.0.0.1:8081
    api_url: str | None = None
    #: Public HTTPS URL for webhook mode; long polling when unset.
    webhook_url: str | None = None
    webhook_listen: str = "0.0.0.0"
    webhook_port: int = 8443
    webhook_secret: str | None = None
    #: Respect Telegram's flood limits in the client (30/s overall, 20/min per group).
    rate_limit: bool = True
    computer_delay: float = 1.0
    hand_pause: float = 2.0
    think_seconds: float = 0.25
    #: Worker processes for the hard computer player's search (None: one per core;
    #: 0: search in a thread of the bot's process).
    think_processes: int | None = None
    #: Tests and demos only: reproducible deals (see ServiceConfig.deal_seed).
    deal_seed: int | None = None
    #: Tests only: where the update processor writes its progress when it goes idle
    #: (telegram_bot.runtime.updates), for a rig that runs the bot in another process.
    progress_file: str | None = None
    #: A lobby or match with no action for this long ends as abandoned (0: never).
    idle_hours: float = 24.0
    #: How often the sweeper looks for idle games and turns to ping (0: it does not run).
    sweep_seconds: float = 5.0
    #: One of several worker processes on one PostgreSQL database (telegram_bot.runtime.cluster).
    shared: bool = False
    #: The Bot API client: "aiohttp", "lean" or "httpx" (telegram_bot.platform.http.KINDS).
    http: str = "lean"
    #: Play with anyone: seconds in the queue before the computers are offered
    #: (HOKM_ONLINE_WAIT), and between matching passes (HOKM_ONLINE_INTERVAL; 0: none).
    online_wait: float = 60.0
    online_interval: float = 1.0
    #: The Mini App: its public https URL (None: no Mini App), where this process
    #: serves it, and its short name from BotFather's /newapp (the group's link).
    webapp_url: str | None = None
    webapp_listen: str = "0.0.0.0"
    webapp_port: int = 8080
    webapp_short_name: str | None = None
    #: Database connections of the game service's pool (HOKM_DB_POOL; None: the
    #: default of telegram_bot.platform.storage.db.create_engine).
    db_pool: int | None = None

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            token=env.get("BOT_TOKEN", "").strip(),
            database_url=database_url_from_env(dict(env)),
            api_url=env.get("TELEGRAM_API_URL") or None,
            webhook_url=env.get("WEBHOOK_URL") or None,
            webhook_listen=env.get("WEBHOOK_LISTEN", "0.0.0.0"),
            webhook_port=int(env.get("WEBHOOK_PORT", "8443")),
            webhook_secret=env.get("WEBHOOK_SECRET") or None,
            rate_limit=env.get("HOKM_RATE_LIMIT", "1") != "0",
            computer_delay=float(env.get("HOKM_COMPUTER_DELAY", "1.0")),
            hand_pause=float(env.get("HOKM_HAND_PAUSE", "2.0")),
            think_seconds=float(env.get("HOKM_THINK_SECONDS", "0.25")),
            think_processes=(
                int(env["HOKM_THINK_PROCESSES"]) if env.get("HOKM_THINK_PROCESSES") else None
            ),
            deal_seed=int(env["HOKM_DEAL_SEED"]) if env.get("HOKM_DEAL_SEED") else None,
            progress_file=env.get("HOKM_PROGRESS_FILE") or None,
            idle_hours=float(env.get("HOKM_IDLE_HOURS", "24")),
            sweep_seconds=float(env.get("HOKM_SWEEP_SECONDS", "5")),
            shared=env.get("HOKM_SHARED", "0") == "1",
            http=env.get("HOKM_HTTP", "lean").strip().lower() or "lean",
            online_wait=float(env.get("HOKM_ONLINE_WAIT", "60")),
            online_interval=float(env.get("HOKM_ONLINE_INTERVAL", "1")),
            webapp_url=env.get("HOKM_WEBAPP_URL", "").strip() or None,
            webapp_listen=env.get("HOKM_WEBAPP_LISTEN", "0.0.0.0"),
            webapp_port=int(env.get("HOKM_WEBAPP_PORT", "8080")),
            webapp_short_name=env.get("HOKM_WEBAPP_SHORT_NAME", "").strip() or None,
            db_pool=_positive_int(env, "HOKM_DB_POOL"),
        )

    def api_base_urls(self) -> tuple[str, str] | None:
        """(base_url, base_file_url) for python-telegram-bot, or None for Telegram's."""
        if not self.api_url:
            return None
        root = self.api_url.rstrip("/")
        if root.endswith("/bot"):
            root = root[: -len("/bot")]
        return f"{root}/bot", f"{root}/file/bot"


def _positive_int(env: dict[str, str] | os._Environ[str], name: str) -> int | None:
    """An optional whole number of at least 1 (unset or empty: None)."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    value = int(raw)
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {raw!r}")
    return value
