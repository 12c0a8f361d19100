"""The games of every chat: lobby, moves, computer turns, timers and rendering.

One asyncio lock per game serializes its updates; the database is the truth. An
accepted action is committed (with the new move number) before anything is sent,
so a crash at any moment loses nothing: :meth:`GameService.resume_all` re-renders
every game in progress and re-arms its timer.

:class:`GameService` is composed of parts a reader can open one at a time:

- :mod:`.servicebase`: the shared state (locks, timers, background tasks), ``Answer``;
- :mod:`.lobby`: /newgame, seats, settings, start and cancel;
- :mod:`.moves`: a person's press applied, stored, and the match result recorded;
- :mod:`.clock`: turn timers, computer turns, takeover of a dead process's turns;
- :mod:`.views`: what each move shows, written into the outbox;
- :mod:`.recovery`: resume after a restart, a returning player, draining and shutdown.

This module keeps the users' and chats' languages and the simple queries.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from telegram_bot.chat.i18n import Translator, get_translator
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service import languages
from telegram_bot.service.base import Answer, ServiceConfig, _seat_of
from telegram_bot.service.clock import ClockMixin
from telegram_bot.service.lobby import BUSY, DEFAULT_SETTINGS, LobbyMixin, _human_seat
from telegram_bot.service.recovery import RecoveryMixin
from telegram_bot.service.table import MovesMixin
from telegram_bot.service.views import ViewsMixin

# The names callers import from here, wherever they now live (exits.py and handlers.py
# use the seat helpers too).
__all__ = [
    "BUSY",
    "DEFAULT_SETTINGS",
    "Answer",
    "GameService",
    "ServiceConfig",
    "_human_seat",
    "_seat_of",
]


class GameService(LobbyMixin, MovesMixin, ClockMixin, ViewsMixin, RecoveryMixin):
    """Every game change of this process (the parts are listed in the module's docstring)."""

    # ---------------------------------------------------------------- languages

    async def user_lang(self, user_id: int, s: AsyncSession | None = None) -> str:
        """The user's language (inside a transaction, pass its session ``s``)."""
        return await self.languages.get(user_id, s)

    def forget_lang(self, user_id: int) -> None:
        self.languages.forget(user_id)

    async def user_tr(self, user_id: int, s: AsyncSession | None = None) -> Translator:
        return get_translator(await self.user_lang(user_id, s))

    async def chat_tr(self, chat_id: int, s: AsyncSession | None = None) -> Translator:
        """The chat's translator (inside a transaction, pass its session ``s``).

        Remembered (a query less per move), unless several processes share the
        database: another one may change it (see forget_chat_lang)."""
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
        if not self.outbox.shared:
            self._chat_langs[chat_id] = chat.language
            if len(self._chat_langs) > languages.LANG_CACHE_SIZE:  # the oldest entry goes
                del self._chat_langs[next(iter(self._chat_langs))]
        return get_translator(chat.language)

    def forget_chat_lang(self, chat_id: int) -> None:
        """The chat's language was changed (by this process)."""
        self._chat_langs.pop(chat_id, None)

    # --------------------------------------------------------------- queries

    async def active_game(self, chat_id: int) -> Game | None:
        async with self.sessions() as s:
            return await repo.get_active_game(s, chat_id)

    async def game_for_user(self, user_id: int) -> Game | None:
        async with self.sessions() as s:
            return await repo.find_active_game_for_user(s, user_id)
