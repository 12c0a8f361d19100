"""Which language each user reads, as the game service asks for it many times a move.

A process remembers the answers (at most :data:`LANG_CACHE_SIZE` users). Alone, it
hears of every change itself: the handler that changes a language forgets the entry.
Workers sharing one database hear of each other's changes from PostgreSQL: a trigger
on ``users`` (migration 0005) NOTIFYs :data:`CHANNEL` with the user's id when their
language changes, on commit, and :func:`listen` forgets the entry in every worker. A
worker remembers only while it listens: before, and after its listening connection
is lost, it reads the user's row each time. Reading each time costs about four
primary-key reads per play (``python -m benchmarks.languages`` measures it); a
version column would cost the same reads.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from telegram_bot.chat.i18n import language_from_telegram
from telegram_bot.platform.storage import repo

__all__ = ["CHANNEL", "LANG_CACHE_SIZE", "Languages", "listen"]

LANG_CACHE_SIZE = 4096
#: NOTIFY channel of language changes (payload: the user's id).
CHANNEL = "hokm_languages"


class Languages:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, remember: bool) -> None:
        self.sessions = sessions
        #: False when several processes share the database (see the module's text).
        self.remember = remember
        self._langs: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._langs)

    async def get(self, user_id: int, s: AsyncSession | None = None) -> str:
        """The user's language. Inside a transaction pass its session ``s``: a second
        connection opened while a SQLite write transaction waits would deadlock with
        the writers queued behind it once the pool runs dry."""
        lang = self._langs.get(user_id)
        if lang is not None:
            return lang
        if s is not None:
            user = await repo.get_user(s, user_id)
        else:
            async with self.sessions() as own:
                user = await repo.get_user(own, user_id)
        if user is None:  # not seen yet: no guess is remembered
            return "fa"
        lang = user.language or language_from_telegram(user.telegram_language)
        if self.remember:
            self._langs[user_id] = lang
            if len(self._langs) > LANG_CACHE_SIZE:  # the oldest entry goes
                del self._langs[next(iter(self._langs))]
        return lang

    def forget(self, user_id: int) -> None:
        self._langs.pop(user_id, None)

    def stop_remembering(self) -> None:
        self.remember = False
        self._langs.clear()


async def listen(languages: Languages, conn: Any) -> None:
    """Keep ``languages`` current through ``conn`` (an asyncpg connection that stays
    open): forget users whose language changed in any process, and remember answers
    only while listening."""

    def changed(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
        languages.forget(int(payload))

    conn.add_termination_listener(lambda _conn: languages.stop_remembering())
    await conn.add_listener(CHANNEL, changed)
    languages.remember = True
