"""The floor: the least a python-telegram-bot bot can do for a press at a table.

``/go`` in a group posts a message with one button; each press is answered and the
message is edited once to name whose turn is next. Same library, same HTTP
settings (concurrent updates, connection pool) and same polling as the project's
bot, so the CPU it spends per press is what the stack itself costs.

    BOT_TOKEN=... TELEGRAM_API_URL=http://127.0.0.1:PORT python -m benchmarks.minimal_bot

With ``MINIMAL_HTTP=lean`` (or ``aiohttp``) it makes its calls with the project's
lean client (or its aiohttp one; :mod:`telegram_bot.platform.http`) instead of
python-telegram-bot's httpx one: the floor on the same transport as the project's bot.
"""

from __future__ import annotations

import logging
import os
import sys

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ApplicationBuilder, CallbackQueryHandler, CommandHandler, ContextTypes

SEATS = 4


def _keyboard(play: int) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton("play", callback_data=f"m:{play}")]])


def text(play: int) -> str:
    """What the table message shows; the simulated people read whose turn it is."""
    return f"turn {play % SEATS} play {play}"


async def go(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    await update.effective_message.reply_text(text(0), reply_markup=_keyboard(0))


async def press(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    assert query is not None and query.data is not None
    play = int(query.data.split(":")[1]) + 1
    await query.answer()
    await query.edit_message_text(text(play), reply_markup=_keyboard(play))


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    root = os.environ["TELEGRAM_API_URL"].rstrip("/").removesuffix("/bot")
    builder = (
        ApplicationBuilder()
        .token(os.environ["BOT_TOKEN"])
        .base_url(f"{root}/bot")
        .base_file_url(f"{root}/file/bot")
        .concurrent_updates(64)
    )
    kind = os.environ.get("MINIMAL_HTTP", "httpx")
    if kind != "httpx":
        # The project's Bot API client (telegram_bot.platform.http), as the project's bot uses it.
        from telegram_bot.platform.http import make_request

        builder = builder.request(make_request(kind, connection_pool_size=32, pool_timeout=10.0))
        builder = builder.get_updates_request(make_request(kind, connection_pool_size=1))
    else:
        builder = builder.connection_pool_size(32).pool_timeout(10.0)
    app = builder.build()
    app.add_handler(CommandHandler("go", go))
    app.add_handler(CallbackQueryHandler(press))
    app.run_polling(allowed_updates=Update.ALL_TYPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
