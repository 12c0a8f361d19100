"""Build and run the bot: python-telegram-bot's Application wired to the game service."""

from __future__ import annotations

import logging
import sys
from typing import Any

from telegram import BotCommand, Update
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder

from . import handlers
from .config import Settings
from .outbox import Outbox
from .service import GameService, ServiceConfig
from .storage.db import create_engine, migrate, session_factory
from .updates import TrackingUpdateProcessor

__all__ = ["build_application", "main"]

log = logging.getLogger(__name__)

NO_TOKEN = """\
BOT_TOKEN is not set.

To get a token: open Telegram, talk to @BotFather, send /newbot and follow the
steps; it answers with a token like 123456789:AA... Then run

    BOT_TOKEN=123456789:AA... .venv/bin/python -m telegram_bot

For inline play from the group, also send /setinline and /setinlinefeedback (100%)
to @BotFather. To try the bot without Telegram: .venv/bin/python -m telegram_bot.demo
"""

COMMANDS = [
    ("newgame", "New game in this group · بازی جدید"),
    ("play", "Solo match against the computer · بازی تک‌نفره"),
    ("score", "Running score · امتیازها"),
    ("stats", "Leaderboard · جدول برترین‌ها"),
    ("language", "Language · زبان"),
    ("back", "I'm back · برگشتم"),
    ("help", "How to play · راهنما"),
]


def build_application(settings: Settings) -> Application[Any, Any, Any, Any, Any, Any]:
    builder = (
        ApplicationBuilder()
        .token(settings.token)
        .concurrent_updates(TrackingUpdateProcessor())
        # The outbox edits several messages at once (table and hands); PTB's default
        # pool of one connection would turn that into pool time-outs under load.
        .connection_pool_size(32)
        .pool_timeout(10.0)
    )
    urls = settings.api_base_urls()
    if urls is not None:
        builder = builder.base_url(urls[0]).base_file_url(urls[1])
    if settings.rate_limit:
        # Waits rather than fails when we would exceed Telegram's limits; a 429 that
        # still comes back is handled by the outbox, per message.
        # Leaky buckets allow their capacity in a burst on top of their rate, so they
        # are sized for sliding windows: a group's bucket of 4 refilled at 4 per 16 s
        # never passes 4 + 15 = 19 calls in any 60 s, and the overall bucket of 10
        # refilled at 10 per 0.5 s never passes 10 + 20 = 30 calls in any second.
        builder = builder.rate_limiter(
            AIORateLimiter(
                overall_max_rate=10,
                overall_time_period=0.5,
                group_max_rate=4,
                group_time_period=16,
                max_retries=0,
            )
        )

    async def post_init(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        await migrate(settings.database_url)
        engine = create_engine(settings.database_url)
        app.bot_data["engine"] = engine
        service = GameService(
            session_factory(engine),
            Outbox(app.bot),
            ServiceConfig(
                bot_username=app.bot.username,
                computer_delay=settings.computer_delay,
                hand_pause=settings.hand_pause,
                think_seconds=settings.think_seconds,
                deal_seed=settings.deal_seed,
            ),
        )
        app.bot_data["service"] = service
        try:
            await app.bot.set_my_commands([BotCommand(c, d) for c, d in COMMANDS])
        except Exception:  # cosmetic; never block start-up on it
            log.warning("could not set the command list", exc_info=True)
        resumed = await service.resume_all()
        log.info("resumed %d game(s)", resumed)

    async def post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        service: GameService | None = app.bot_data.get("service")
        if service is not None:
            await service.shutdown()

    async def post_shutdown(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        engine = app.bot_data.get("engine")
        if engine is not None:
            await engine.dispose()

    builder = builder.post_init(post_init).post_stop(post_stop).post_shutdown(post_shutdown)
    app = builder.build()
    handlers.register(app)
    return app


def main() -> int:
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    settings = Settings.from_env()
    if not settings.token:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    app = build_application(settings)
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
    return 0
