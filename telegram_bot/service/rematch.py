"""A rematch: a new game with a finished match's seats and settings.

Pressed on the table message of a finished match by one of its players. In a group
it opens a lobby already seated as before (everyone can still leave; the presser
starts it); in a private chat, where the match was a solo /play, it starts at once.
Someone who meanwhile joined another game is left out, and their seat is empty.
"""

from __future__ import annotations

from typing import Any

from telegram_bot.chat import render
from telegram_bot.platform.storage import repo
from telegram_bot.service.answer import Answer
from telegram_bot.service.lobby import Lobby
from telegram_bot.service.shared import Shared

__all__ = ["Rematch"]


class Rematch:
    def __init__(
        self,
        shared: Shared,
        *,
        lobby: Lobby,
    ) -> None:
        self._shared = shared
        self._lobby = lobby

    async def press(self, game_id: str, user: Any) -> Answer:
        """The rematch button of finished game ``game_id``, pressed by ``user``."""
        tr = await self._shared.translators.user(user.id)
        async with self._shared.sessions() as s:
            old = await repo.get_game(s, game_id)
            chat = await repo.get_chat(s, old.chat_id) if old is not None else None
            active = (
                await repo.get_active_game(s, old.chat_id, old.thread_id)
                if old is not None
                else None
            )
        if old is None or chat is None or old.status != "finished":
            return Answer(tr("This button belongs to an earlier game"), alert=True)
        if not any(seat.get("user_id") == user.id for seat in old.seats):
            return Answer(tr("You are not playing in this game"), alert=True)
        if active is not None:
            return Answer(tr("A new game is already open in this chat"), alert=True)
        error = await self._lobby.open(chat.id, chat.type, chat.title, user, old.thread_id)
        if error:
            return Answer(error, alert=True)
        async with self._shared.sessions() as s:
            game = await repo.get_active_game(s, chat.id, old.thread_id)
        if game is None or game.owner_id != user.id:
            return Answer(tr("A new game is already open in this chat"), alert=True)
        if chat.type == "private":
            async with self._shared.locks[game.id], self._shared.sessions.begin() as s:
                fresh = await _reseat(s, game.id, old)
            if fresh is None:
                return Answer(tr("This button belongs to an earlier game"), alert=True)
            return await self._lobby.action(fresh.id, user, "s", "", _no)
        gtr = await self._shared.translators.chat(chat.id)
        async with self._shared.locks[game.id], self._shared.outbox.transaction() as s:
            fresh = await _reseat(s, game.id, old)
            if fresh is None:
                return Answer(tr("This button belongs to an earlier game"), alert=True)
            await self._shared.outbox.edit(
                s,
                chat.id,
                render.lobby_text(fresh, gtr),
                render.lobby_keyboard(fresh, gtr, self._shared.config.bot_username),
                slot=repo.table_slot(fresh.id),
                thread=fresh.thread_id,
            )
        return Answer(tr("Rematch: the same seats and settings. Start when everyone is ready."))


async def _reseat(s: Any, game_id: str, old: Any) -> Any:
    """The new lobby, seated and set as the old match was (None if it is gone)."""
    fresh = await repo.get_game(s, game_id)
    if fresh is None or fresh.status != "lobby":
        return None
    fresh.seats = [await _seat_again(s, seat, game_id) for seat in old.seats]
    fresh.settings = dict(old.settings)
    await repo.save_game(s, fresh, fresh.move)
    return fresh


async def _seat_again(s: Any, seat: dict[str, Any], new_game_id: str) -> dict[str, Any]:
    """The same seat in the new game: a computer as it was; a person unless they are
    now playing elsewhere (a fresh seat: not away, no timeouts)."""
    if seat.get("bot"):
        return {"bot": seat["bot"]}
    uid = seat.get("user_id")
    if uid is None:
        return {}
    other = await repo.find_active_game_for_user(s, uid)
    if other is not None and other.id != new_game_id:
        return {}
    return {"user_id": uid, "name": seat.get("name"), "away": False, "timeouts": 0}


async def _no() -> bool:
    return False
