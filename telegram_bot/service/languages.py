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

from telegram_bot.chat.i18n import Translator, get_translator, language_from_telegram
from telegram_bot.platform.storage import repo

__all__ = ["CHANNEL", "LANG_CACHE_SIZE", "Languages", "Translators", "listen"]

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


class Translators:
    """The translator for each user and each chat, as every part of the service asks.

    Users' languages come from :class:`Languages`; chats' are remembered here (a query
    less per move), unless several processes share the database: another one may
    change them (see :meth:`forget_chat`)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, shared: bool) -> None:
        self.sessions = sessions
        self.shared = shared
        # Per process, unless workers share the database (see the module's text).
        self.languages = Languages(sessions, remember=not shared)
        self._chat_langs: dict[int, str] = {}

    def sizes(self) -> dict[str, int]:
        return {"langs": len(self.languages), "chat_langs": len(self._chat_langs)}

    async def user_lang(self, user_id: int, s: AsyncSession | None = None) -> str:
        """The user's language (inside a transaction, pass its session ``s``)."""
        return await self.languages.get(user_id, s)

    def forget_user(self, user_id: int) -> None:
        self.languages.forget(user_id)

    async def user(self, user_id: int, s: AsyncSession | None = None) -> Translator:
        return get_translator(await self.user_lang(user_id, s))

    async def chat(self, chat_id: int, s: AsyncSession | None = None) -> Translator:
        """The chat's translator (inside a transaction, pass its session ``s``)."""
        lang = self._chat_langs.get(chat_id)
        if lang is not None:
            return get_translator(lang)
        if s is not None:
            chat = await repo.get_chat(s, chat_id)
        else:
            async with self.sessions() as own:
                chat = await repo.get_chat(own, chat_id)
        if chat is None:
            return get_translator("fa")
        if not self.shared:
            self._chat_langs[chat_id] = chat.language
            if len(self._chat_langs) > LANG_CACHE_SIZE:  # the oldest entry goes
                del self._chat_langs[next(iter(self._chat_langs))]
        return get_translator(chat.language)

    def forget_chat(self, chat_id: int) -> None:
        """The chat's language was changed (by this process)."""
        self._chat_langs.pop(chat_id, None)


async def listen(languages: Languages, conn: Any) -> None:
    """Keep ``languages`` current through ``conn`` (an asyncpg connection that stays
    open): forget users whose language changed in any process, and remember answers
    only while listening."""

    def changed(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
        languages.forget(int(payload))

    conn.add_termination_listener(lambda _conn: languages.stop_remembering())
    await conn.add_listener(CHANNEL, changed)
    languages.remember = True
