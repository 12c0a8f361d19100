"""Hints: a «💡 Hint» button in the hand of a person playing alone against computers.

Off by default. ``/hints`` turns them on or off for a table: in a group its admins
choose, in the private chat (where /play's solo matches are) the player does. They
are offered only while a single person plays (a solo match, or one person against
three computers in a group), so no one gets help against another person. The button
(``h:<game>:<move>``) is in the hand on the player's turn in trick play; pressing it
asks the hard computer player, with the seat's own view only, which card to play, and
shows its answer to the presser alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Update
from telegram.constants import ChatType, ParseMode
from telegram.ext import ContextTypes

from core import Match, Phase, PlayCard
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat.i18n import ltr
from telegram_bot.platform.storage import repo

__all__ = ["SETTING", "command", "offered", "pressed"]

#: The table setting (chat and game settings), True when hints are on.
SETTING = "hints"
#: The computer player whose move is the hint.
LEVEL = "hard"


def offered(game: Any, match: Match, seat: int) -> bool:
    """Whether ``seat``'s hand shows the hint button now."""
    return (
        bool((game.settings or {}).get(SETTING))
        and len(game.user_ids()) == 1
        and match.phase is Phase.PLAY
        and match.turn == seat
        and not game.seats[match.order[seat]].get("away")
    )


async def pressed(svc: Any, data: cb.Callback, user: Any) -> Any:
    """The hint, as an alert only the presser sees."""
    from telegram_bot.service.games import (  # (the service imports this module's users)
        Answer,
        _seat_of,
    )

    tr = await svc.user_tr(user.id)
    async with svc.sessions() as s:
        game = await repo.get_game(s, data.game_id)
    if game is None or game.status != "playing" or game.state is None or data.move is None:
        return Answer(tr("This button is not valid"), alert=True)
    match = Match.from_json(game.state)
    seat = _seat_of(game, match, user.id)
    if seat is None:
        return Answer(tr("You are not playing in this game"), alert=True)
    if data.move != game.move or not offered(game, match, seat):
        return Answer(tr("This button belongs to an earlier hand"), alert=True)
    view = match.view(seat)
    if svc.thinkers is not None:
        action = await svc.thinkers.act(LEVEL, svc.config.think_seconds, view)
    else:
        from core.players import make_player

        player = make_player(LEVEL, time_budget=svc.config.think_seconds)
        action = await asyncio.to_thread(player.act, view)
    if not isinstance(action, PlayCard):  # pragma: no cover - trick play asks for a card
        return Answer(tr("This button is not valid"), alert=True)
    return Answer(tr("💡 Hint: play {card}").format(card=ltr(action.card)), alert=True)


async def command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/hints: turn hints on or off for this chat's table (and its game, if one is open)."""
    from telegram_bot.handlers.commands import _admin

    svc = context.application.bot_data["service"]
    user, chat, message = update.effective_user, update.effective_chat, update.effective_message
    if user is None or chat is None or message is None:
        return
    group = chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
    tr = await (svc.chat_tr(chat.id) if group else svc.user_tr(user.id))
    if group and not await _admin(context, chat.id, user.id):
        await message.reply_text(tr("Only a group admin can turn hints on or off."))
        return
    async with svc.sessions.begin() as s:
        await repo.get_or_create_chat(s, chat.id, chat.type, chat.title)
        known = await repo.get_chat(s, chat.id)
        on = not bool((known.settings or {}).get(SETTING))
        await repo.update_chat_settings(s, chat.id, {SETTING: on or None})
    game = await svc.active_game(chat.id)
    if game is not None:
        await _set_for_game(svc, game.id, on)
    text = (
        tr(
            "💡 Hints are on: when one person plays alone against the computers, their hand "
            "shows a «💡 Hint» button on their turn. Send /hints again to turn them off."
        )
        if on
        else tr("Hints are off.")
    )
    await message.reply_text(text, parse_mode=ParseMode.HTML)


async def _set_for_game(svc: Any, game_id: str, on: bool) -> None:
    """The open game follows the table's choice from its next turn."""
    async with svc._locks[game_id]:
        async with svc.outbox.transaction() as s:
            game = await repo.get_game(s, game_id, lock=True)
            if game is None or not game.is_active:
                return
            game.settings = {**(game.settings or {}), SETTING: on}
            await repo.save_game(s, game, game.move)
