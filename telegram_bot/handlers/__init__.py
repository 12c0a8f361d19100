"""python-telegram-bot handlers: parse, authorize, hand over to the game service.

Handlers stay thin: they read the update, answer it, and call
:class:`~telegram_bot.service.games.GameService`, which owns every game change.

- :mod:`.commands`: the commands, and the group messages the bot sees;
- :mod:`.presses`: button presses;
- :mod:`.inline`: inline mode (a card played from the group);
- :mod:`.online`: play with anyone (/online, its buttons, reactions, /rating, /top);
- :mod:`.admin`: who may do what a group's admins may;
- :mod:`.errors`: what is logged when a handler fails.
"""

from __future__ import annotations

from typing import Any

from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    ChosenInlineResultHandler,
    CommandHandler,
    InlineQueryHandler,
    MessageHandler,
    filters,
)

from telegram_bot.handlers import commands, inline, online, presses
from telegram_bot.handlers.errors import on_error

__all__ = ["register"]


def register(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(CommandHandler("start", commands.start))
    app.add_handler(CommandHandler("help", commands.help_command))
    app.add_handler(CommandHandler("rules", commands.rules))
    app.add_handler(ChatMemberHandler(commands.greet, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_handler(CommandHandler(["newgame", "hokm"], commands.new_game))
    app.add_handler(CommandHandler("play", commands.play_solo))
    app.add_handler(CommandHandler("online", online.online_command))
    app.add_handler(CommandHandler("rating", online.rating))
    app.add_handler(CommandHandler("top", online.top))
    app.add_handler(CommandHandler("rated", online.rated))
    app.add_handler(CommandHandler("language", commands.language))
    app.add_handler(CommandHandler("score", commands.score))
    app.add_handler(CommandHandler("stats", commands.stats))
    app.add_handler(CommandHandler("back", commands.back))
    app.add_handler(CommandHandler("cancel", commands.cancel))
    app.add_handler(CommandHandler("leave", commands.leave))
    app.add_handler(CommandHandler("takeover", commands.takeover))
    app.add_handler(CommandHandler("quit", commands.quit_command))
    app.add_handler(CommandHandler("review", commands.review))
    app.add_handler(CommandHandler("hints", commands.hints))
    # In a group of its own: it sees every group message, and the commands still run.
    app.add_handler(MessageHandler(filters.ChatType.GROUPS, commands.track_group_message), group=-1)
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, commands.migrated))
    app.add_handler(CallbackQueryHandler(presses.button))
    app.add_handler(InlineQueryHandler(inline.inline_query))
    app.add_handler(ChosenInlineResultHandler(inline.chosen_inline))
    app.add_error_handler(on_error)
