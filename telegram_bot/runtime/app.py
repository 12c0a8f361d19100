"""Build and run the bot: python-telegram-bot's Application wired to the game service."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from telegram import Bot, BotCommand, Update
from telegram.error import TelegramError
from telegram.ext import Application, ApplicationBuilder

from telegram_bot import handlers
from telegram_bot.chat import guide
from telegram_bot.chat.i18n import DEFAULT_LANGUAGE, LANGUAGES, get_translator
from telegram_bot.platform.http import make_request
from telegram_bot.platform.live import LocalBus, OpenPages, PgBus
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.ratelimit import PacingRateLimiter, SharedRateLimiter
from telegram_bot.platform.storage.db import create_engine, migrate, session_factory
from telegram_bot.platform.thinking import Thinkers
from telegram_bot.runtime.config import Settings
from telegram_bot.runtime.startup import EXIT_USAGE, guarded, require_token
from telegram_bot.runtime.updates import TrackingUpdateProcessor
from telegram_bot.runtime.webapp import serve
from telegram_bot.service.config import ServiceConfig
from telegram_bot.service.games import GameService
from telegram_bot.service.sweeper import Sweeper

__all__ = ["build_application", "close_application", "main", "open_application"]

log = logging.getLogger(__name__)

NO_TOKEN = """\
BOT_TOKEN is not set.

To get a token: open Telegram, talk to @BotFather, send /newbot and follow the
steps; it answers with a token like 123456789:AA... Then run

    {run}

