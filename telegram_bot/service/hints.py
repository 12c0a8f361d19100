"""Hints: a «💡 Hint» button in the hand of a person playing alone against computers.

Off by default. ``/hints`` turns them on or off for a table: in a group its admins
choose, in the private chat (where /play's solo matches are) the player does. They
are offered only while a single person plays (a solo match, or one person against
three computers in a group), so no one gets help against another person
(:func:`telegram_bot.chat.render.hint_offered`). The button (``h:<game>:<move>``) is in
the hand on the player's turn in trick play; pressing it asks the hard computer
player, with the seat's own view only, which card to play, and shows its answer to
the presser alone.
"""

from __future__ import annotations

import asyncio

from core import Match, PlayCard
from core.players import make_player
from telegram_bot.chat.i18n import ltr
from telegram_bot.chat.render import HINTS_SETTING, hint_offered
from telegram_bot.platform.storage import repo
from telegram_bot.service.answer import Answer
from telegram_bot.service.seats import seat_of
from telegram_bot.service.shared import Shared

__all__ = ["LEVEL", "Hints"]

#: The computer player whose move is the hint.
LEVEL = "hard"


class Hints:
    def __init__(
        self,
        shared: Shared,
    ) -> None:
        self._shared = shared

    async def press(self, game_id: str, move: int | None, user_id: int) -> Answer:
        """The hint, as an alert only the presser sees."""
        tr = await self._shared.translators.user(user_id)
        async with self._shared.sessions() as s:
            game = await repo.get_game(s, game_id)
        if game is None or game.status != "playing" or game.state is None or move is None:
            return Answer(tr("This button is not valid"), alert=True)
        match = Match.from_json(game.state)
        seat = seat_of(game, match, user_id)
        if seat is None:
            return Answer(tr("You are not playing in this game"), alert=True)
        if move != game.move or not hint_offered(game, match, seat):
            return Answer(tr("This button belongs to an earlier hand"), alert=True)
        view = match.view(seat)
        budget = self._shared.config.think_budget(match.n)
        if self._shared.thinkers is not None:
            action = await self._shared.thinkers.act(LEVEL, budget, view)
        else:
            player = make_player(LEVEL, time_budget=budget)
            action = await asyncio.to_thread(player.act, view)
        if not isinstance(action, PlayCard):  # pragma: no cover - trick play asks for a card
            return Answer(tr("This button is not valid"), alert=True)
        return Answer(tr("💡 Hint: play {card}").format(card=ltr(action.card)), alert=True)

    async def toggle(
        self, chat_id: int, chat_type: str, title: str | None, thread_id: int | None = None
    ) -> bool:
        """/hints: turn hints on or off for this chat's table (and its game, if one is
        open); True when they are now on. The caller checks who may."""
        async with self._shared.sessions.begin() as s:
            await repo.get_or_create_chat(s, chat_id, chat_type, title)
            known = await repo.get_chat(s, chat_id)
            on = not bool((known.settings or {}).get(HINTS_SETTING))
            await repo.update_chat_settings(s, chat_id, {HINTS_SETTING: on or None})
        async with self._shared.sessions() as s:
            game = await repo.get_active_game(s, chat_id, thread_id)
        if game is not None:
            await self._set_for_game(game.id, on)
        return on

    async def _set_for_game(self, game_id: str, on: bool) -> None:
        """The open game follows the table's choice from its next turn."""
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or not game.is_active:
                    return
                game.settings = {**(game.settings or {}), HINTS_SETTING: on}
                await repo.save_game(s, game, game.move)
