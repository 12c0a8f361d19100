"""Play with anyone: /online (which game, then the queue), its buttons, the preset
reactions at a table of strangers, /rating and the rated leaderboard (/top)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import render
from telegram_bot.chat.callbacks import Callback
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.handlers.admin import chat_admin
from telegram_bot.handlers.common import is_group, reply, service, tr_for
from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage import repo
from telegram_bot.service import online_tables, ratings
from telegram_bot.service.answer import Answer
from telegram_bot.service.online_seats import GROUP_RATED

__all__ = [
    "instead_button",
    "online_button",
    "online_command",
    "press",
    "rated",
    "rating",
    "top",
]

PRIVATE_ONLY = N_("Play with anyone in your private chat with me: send /online there.")
RATING_HEAD = N_("<b>Your rating</b> (the conservative value: it grows as you play)")
RATING_ROW = N_("{game}: {rating} · {n} rated matches")
RATING_NONE = N_("No rated match yet. Send /online to play with anyone.")
TOP_HEAD = N_("<b>Rated leaderboard</b> · {game}")
TOP_NONE = N_("No rated matches yet.")
ONLINE_BUTTON = N_("🌐 Play with anyone")
SOLO_HINT = N_("🤖 A solo match against three computers. To play with people instead:")
INSTEAD_BUTTON = N_("🌐 Play with anyone instead")
GAME_LABELS = {4: N_("4 players"), 3: N_("3 players"), 2: N_("2 players")}


def online_button(tr: Translator) -> InlineKeyboardMarkup:
    """The button under /start (and /play): play with anyone."""
    data = cb.encode("q", "", None, "a")
    return InlineKeyboardMarkup([[InlineKeyboardButton(tr(ONLINE_BUTTON), callback_data=data)]])


def instead_button(tr: Translator, game_id: str) -> InlineKeyboardMarkup:
    """The button under /play: this solo match ends, and which game to play with anyone."""
    data = cb.encode("q", game_id, None, "s")
    return InlineKeyboardMarkup([[InlineKeyboardButton(tr(INSTEAD_BUTTON), callback_data=data)]])


async def online_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/online: which game (4 players, the default, 3 or 2)."""
    tr = await tr_for(update, context)
    if is_group(update):
        await reply(update, tr(PRIVATE_ONLY))
        return
    tables = service(context).online
    await reply(update, tr(online_tables.WHICH_GAME), tables.choice_keyboard(tr).to_markup())


async def press(
    data: Callback,
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    later: Callable[[Callable[[], Awaitable[Any]]], None],
) -> Answer:
    """The ``q`` (queue) and ``z`` (reaction) buttons. ``later`` takes the handler's own
    Bot API calls, made once the press is answered."""
    svc = service(context)
    query = update.callback_query
    user = query.from_user
    if data.action == "z":
        return await svc.online.react(data.game_id, user.id, data.arg)
    tr = await svc.user_tr(user.id)
    message = query.message
    # The queue's buttons are only ever in the person's own private chat with the bot.
    if message is None or message.chat.id != user.id:
        return Answer(tr("This button is not valid"), alert=True)
    if data.arg == "s" and data.game_id:  # the button under /play: that solo match ends
        game = await svc.game_for_user(user.id)
        if game is not None and game.id == data.game_id and game.chat_id == user.id:
            await svc.exits.quit_solo(user)
        later(lambda: query.edit_message_reply_markup(None))
    if data.arg in ("a", "s"):  # the button under /start or /play: which game, anew
        keys = svc.online.choice_keyboard(tr).to_markup()
        later(
            lambda: context.bot.send_message(
                user.id, tr(online_tables.WHICH_GAME), parse_mode="HTML", reply_markup=keys
            )
        )
        return Answer(tr("Play with anyone"))
    if data.arg in ("4", "3", "2"):
        text, keys = await svc.online.join(user, int(data.arg))
        markup = keys.to_markup() if keys else None
        later(lambda: query.edit_message_text(text, parse_mode="HTML", reply_markup=markup))
        return Answer(tr(online_tables.GAME_NAMES[int(data.arg)]))
    if data.arg == "0":
        left = await svc.online.leave_queue(user.id)
        later(lambda: query.edit_message_text(left, parse_mode="HTML"))
        return Answer(left)
    if data.arg == "c":
        answer = await svc.online.with_computers(user)
        if answer.text is None:
            later(lambda: query.edit_message_reply_markup(None))
            return Answer(tr(online_tables.START_NOW))
        return answer
    return Answer(tr("This button is not valid"), alert=True)


async def rating(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/rating: the person's conservative rating per game."""
    tr = await tr_for(update, context)
    svc = service(context)
    user = update.effective_user
    async with svc.sessions() as s:
        found = {n: await store.get_ratings(s, n, [user.id]) for n in (4, 3, 2)}
    rows = []
    for n, skills in found.items():
        skill = skills.get(user.id)
        if skill is None or skill.matches == 0:
            continue
        rows.append(
            tr(RATING_ROW).format(
                game=tr(GAME_LABELS[n]),
                rating=tr.format_number(ratings.display(skill)),
                n=tr.format_number(skill.matches),
            )
        )
    if not rows:
        await reply(update, tr(RATING_NONE))
        return
    await reply(update, "\n".join([tr(RATING_HEAD), *rows]))


async def leaderboard_text(svc, tr: Translator, limit: int = 10) -> str:
    """The rated leaderboard of every game with rated matches (display names only)."""
    blocks = []
    async with svc.sessions() as s:
        for n in (4, 3, 2):
            rows = await store.rated_leaderboard(s, n, limit)
            if not rows:
                continue
            lines = [tr(TOP_HEAD).format(game=tr(GAME_LABELS[n]))]
            for i, row in enumerate(rows, 1):
                value = tr.format_number(ratings.display(row.skill))
                lines.append(f"{tr.format_number(i)}. {render.user_name(row.name)}: {value}")
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else tr(TOP_NONE)


RATED_ON = N_(
    "⭐ Rated matches are on in this group: a match with people in every seat to its end "
    "changes their ratings (/rating, /top). Send /rated again to turn it off."
)
RATED_OFF = N_("Rated matches are off in this group.")
RATED_ADMIN = N_("Only a group admin can turn rated matches on or off.")
RATED_GROUP_ONLY = N_("This command works in a group.")


async def rated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/rated in a group (its admins): rate the group's matches, or stop (off by
    default). Games opened from then on follow it."""
    tr = await tr_for(update, context)
    if not is_group(update):
        await reply(update, tr(RATED_GROUP_ONLY))
        return
    chat, user = update.effective_chat, update.effective_user
    if not await chat_admin(context, chat.id, user.id):
        await reply(update, tr(RATED_ADMIN))
        return
    svc = service(context)
    async with svc.sessions.begin() as s:
        known = await repo.get_or_create_chat(s, chat.id, chat.type, chat.title)
        on = not (known.settings or {}).get(GROUP_RATED)
        await repo.update_chat_settings(s, chat.id, {GROUP_RATED: True if on else None})
    await reply(update, tr(RATED_ON if on else RATED_OFF))


async def top(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/top: the global rated leaderboard."""
    tr = await tr_for(update, context)
    await reply(update, await leaderboard_text(service(context), tr))
