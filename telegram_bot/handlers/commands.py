"""The commands (/start, /newgame, /play, /cancel, …) and the group messages the bot
sees: read the update, answer it, and call the game service, which owns every change."""

from __future__ import annotations

import logging

from telegram import ChatMember, InlineKeyboardButton, InlineKeyboardMarkup, ReplyParameters, Update
from telegram.constants import ChatType, ParseMode
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from core import Match
from telegram_bot.chat import guide, render
from telegram_bot.chat.i18n import N_, get_translator, isolate, language_from_telegram
from telegram_bot.handlers.admin import chat_admin, learn_admins
from telegram_bot.handlers.common import (
    is_group,
    language_keyboard,
    reply,
    service,
    thread_of,
    tr_for,
)
from telegram_bot.handlers.online import SOLO_HINT, instead_button, online_button
from telegram_bot.platform.storage import repo
from telegram_bot.service import exits
from telegram_bot.service.answer import Answer
from telegram_bot.service.lobby import BUSY, DEFAULT_SETTINGS

log = logging.getLogger(__name__)


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if is_group(update):
        tr = await tr_for(update, context)
        await reply(update, tr("To play, send /newgame in this group."))
        return
    user = update.effective_user
    svc = service(context)
    async with svc.sessions.begin() as s:
        await repo.get_or_create_user(
            s, user.id, user.first_name, user.username, user.language_code
        )
        await repo.get_or_create_chat(s, user.id, "private", None)
        await repo.mark_started(s, user.id)
    tr = await svc.user_tr(user.id)
    payload = context.args[0] if context.args else ""
    if payload == "hand" and await _point_to_hand(update, context):
        return
    if payload.startswith("join_"):
        game_id = payload[5:]
        answer = await svc.lobby_action(game_id, user, "j", "", lambda: _false())
        await reply(update, answer.text or tr("You joined the game"))
        return
    await reply(update, tr(WELCOME), online_button(tr))
    await svc.player_returns(user.id)


