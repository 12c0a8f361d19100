"""What every part of the service is given: the platform's handles (the database, the
outbox, the thinkers), the settings, the per-game locks, the background tasks and the
translators. None of it is a part's own state: the parts' state stays in the parts."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.platform import live as live_bus
from telegram_bot.platform.live import LiveBus
from telegram_bot.platform.locks import KeyedLocks
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.thinking import Thinkers
from telegram_bot.service.config import ServiceConfig
from telegram_bot.service.languages import Translators
from telegram_bot.service.tasks import Background

__all__ = ["Shared"]


@dataclass(slots=True)
class Shared:
    sessions: async_sessionmaker[AsyncSession]
    outbox: Outbox
    config: ServiceConfig
    #: One lock per game, held while it changes (kept only while held or awaited).
    locks: KeyedLocks
    background: Background
    translators: Translators
    #: Where searching computer players think (None: in a thread of this process).
    thinkers: Thinkers | None = None
    #: Where committed moves are published for open pages (the Mini App); None: nowhere.
    live: LiveBus | None = None

    async def announce(self, s: AsyncSession, game_id: str, move: int) -> None:
        """A move stored in ``s``'s transaction, for the Mini App's open pages (see
        :func:`telegram_bot.platform.live.announce`). Without a Mini App (no bus here,
        no URL for another process's page) nothing: the bot is as it was."""
        if self.live is None and not self.config.webapp_url:
            return
        await live_bus.announce(s, self.live, game_id, move)
