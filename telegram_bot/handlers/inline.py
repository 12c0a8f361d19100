"""Inline mode: from the group, a player picks one of their legal cards to play."""

from __future__ import annotations

from html import unescape

from telegram import (
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    Update,
)
from telegram.ext import ContextTypes

from core import Match, Phase, PlayCard, parse_card
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_
from telegram_bot.handlers.common import service, user_tr
from telegram_bot.service.seats import seat_of

__all__ = ["PLAYED", "chosen_inline", "inline_query"]

#: The group message of an inline play, in the group's language: it names no card.
PLAYED = N_("🃏 A card was played")


async def inline_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """From the group: a player sees only their own legal cards and picks one.

    When there is nothing to play, the answer is no result and a button above the
    (empty) list that says why and opens the private chat, where the hand is."""
    query = update.inline_query
    svc = service(context)
    tr = await user_tr(update, context)  # also for someone who never wrote to the bot
    game = await svc.game_for_user(query.from_user.id)
    results = []
    hint = tr("You are not in a game right now.")
    if game is not None and game.status == "playing" and game.state:
        match = Match.from_json(game.state)
        seat = seat_of(game, match, query.from_user.id)
        if seat is not None and match.phase is Phase.PLAY and match.turn == seat:
            # What the person's client posts in the group at once, before the bot has
            # accepted the play: no card named (a play refused, the turn having passed
            # meanwhile, would show a card still in hand). The table shows the card
            # once the play is accepted.
            posted = (await svc.chat_tr(game.chat_id))(PLAYED)
            for card in match.legal_cards(seat):
                results.append(
                    InlineQueryResultArticle(
                        id=cb.encode("p", game.id, match.hand_no, card.ascii),
                        title=render.card_label(card),
                        description=tr("Play this card"),
                        input_message_content=InputTextMessageContent(posted),
                    )
                )
        elif seat is not None and match.turn is not None and match.turn != seat:
            names = render.seat_names(game, match, tr)
            hint = tr("Not your turn: it is {name}'s turn").format(name=names[match.turn])
        elif seat is not None:
            hint = tr("Your turn: answer in your private chat with the bot")
    button = None
    if not results:
        # start=hand opens the private chat, which points to the hand message.
        button = InlineQueryResultsButton(text=unescape(hint), start_parameter="hand")
    # Personal and uncached: each player sees only their own cards, as of now.
    await query.answer(results, cache_time=0, is_personal=True, button=button)


async def chosen_inline(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chosen = update.chosen_inline_result
    try:
        data = cb.decode(chosen.result_id)
    except cb.MalformedCallback:
        return
    if data.action != "p" or data.move is None:
        return
    svc = service(context)
    try:
        card = parse_card(data.arg)
    except ValueError:
        return
    await svc.act(
        data.game_id, data.move, chosen.from_user.id, lambda m, s: PlayCard(card), by_hand=True
    )