async def _point_to_hand(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """From the inline button: answer under the player's hand message, if they have one."""
    user = update.effective_user
    svc = service(context)
    game = await svc.game_for_user(user.id)
    hand = (game.private_messages or {}).get(str(user.id)) if game is not None else None
    if hand is None:
        return False
    tr = await svc.user_tr(user.id)
    await context.bot.send_message(
        user.id,
        tr("Your cards are in this message; it changes as the game goes on."),
        reply_parameters=ReplyParameters(hand, allow_sending_without_reply=True),
    )
    return True


async def _false() -> bool:
    return False


WELCOME = N_(
    "Welcome to <b>Hokm</b> (حکم)!\n"
    "Add me to a group and send /newgame there: 2, 3 or 4 people join, empty seats get "
    "computer players, and your cards come to you here, in private.\n"
    "/play — a solo match here against three computer players\n"
    "/language — choose your language\n"
    "/help — how to play"
)


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await tr_for(update, context)
    await reply(update, guide.help_text(tr))


async def rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/rules: the variant this chat's table plays (or will play), in short."""
    tr = await tr_for(update, context)
    svc = service(context)
    chat_id = update.effective_chat.id
    game = await svc.active_game(chat_id, thread_of(update))
    if game is None and not is_group(update):
        game = await svc.game_for_user(update.effective_user.id)
    if game is not None:
        settings = game.settings
    else:
        async with svc.sessions() as s:
            chat = await repo.get_chat(s, chat_id)
        settings = {**DEFAULT_SETTINGS, **((chat.settings if chat else None) or {})}
    await reply(update, guide.rules_text(settings, tr))


async def greet(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot was added to a group: say how to start, in the language of whoever added it
    (unless the group already chose one)."""
    change = update.my_chat_member
    chat = change.chat
    if chat.type not in (ChatType.GROUP, ChatType.SUPERGROUP):
        return
    present = (ChatMember.MEMBER, ChatMember.ADMINISTRATOR)
    if change.new_chat_member.status not in present or change.old_chat_member.status in present:
        return
    svc = service(context)
    async with svc.sessions.begin() as s:
        known = await repo.get_chat(s, chat.id)
        lang = known.language if known else language_from_telegram(change.from_user.language_code)
        await repo.get_or_create_chat(s, chat.id, chat.type, chat.title, language=lang)
    tr = get_translator(lang)
    try:
        await context.bot.send_message(chat.id, tr(guide.GREETING), parse_mode=ParseMode.HTML)
    except TelegramError:  # the group may not let the bot write; nothing is lost
        log.info("could not greet chat %s", chat.id)


async def new_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await tr_for(update, context)
    if not is_group(update):
        await reply(update, tr("This command works in a group. Here, use /play for a solo match."))
        return
    chat = update.effective_chat
    error = await service(context).open_lobby(
        chat.id, chat.type, chat.title, update.effective_user, thread_of(update)
    )
    if error:
        await reply(update, error)
        return
    await learn_admins(context, chat.id)  # for the lobby's owner-or-admin buttons


async def play_solo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/play in private: the private chat is the table; three computer players."""
    tr = await tr_for(update, context)
    if is_group(update):
        await reply(update, tr("In a group, use /newgame."))
        return
    user = update.effective_user
    svc = service(context)
    async with svc.sessions.begin() as s:
        await repo.mark_started(s, user.id)
        # The private chat is the table: it speaks the player's language.
        await repo.get_or_create_chat(s, user.id, "private", None, language=tr.lang)
        await repo.set_chat_language(s, user.id, tr.lang)
    svc.forget_chat_lang(user.id)
    if await svc.game_for_user(user.id) is not None:
        await reply(update, tr(BUSY))
        return
    error = await svc.open_lobby(user.id, "private", None, user)
    if error:
        await reply(update, error)
        return
    game = await svc.active_game(user.id)
    if game is not None:
        for _ in range(3):
            await svc.lobby_action(game.id, user, "b", "", _false)
        await svc.lobby_action(game.id, user, "s", "", _false)
        # Or play with people (the "a button on /play"): this match then ends.
        await reply(update, tr(SOLO_HINT), instead_button(tr, game.id))


async def language(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await tr_for(update, context)
    target = "c" if is_group(update) else "u"
    markup = language_keyboard(target)
    await reply(update, tr("Choose the language"), markup)
    if target == "c":  # asked now, so that a press is answered with its result at once
        await learn_admins(context, update.effective_chat.id)


async def score(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await tr_for(update, context)
    svc = service(context)
    chat_id = update.effective_chat.id
    lines = []
    game = await svc.active_game(chat_id, thread_of(update))
    if game is not None and game.state:
        match = Match.from_json(game.state)
        names = render.seat_names(game, match, tr)
        v = match.variant
        lines.append(tr("<b>Score</b>"))
        for side, points in enumerate(match.scores):
            lines.append(f"{render.side_name(v, side, names, tr)}: {tr.format_number(points)}")
    async with svc.sessions() as s:
        recent = await repo.recent_matches(s, chat_id, limit=5)
    if recent:
        lines.append("")
        lines.append(tr("<b>Recent matches</b>"))
        for m in recent:
            winners = [
                render.user_name(p["name"])
                if p["name"] and not p.get("bot")
                else isolate(
                    tr("🤖 Computer {n}").format(n=tr.format_number(p.get("number") or i + 1))
                )
                for i, p in enumerate(m.players)
                if p["side"] == m.winner_side
            ]
            score_text = tr(" to ").join(
                tr.format_number(x) for x in sorted(m.scores, reverse=True)
            )
            lines.append(
                f"{tr.date(m.finished_at)} — {render.and_join(winners, tr)} ({score_text})"
            )
    if not lines:
        lines.append(tr("No matches yet. Send /newgame to start one."))
    await reply(update, "\n".join(lines))


async def stats(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await tr_for(update, context)
    svc = service(context)
    async with svc.sessions() as s:
        rows = await repo.leaderboard(s, update.effective_chat.id, limit=10)
    if not rows:
        await reply(update, tr("No matches yet. Send /newgame to start one."))
        return
    lines = [tr("<b>Leaderboard</b>")]
    for i, row in enumerate(rows, 1):
        won = tr.ngettext(
            "{won} of {n} match won",
            "{won} of {n} matches won",
            row.matches_played,
            won=row.matches_won,
        )
        hands = tr.ngettext("{n} hand won", "{n} hands won", row.hands_won)
        kots = tr.ngettext("{n} kot", "{n} kots", row.kots)
        name = render.user_name(row.name)
        lines.append(f"{tr.format_number(i)}. {name}: {won} · {hands} · {kots}")
    await reply(update, "\n".join(lines))


async def back(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await tr_for(update, context)
    svc = service(context)
    game = await svc.game_for_user(update.effective_user.id)
    if game is None or game.status != "playing":
        await reply(update, tr("You are not in a game right now."))
        return
    answer = await svc.set_away(game.id, update.effective_user.id, False)
    await reply(update, answer.text or tr("Welcome back!"))


# ------------------------------------------------------------------ ways out


async def cancel(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cancel: in a group, ask whether to end its game (owner or admin); in private,
    end the solo match."""
    svc = service(context)
    user = update.effective_user
    if not is_group(update):
        await quit_command(update, context)
        return
    tr = await tr_for(update, context)
    chat_id = update.effective_chat.id
    game = await svc.active_game(chat_id, thread_of(update))
    if game is None:
        await reply(update, tr("There is no game to end in this group."))
        return
    if user.id != game.owner_id and not await chat_admin(context, chat_id, user.id, update):
        await reply(update, tr(exits.ONLY_OWNER))
        return
    await svc.exits.ask_to_end(game, user.id)
    await learn_admins(context, chat_id)  # for the question's Yes and No


async def leave(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await service(context).exits.leave(update.effective_user)
    await reply(update, answer.text or "")


async def quit_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await service(context).exits.quit_solo(update.effective_user)
    if answer.text:  # none when the match ended: its table says so
        await reply(update, answer.text)


async def takeover(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/takeover in a group: take a computer's or an away player's seat (a choice of
    seats when there are several)."""
    tr = await tr_for(update, context)
    if not is_group(update):
        await reply(update, tr("This command works in a group. Here, use /play for a solo match."))
        return
    svc = service(context)
    user = update.effective_user
    thread = thread_of(update)
    answer, markup, index = await svc.exits.takeover_choices(update.effective_chat.id, user, thread)
    if index is not None:
        game = await svc.active_game(update.effective_chat.id, thread)
        answer = await svc.exits.take_over(game.id, user, index)
        if answer.url:
            markup = InlineKeyboardMarkup(
                [[InlineKeyboardButton(answer.text or "", url=answer.url)]]
            )
            answer = Answer(
                tr("Open the bot in private and press Start, then send /takeover again.")
            )
    await reply(update, answer.text or "", markup)


# ------------------------------------------------------------ table talk


async def review(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/review: in private, the player's last finished hand."""
    svc = service(context)
    user = update.effective_user
    chat = update.effective_chat
    message = update.effective_message
    if chat is None or user is None or message is None:
        return
    tr = await svc.user_tr(user.id)
    if chat.type != ChatType.PRIVATE:
        text = tr("Reviews are private: send /review to me in a private chat.")
        await message.reply_text(text, parse_mode=ParseMode.HTML)
        return
    if not await svc.review.last_hand(user.id):
        await message.reply_text(tr("No finished hand of yours to review yet."))


async def hints(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/hints: turn hints on or off for this chat's table (and its game, if one is open)."""
    svc = service(context)
    user, chat, message = update.effective_user, update.effective_chat, update.effective_message
    if user is None or chat is None or message is None:
        return
    group = chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
    tr = await (svc.chat_tr(chat.id) if group else svc.user_tr(user.id))
    if group and not await chat_admin(context, chat.id, user.id, update):
        await message.reply_text(tr("Only a group admin can turn hints on or off."))
        return
    on = await svc.hints.toggle(chat.id, chat.type, chat.title, thread_of(update))
    text = (
        tr(
            "💡 Hints are on: when one person plays alone against the computers, their hand "
            "shows a «💡 Hint» button on their turn. Send /hints again to turn them off."
        )
        if on
        else tr("Hints are off.")
    )
    await message.reply_text(text, parse_mode=ParseMode.HTML)


async def track_group_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Every group message the bot sees moves the newest id (telegram_bot.service.reposts)."""
    message = update.effective_message
    if message is not None and update.effective_chat is not None:
        service(context).outbox.note_message(update.effective_chat.id, message.message_id)


async def migrated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The group became a supergroup (either of the two service messages): its games,
    settings, scores and waiting messages move to the new id (once, whichever comes
    first; a ChatMigrated from any call does the same: see handlers.errors)."""
    message = update.effective_message
    if message is None:
        return
    chat = message.chat
    if message.migrate_to_chat_id:
        old, new, title = chat.id, message.migrate_to_chat_id, chat.title
    elif message.migrate_from_chat_id:
        old, new, title = message.migrate_from_chat_id, chat.id, chat.title
    else:
        return
    await service(context).moves.migrate(old, new, title)
