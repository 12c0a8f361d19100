"""The Mini App served by the single process (``HOKM_WEBAPP_URL``, ``HOKM_WEBAPP_PORT``).

The page reads the games' rows (:class:`~telegram_bot.web.games.StoredGames`), plays
through the service's own path (``GameService.web_act``: move-number check, one
transaction, the outbox), and follows the moves on this process's live bus, on which
the service publishes every committed move. Its event streams keep who has a table
open in the database (:class:`~telegram_bot.platform.live.OpenPages`), where every
process's service reads it. Without a URL
none of this runs and the bot is as before.
"""

from __future__ import annotations

import logging

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform.live import LiveBus, OpenPages
from telegram_bot.runtime.config import Settings
from telegram_bot.runtime.startup import Unavailable
from telegram_bot.service.games import GameService
from telegram_bot.web.app import WebConfig, create_app, start
from telegram_bot.web.games import StoredGames, service_actor

__all__ = ["serve"]

log = logging.getLogger(__name__)


async def serve(
    settings: Settings,
    sessions: async_sessionmaker[AsyncSession],
    service: GameService,
    bus: LiveBus,
    pages: OpenPages | None,
) -> web.AppRunner:
    """Serve the Mini App on ``HOKM_WEBAPP_LISTEN:HOKM_WEBAPP_PORT``; ``cleanup()`` stops it."""
    games = StoredGames(sessions, bus, service_actor(service.web_act), service.page_closed)
    app = create_app(games, WebConfig(bot_token=settings.token), pages)
    try:
        runner = await start(app, settings.webapp_listen, settings.webapp_port)
    except OSError as error:
        where = f"{settings.webapp_listen}:{settings.webapp_port}"
        raise Unavailable(f"Could not listen on {where}: {error.strerror or error}") from None
    log.info(
        "Mini App on %s:%s (%s)", settings.webapp_listen, settings.webapp_port, settings.webapp_url
    )
    return runner