For inline play from the group, also send /setinline and /setinlinefeedback (100%)
to @BotFather. To try the bot without Telegram: {demo}
"""
# The commands as the reader started the bot: from a checkout, or from the image
# (whose Dockerfile sets HOKM_IN_CONTAINER=1), where there is no .venv to run.
CHECKOUT_COMMANDS = {
    "run": "BOT_TOKEN=123456789:AA... .venv/bin/python -m telegram_bot",
    "demo": ".venv/bin/python -m testkit.demo",
}
CONTAINER_COMMANDS = {
    "run": "docker run -d --name hokm -e BOT_TOKEN=123456789:AA... -v hokm-data:/data hokm",
    "demo": "docker run --rm hokm python -m testkit.demo",
}


def no_token_message(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    in_container = env.get("HOKM_IN_CONTAINER", "") not in ("", "0")
    return NO_TOKEN.format(**(CONTAINER_COMMANDS if in_container else CHECKOUT_COMMANDS))


def build_application(settings: Settings) -> Application[Any, Any, Any, Any, Any, Any]:
    builder = (
        ApplicationBuilder()
        .token(settings.token)
        .concurrent_updates(TrackingUpdateProcessor(progress_file=settings.progress_file))
        # The outbox edits several messages at once (table and hands); PTB's default
        # pool of one connection would turn that into pool time-outs under load.
        .request(make_request(settings.http, connection_pool_size=32, pool_timeout=10.0))
        # Long polling on a connection of its own, as python-telegram-bot does.
        .get_updates_request(make_request(settings.http, updates=True, connection_pool_size=1))
    )
    urls = settings.api_base_urls()
    if urls is not None:
        builder = builder.base_url(urls[0]).base_file_url(urls[1])
    if settings.rate_limit and settings.shared:
        # Several workers of one bot: one budget for all of them, in PostgreSQL.
        builder = builder.rate_limiter(SharedRateLimiter(settings.database_url, settings.token))
    elif settings.rate_limit:
        # Waits rather than fails when we would exceed Telegram's limits; a 429 that
        # still comes back is handled by the outbox, per message.
        # Leaky buckets allow their capacity in a burst on top of their rate, so they
        # are sized for sliding windows: a group's bucket of 4 refilled at 4 per 16 s
        # never passes 4 + 15 = 19 calls in any 60 s, and the overall bucket of 10
        # refilled at 10 per 0.5 s never passes 10 + 20 = 30 calls in any second.
        builder = builder.rate_limiter(
            PacingRateLimiter(
                overall_max_rate=10,
                overall_time_period=0.5,
                group_max_rate=4,
                group_time_period=16,
            )
        )

    async def post_init(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        await migrate(settings.database_url)
        # HOKM_DB_POOL: the connections kept (the default: create_engine's); the
        # cluster's ingress serves every page and plays their moves on this pool.
        sizing = {} if settings.db_pool is None else {"pool_size": settings.db_pool}
        engine = create_engine(settings.database_url, **sizing)
        app.bot_data["engine"] = engine
        sessions = session_factory(engine)
        # The Mini App (HOKM_WEBAPP_URL), served by the single process: moves published
        # on its bus, its open pages known to the service. A cluster's workers only
        # NOTIFY their moves in PostgreSQL; the ingress serves the page.
        # (app.bot_data["serve_webapp"]: the ingress, which serves it with a PgBus.)
        serving = bool(settings.webapp_url) and (
            not settings.shared or bool(app.bot_data.get("serve_webapp"))
        )
        bus: LocalBus | PgBus | None = None
        if serving:
            bus = PgBus(settings.database_url) if settings.shared else LocalBus()
            await bus.start()
        # Who has a page open: written by the process serving the pages, read by
        # every process's service (in the database, so a cluster's workers see it).
        pages = OpenPages(sessions) if serving else None
        if pages is not None:
            await pages.start()
        service = GameService(
            sessions,
            Outbox(app.bot, sessions, shared=settings.shared),
            ServiceConfig(
                bot_username=app.bot.username,
                computer_delay=settings.computer_delay,
                hand_pause=settings.hand_pause,
                think_seconds=settings.think_seconds,
                deal_seed=settings.deal_seed,
                online_wait=settings.online_wait,
                online_interval=settings.online_interval,
                webapp_url=settings.webapp_url,
                webapp_short_name=settings.webapp_short_name,
            ),
            thinkers=Thinkers(settings.think_processes),
            live=bus,
        )
        app.bot_data["service"] = service
        if bus is not None:
            app.bot_data["live_bus"] = bus
            app.bot_data["open_pages"] = pages
            app.bot_data["webapp"] = await serve(settings, sessions, service, bus, pages)
        await set_command_menus(app.bot)
        resumed = await service.resume_all()
        service.start_clock()
        log.info("resumed %d game(s)", resumed)
        sweeper = Sweeper(service, idle_hours=settings.idle_hours, interval=settings.sweep_seconds)
        app.bot_data["sweeper"] = sweeper
        sweeper.start()
        service.online.start()

    async def post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        webapp = app.bot_data.pop("webapp", None)
        if webapp is not None:
            await webapp.cleanup()
        pages = app.bot_data.pop("open_pages", None)
        if pages is not None:
            await pages.close()
        bus = app.bot_data.pop("live_bus", None)
        if bus is not None:
            await bus.close()
        sweeper: Sweeper | None = app.bot_data.get("sweeper")
        if sweeper is not None:
            await sweeper.stop()
        service: GameService | None = app.bot_data.get("service")
        if service is not None:
            await service.online.stop()
            await service.shutdown()

    async def post_shutdown(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        engine = app.bot_data.get("engine")
        if engine is not None:
            await engine.dispose()

    builder = builder.post_init(post_init).post_stop(post_stop).post_shutdown(post_shutdown)
    app = builder.build()
    handlers.register(app)
    return app


async def set_command_menus(bot: Any) -> None:
    """One menu per language (Telegram picks by the user's app language), and the
    Persian one for everyone else."""
    menus = [(code, get_translator(code)) for code in LANGUAGES]
    menus.append(("", get_translator(DEFAULT_LANGUAGE)))
    for code, tr in menus:
        commands = [BotCommand(c, d) for c, d in guide.command_menu(tr)]
        try:
            await bot.set_my_commands(commands, language_code=code or None)
        except TelegramError:  # cosmetic; never block start-up on it
            log.warning("could not set the %r command list", code, exc_info=True)


async def open_application(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Initialize and run post_init, as ``run_polling`` does (for the callers that drive
    the Application themselves: the cluster's workers, the tests' runner)."""
    await app.initialize()
    if app.post_init:
        await app.post_init(app)


async def close_application(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Stop and shut down, with post_stop and post_shutdown, as ``run_polling`` does."""
    await app.stop()
    if app.post_stop:
        await app.post_stop(app)
    await app.shutdown()
    if app.post_shutdown:
        await app.post_shutdown(app)


def main() -> int:
    """The bot in one process (polling, or webhook with WEBHOOK_URL): the ``run`` role."""
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    settings = Settings.from_env()
    if not settings.token:
        print(no_token_message(), file=sys.stderr)
        return EXIT_USAGE

    def start() -> None:
        require_token(settings)  # a typo is refused here, before any network call
        # Asked once before python-telegram-bot's start-up loop, which would log a
        # traceback for a wrong token or an unreachable server.
        asyncio.run(check_token(settings))
        app = build_application(settings)
        tune_gc()
        run(app, settings)

    return guarded(start, settings)


def tune_gc() -> None:
    """For a process that runs the bot (not the tests'): what start-up made (modules,
    python-telegram-bot, SQLAlchemy's mappers) stays for good, so it is kept out of
    the collector's scans; and the young objects are collected every 10,000
    allocations rather than 700 (a press allocates thousands, nearly all gone by the
    end of it): about half the collector's time under load."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


async def check_token(settings: Settings) -> None:
    """getMe with the configured token: raises InvalidToken or NetworkError."""
    urls = settings.api_base_urls()
    kwargs = {"base_url": urls[0], "base_file_url": urls[1]} if urls else {}
    async with Bot(settings.token, **kwargs):  # initialize() calls getMe
        pass


def run(app: Application[Any, Any, Any, Any, Any, Any], settings: Settings) -> None:
    if settings.webhook_url:
        app.run_webhook(
            listen=settings.webhook_listen,
            port=settings.webhook_port,
            url_path=settings.token,
            webhook_url=f"{settings.webhook_url.rstrip('/')}/{settings.token}",
            secret_token=settings.webhook_secret,
            allowed_updates=Update.ALL_TYPES,
        )
    else:
        app.run_polling(allowed_updates=Update.ALL_TYPES)
