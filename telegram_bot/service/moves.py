"""Chats that move or close under a game: a group that became a supergroup, and a
forum topic closed or deleted under its table.

- **Migration.** Telegram gives the supergroup a new id, tells the bot with two service
  messages (``migrate_to_chat_id`` in the old group, ``migrate_from_chat_id`` in the
  new one) and refuses every later call naming the old id (``ChatMigrated``, from the
  outbox or from any handler). Whichever comes first moves the chat's games, settings,
  results, tallies and waiting messages in one transaction
  (:func:`~telegram_bot.platform.storage.chatmove.move_chat`); the others find nothing
  left to move. A running match goes on in the supergroup: its old messages there can
  no longer be edited, so its table (or lobby) is posted anew, and the buttons of the
  old one still work (they name the game, not the chat).
- **A topic gone.** The outbox's sends to a closed or deleted topic are refused
  (TOPIC_CLOSED, "message thread not found"). The game of that topic ends, as
  /cancel would end it, not counted for anyone. Why end rather than wait: a closed
  topic is the group's admins stopping that table (members can no longer write there,
  and the bot cannot post the hand results or the next table); the match would go on
  unseen, the turn timers playing for people who cannot follow it, and its players
  could join no other table meanwhile. Ended, every player's hand message says so in
  private, and a new /newgame in any open topic starts a fresh table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from core import Match
from telegram_bot.chat import render
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.chatmove import move_chat
from telegram_bot.platform.storage.models import ACTIVE_STATUSES, LOBBY, PLAYING, Game
from telegram_bot.service.exits import Exits
from telegram_bot.service.shared import Shared

__all__ = ["Moves"]

log = logging.getLogger(__name__)


class Moves:
    """Migrations and topics gone (see the module's text)."""

    def __init__(self, shared: Shared, *, exits: Exits) -> None:
        self._shared = shared
        self._exits = exits
        # One move at a time in this process (both service messages and a ChatMigrated
        # may come at once: the first moves, the others find nothing).
        self._moving = asyncio.Lock()

    async def migrate(self, old_id: int, new_id: int, title: str | None = None) -> bool:
        """Move the group ``old_id`` to the supergroup ``new_id``; False if it was
        moved already (then only messages decided for the old id meanwhile move)."""
        shared = self._shared
        async with self._moving:
            async with shared.sessions() as s:
                open_ids = await _open_games(s, old_id)
            async with contextlib.AsyncExitStack() as held:
                for game_id in sorted(open_ids):
                    await held.enter_async_context(shared.locks[game_id])
                async with shared.outbox.transaction() as s:
                    moved = await move_chat(s, old_id, new_id, title=title)
                    for game_id in moved or ():
                        game = await repo.get_game(s, game_id, lock=True)
                        if game is not None:
                            await self._post_anew(s, game)
            shared.translators.forget_chat(old_id)
            shared.translators.forget_chat(new_id)
            await shared.outbox.chat_moved(old_id, new_id, moved or ())
        if moved is None:
            return False
        log.info("chat %s moved to %s with %d open game(s)", old_id, new_id, len(moved))
        return True

    async def _post_anew(self, s: AsyncSession, game: Game) -> None:
        """The table (or lobby) of a moved game, posted in the supergroup."""
        shared = self._shared
        gtr = await shared.translators.chat(game.chat_id, s)
        if game.status == LOBBY or game.state is None:
            text = render.lobby_text(game, gtr)
            markup: Any = render.lobby_keyboard(game, gtr, shared.config.bot_username)
        else:
            match = Match.from_json(game.state)
            text = render.table_text(game, match, gtr)
            markup = render.table_keyboard(game, match, gtr)
        await shared.outbox.send(
            s,
            game.chat_id,
            text,
            markup,
            slot=repo.table_slot(game.id),
            thread=game.thread_id,
        )

    async def topic_gone(self, chat_id: int, thread_id: int) -> None:
        """The topic refuses the bot: its game ends, counted for no one."""
        shared = self._shared
        async with shared.sessions() as s:
            game = await repo.get_active_game(s, chat_id, thread_id)
        if game is None:
            return
        async with shared.locks[game.id]:
            async with shared.outbox.transaction() as s:
                game = await repo.get_game(s, game.id, lock=True)
                if game is None or game.status not in (LOBBY, PLAYING):
                    return
                await self._exits.abandon(s, game, "topic")
        self._exits.released(game)
        log.info("topic %s of chat %s is closed: game %s ended", thread_id, chat_id, game.id)


async def _open_games(s: AsyncSession, chat_id: int) -> list[str]:
    """The ids of the chat's games in the lobby or in progress (in any topic)."""
    result = await s.scalars(
        select(Game.id).where(Game.chat_id == chat_id, Game.status.in_(ACTIVE_STATUSES))
    )
    return list(result.all())
