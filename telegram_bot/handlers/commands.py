"""python-telegram-bot handlers: parse, authorize, hand over to the game service.

Handlers stay thin: they read the update, answer it, and call
:class:`~telegram_bot.service.games.GameService`, which owns every game change.
"""

from __future__ import annotations

import logging
from html import unescape
from typing import Any

from telegram import (
    ChatMember,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    ChosenInlineResultHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)

from core import (
    Bid,
    ChooseTrump,
    DeclareBlind,
    Discard,
    Draw,
    Exchange,
    Phase,
    PlayCard,
    Suit,
    parse_card,
)
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import guide, render
from telegram_bot.chat.i18n import N_, get_translator, language_from_telegram
from telegram_bot.platform.storage import repo
from telegram_bot.service import exits, hints, review
from telegram_bot.service.games import BUSY, DEFAULT_SETTINGS, Answer, GameService, _seat_of
from telegram_bot.service.rematch import rematch

__all__ = ["register"]

log = logging.getLogger(__name__)


def _service(context: ContextTypes.DEFAULT_TYPE) -> GameService:
    return context.application.bot_data["service"]


def _is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


async def _reply(update: Update, text: str, markup: InlineKeyboardMarkup | None = None) -> None:
    assert update.effective_message is not None
    await update.effective_message.reply_text(text, parse_mode=ParseMode.HTML, reply_markup=markup)


async def _tr_for(update: Update, context: ContextTypes.DEFAULT_TYPE):
    svc = _service(context)
    if _is_group(update):
        return await svc.chat_tr(update.effective_chat.id)
    return await _user_tr(update, context)


async def _user_tr(update: Update, context: ContextTypes.DEFAULT_TYPE):
    user = update.effective_user
    svc = _service(context)
    async with svc.sessions.begin() as s:
        db_user = await repo.get_or_create_user(
            s, user.id, user.first_name, user.username, user.language_code
        )
    return get_translator(db_user.language or language_from_telegram(db_user.telegram_language))


# ------------------------------------------------------------------ commands


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if _is_group(update):
        tr = await _tr_for(update, context)
        await _reply(update, tr("To play, send /newgame in this group."))
        return
    user = update.effective_user
    svc = _service(context)
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
        await _reply(update, answer.text or tr("You joined the game"))
        return
    await _reply(update, tr(WELCOME))
    await svc.player_returns(user.id)


async def _point_to_hand(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """From the inline button: answer under the player's hand message, if they have one."""
    user = update.effective_user
    svc = _service(context)
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
    tr = await _tr_for(update, context)
    await _reply(update, guide.help_text(tr))


async def rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/rules: the variant this chat's table plays (or will play), in short."""
    tr = await _tr_for(update, context)
    svc = _service(context)
    chat_id = update.effective_chat.id
    game = await svc.active_game(chat_id)
    if game is None and not _is_group(update):
        game = await svc.game_for_user(update.effective_user.id)
    if game is not None:
        settings = game.settings
    else:
        async with svc.sessions() as s:
            chat = await repo.get_chat(s, chat_id)
        settings = {**DEFAULT_SETTINGS, **((chat.settings if chat else None) or {})}
    await _reply(update, guide.rules_text(settings, tr))


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
    svc = _service(context)
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
    tr = await _tr_for(update, context)
    if not _is_group(update):
        await _reply(update, tr("This command works in a group. Here, use /play for a solo match."))
        return
    chat = update.effective_chat
    error = await _service(context).open_lobby(
        chat.id, chat.type, chat.title, update.effective_user
    )
    if error:
        await _reply(update, error)


async def play_solo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/play in private: the private chat is the table; three computer players."""
    tr = await _tr_for(update, context)
    if _is_group(update):
        await _reply(update, tr("In a group, use /newgame."))
        return
    user = update.effective_user
    svc = _service(context)
    async with svc.sessions.begin() as s:
        await repo.mark_started(s, user.id)
        # The private chat is the table: it speaks the player's language.
        await repo.get_or_create_chat(s, user.id, "private", None, language=tr.lang)
        await repo.set_chat_language(s, user.id, tr.lang)
    svc.forget_chat_lang(user.id)
    if await svc.game_for_user(user.id) is not None:
        await _reply(update, tr(BUSY))
        return
    error = await svc.open_lobby(user.id, "private", None, user)
    if error:
        await _reply(update, error)
        return
    game = await svc.active_game(user.id)
    if game is not None:
        for _ in range(3):
            await svc.lobby_action(game.id, user, "b", "", _false)
        await svc.lobby_action(game.id, user, "s", "", _false)


async def language(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await _tr_for(update, context)
    target = "c" if _is_group(update) else "u"
    markup = InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    "فارسی", callback_data=cb.encode("g", "", None, f"{target}=fa")
                ),
                InlineKeyboardButton(
                    "English", callback_data=cb.encode("g", "", None, f"{target}=en")
                ),
            ]
        ]
    )
    await _reply(update, tr("Choose the language"), markup)


async def score(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await _tr_for(update, context)
    svc = _service(context)
    chat_id = update.effective_chat.id
    lines = []
    game = await svc.active_game(chat_id)
    if game is not None and game.state:
        from core import Match

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
                render.escape(p["name"])
                if p["name"] and not p.get("bot")
                else tr("🤖 Computer {n}").format(n=tr.format_number(p.get("number") or i + 1))
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
    await _reply(update, "\n".join(lines))


async def stats(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await _tr_for(update, context)
    svc = _service(context)
    async with svc.sessions() as s:
        rows = await repo.leaderboard(s, update.effective_chat.id, limit=10)
    if not rows:
        await _reply(update, tr("No matches yet. Send /newgame to start one."))
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
        name = render.escape(row.name)
        lines.append(f"{tr.format_number(i)}. {name}: {won} · {hands} · {kots}")
    await _reply(update, "\n".join(lines))


async def back(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    tr = await _tr_for(update, context)
    svc = _service(context)
    game = await svc.game_for_user(update.effective_user.id)
    if game is None or game.status != "playing":
        await _reply(update, tr("You are not in a game right now."))
        return
    answer = await svc.set_away(game.id, update.effective_user.id, False)
    await _reply(update, answer.text or tr("Welcome back!"))


# ------------------------------------------------------------------ ways out


async def cancel(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cancel: in a group, ask whether to end its game (owner or admin); in private,
    end the solo match."""
    svc = _service(context)
    user = update.effective_user
    if not _is_group(update):
        await _reply(update, (await exits.quit_solo(svc, user)).text or "")
        return
    tr = await _tr_for(update, context)
    chat_id = update.effective_chat.id
    game = await svc.active_game(chat_id)
    if game is None:
        await _reply(update, tr("There is no game to end in this group."))
        return
    if user.id != game.owner_id and not await _admin(context, chat_id, user.id):
        await _reply(update, tr(exits.ONLY_OWNER))
        return
    await exits.ask_to_end(svc, game, user.id)


async def leave(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await exits.leave(_service(context), update.effective_user)
    await _reply(update, answer.text or "")


async def quit_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    answer = await exits.quit_solo(_service(context), update.effective_user)
    await _reply(update, answer.text or "")


async def takeover(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/takeover in a group: take a computer's or an away player's seat (a choice of
    seats when there are several)."""
    tr = await _tr_for(update, context)
    if not _is_group(update):
        await _reply(update, tr("This command works in a group. Here, use /play for a solo match."))
        return
    svc = _service(context)
    user = update.effective_user
    answer, markup, index = await exits.takeover_choices(svc, update.effective_chat.id, user)
    if index is not None:
        game = await svc.active_game(update.effective_chat.id)
        answer = await exits.take_over(svc, game.id, user, index)
        if answer.url:
            markup = InlineKeyboardMarkup(
                [[InlineKeyboardButton(answer.text or "", url=answer.url)]]
            )
            answer = Answer(
                tr("Open the bot in private and press Start, then send /takeover again.")
            )
    await _reply(update, answer.text or "", markup)


async def _end_pressed(
    data: cb.Callback, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> Answer:
    """The Yes/No under "End this match?"."""
    svc = _service(context)
    query = update.callback_query
    user = query.from_user
    tr = await svc.user_tr(user.id)
    game = await _game_chat(svc, data.game_id)
    if game is None:
        return Answer(tr("This button is not valid"), alert=True)

    async def is_admin() -> bool:
        return await _admin(context, game.chat_id, user.id)

    if user.id != game.owner_id and not await is_admin():
        return Answer(tr(exits.ONLY_OWNER), alert=True)
    if data.arg == "1":
        answer = await exits.end_game(svc, data.game_id, user, is_admin)
    else:
        answer = Answer(tr(exits.GOES_ON))
    if query.message is not None and not answer.alert:
        gtr = await svc.chat_tr(game.chat_id)
        done = gtr(exits.GOES_ON) if data.arg != "1" else gtr(exits.WAS_ENDED)
        try:
            await query.edit_message_text(done)
        except TelegramError as exc:
            log.info("could not edit the end question: %s", exc)
    return answer


async def _lobby_press_in_play(data: cb.Callback, game, user, tr) -> Answer:
    """A lobby button pressed once the match runs (an old view of the message)."""
    if data.action == "j":
        return Answer(tr("The game has already started: to take a seat, send /takeover."))
    if data.action == "l":
        return Answer(tr("To leave the match, send /leave."))
    return Answer(tr("The game has already started."))


async def track_group_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Every group message the bot sees moves the newest id (telegram_bot.service.reposts)."""
    message = update.effective_message
    if message is not None and update.effective_chat is not None:
        _service(context).outbox.note_message(update.effective_chat.id, message.message_id)


# ------------------------------------------------------------------ buttons


class _Responder:
    """Answers one button press, once: as soon as the play is committed (so the
    person's spinner stops before the table is redrawn), or at the end."""

    def __init__(self, query: Any) -> None:
        self.query = query
        self.done = False

    async def __call__(self, answer: Answer) -> None:
        if self.done:
            return
        self.done = True
        try:
            await self.query.answer(answer.text, show_alert=answer.alert, url=answer.url)
        except TelegramError as exc:  # e.g. "query is too old": the person moved on
            log.warning("could not answer a button press: %s: %s", type(exc).__name__, exc)


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    svc = _service(context)
    user = query.from_user
    respond = _Responder(query)
    tr = await svc.user_tr(user.id)
    try:
        data = cb.decode(query.data)
    except cb.MalformedCallback:
        await respond(Answer(tr("This button is not valid"), alert=True))
        return
    try:
        answer = await _dispatch(data, update, context, respond)
    except Exception as exc:  # the press is answered whatever happened
        if expected_api_error(exc):
            log.warning("the button %r: Telegram refused: %s: %s", data, type(exc).__name__, exc)
        else:
            log.exception("the button %r failed", data)
        answer = Answer(tr("Something went wrong; please try again"), alert=True)
    await respond(answer)


async def _dispatch(
    data: cb.Callback,
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    respond: _Responder,
) -> Answer:
    svc = _service(context)
    user = update.callback_query.from_user
    a = data.action
    if a == "g":
        return await _set_language(data.arg, update, context)
    if a in ("j", "l", "b", "s", "c", "o"):

        async def is_admin() -> bool:
            game = await _game_chat(svc, data.game_id)
            return game is not None and await _admin(context, game.chat_id, user.id)

        game = await _game_chat(svc, data.game_id)
        if game is not None and game.status == "playing":
            if a != "c":
                return await _lobby_press_in_play(data, game, user, await svc.user_tr(user.id))
            if user.id != game.owner_id and not await is_admin():
                tr = await svc.user_tr(user.id)
                return Answer(tr(exits.ONLY_OWNER), alert=True)
            await exits.ask_to_end(svc, game, user.id)
            return Answer((await svc.user_tr(user.id))(exits.ASK_END))
        return await svc.lobby_action(data.game_id, user, a, data.arg, is_admin)
    if a == "e":
        return await _end_pressed(data, update, context)
    if a == "w":
        if not data.arg.isdigit():
            return Answer((await svc.user_tr(user.id))("This button is not valid"), alert=True)
        return await exits.take_over(svc, data.game_id, user, int(data.arg))
    if a == "r":
        return await svc.set_away(data.game_id, user.id, False)
    if a == "m":
        return await rematch(svc, data.game_id, user)
    if a == "y":
        return await review.pressed(svc, data, user)
    if a == "h":
        return await hints.pressed(svc, data, user)
    tr = await svc.user_tr(user.id)
    if data.move is None:
        return Answer(tr("This button is not valid"), alert=True)

    def build(match, seat):
        try:
            if a == "t":
                return ChooseTrump(Suit.parse(data.arg))
            if a == "p":
                return PlayCard(parse_card(data.arg))
            if a == "k":
                return Draw(data.arg == "1")
            if a == "n":
                return DeclareBlind(data.arg == "1")
            if a == "v":
                return Bid(int(data.arg))
            if a in ("d", "x"):
                return _selection(a, data, match, seat, tr)
        except ValueError:
            pass
        return Answer(tr("This button is not valid"), alert=True)

    done = Answer(_done_text(a, data.arg, tr))
    answer = await svc.act(
        data.game_id,
        data.move,
        user.id,
        build,
        by_hand=a == "p",
        on_commit=lambda: respond(done),
    )
    pending = getattr(answer, "selection", None)
    if pending is not None:
        await svc.show_selection(data.game_id, user.id, pending)
        if not pending:
            return Answer(tr("No card selected"))
        cards = " ".join(render.card_text(c) for c in pending)
        return Answer(tr("Selected: {cards}").format(cards=cards))
    return answer if answer.text else done


def _done_text(action: str, arg: str, tr) -> str:
    """The toast for an accepted move (every press gets a text, never a bare tick)."""
    if action == "p":
        try:
            return tr("You played {card}").format(card=render.card_text(parse_card(arg)))
        except ValueError:
            pass
    return tr("Done")


def _selection(a: str, data: cb.Callback, match, seat: int, tr):
    """Discard/exchange buttons carry the cards ticked so far; the last tick acts."""
    selected, last = render.parse_selection(data.arg)
    if match.turn != seat:
        return Answer(tr("Not your turn"), alert=True)
    if match.phase is not (Phase.DISCARD if a == "d" else Phase.EXCHANGE):
        return Answer(tr("That is not possible right now"), alert=True)
    if a == "x" and last.endswith("!"):
        if last != "!":
            selected.append(parse_card(last[:-1]))
        return Exchange(tuple(selected))
    card = parse_card(last)
    if card in selected:
        selected.remove(card)
    else:
        selected.append(card)
    if a == "d" and len(selected) == 2:
        return Discard(tuple(selected))
    if a == "x" and len(selected) > 3:
        return Answer(tr("Choose at most three cards"), alert=True)
    answer = Answer()
    answer.selection = selected  # type: ignore[attr-defined]
    return answer


async def _game_chat(svc: GameService, game_id: str):
    async with svc.sessions() as s:
        return await repo.get_game(s, game_id)


async def _admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """A group's admin (or, in a private chat, its owner)."""
    if chat_id > 0:
        return chat_id == user_id
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except Exception:
        return False
    return member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)


async def _set_language(arg: str, update: Update, context: ContextTypes.DEFAULT_TYPE) -> Answer:
    svc = _service(context)
    query = update.callback_query
    user = query.from_user
    target, _, lang = arg.partition("=")
    if lang not in ("fa", "en") or target not in ("c", "u"):
        tr = await svc.user_tr(user.id)
        return Answer(tr("This button is not valid"), alert=True)
    _ = get_translator(lang)  # the confirmation speaks the language just chosen
    done = _("Language: English") if lang == "en" else _("Language: Persian")
    chat = query.message.chat if query.message else None
    if target == "c":
        if chat is None:  # an inline message: no chat to set
            tr = await svc.user_tr(user.id)
            return Answer(tr("This button is not valid"), alert=True)
        if not await _admin(context, chat.id, user.id):
            tr = await svc.user_tr(user.id)
            return Answer(tr("Only a group admin can change the group's language"), alert=True)
        async with svc.sessions.begin() as s:
            await repo.get_or_create_chat(s, chat.id, chat.type, chat.title)
            await repo.set_chat_language(s, chat.id, lang)
        svc.forget_chat_lang(chat.id)
    else:
        async with svc.sessions.begin() as s:
            await repo.get_or_create_user(
                s, user.id, user.first_name, user.username, user.language_code
            )
            await repo.set_user_language(s, user.id, lang)
            if chat is not None and chat.id == user.id:  # a solo table lives here
                await repo.set_chat_language(s, user.id, lang)
        svc.forget_lang(user.id)
        svc.forget_chat_lang(user.id)
    if query.message is not None:
        try:
            await query.edit_message_text(done)
        except TelegramError as exc:
            log.info("could not edit the language message: %s", exc)
    return Answer(done)


# --------------------------------------------------------------- inline mode


async def inline_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """From the group: a player sees only their own legal cards and picks one.

    When there is nothing to play, the answer is no result and a button above the
    (empty) list that says why and opens the private chat, where the hand is."""
    query = update.inline_query
    svc = _service(context)
    tr = await _user_tr(update, context)  # also for someone who never wrote to the bot
    game = await svc.game_for_user(query.from_user.id)
    results = []
    hint = tr("You are not in a game right now.")
    if game is not None and game.status == "playing" and game.state:
        from core import Match

        match = Match.from_json(game.state)
        seat = _seat_of(game, match, query.from_user.id)
        if seat is not None and match.phase is Phase.PLAY and match.turn == seat:
            for card in match.legal_cards(seat):
                results.append(
                    InlineQueryResultArticle(
                        id=cb.encode("p", game.id, match.hand_no, card.ascii),
                        title=render.card_label(card),
                        description=tr("Play this card"),
                        input_message_content=InputTextMessageContent(
                            f"🃏 {render.card_label(card)}"
                        ),
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
    svc = _service(context)
    try:
        card = parse_card(data.arg)
    except ValueError:
        return
    await svc.act(
        data.game_id, data.move, chosen.from_user.id, lambda m, s: PlayCard(card), by_hand=True
    )


# ------------------------------------------------------------------ errors


#: Bad requests that come from the world moving on, not from a bug of ours.
_EXPECTED_BAD_REQUESTS = (
    "query is too old",
    "query id is invalid",
    "message is not modified",
    "message to edit not found",
    "message can't be edited",
    "message to be replied not found",
    "chat not found",
    "not enough rights",
    "have no rights",
    "user not found",
)


def expected_api_error(error: BaseException | None) -> bool:
    """Telegram refusing for reasons outside the bot: flood limits, a blocked
    bot, a removed group, an old query, the network. One log line, no traceback."""
    if isinstance(error, RetryAfter | Forbidden | TimedOut | NetworkError) and not isinstance(
        error, BadRequest
    ):
        return True
    if isinstance(error, BadRequest):
        message = str(error).lower()
        return any(text in message for text in _EXPECTED_BAD_REQUESTS)
    return False


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    update_id = getattr(update, "update_id", "?")
    if expected_api_error(context.error):
        log.warning(
            "update %s: Telegram refused: %s: %s",
            update_id,
            type(context.error).__name__,
            context.error,
        )
        return
    log.error("update %s failed", update_id, exc_info=context.error)


def register(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(CommandHandler("start", start))
    app.add_handler(CommandHandler("help", help_command))
    app.add_handler(CommandHandler("rules", rules))
    app.add_handler(ChatMemberHandler(greet, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_handler(CommandHandler(["newgame", "hokm"], new_game))
    app.add_handler(CommandHandler("play", play_solo))
    app.add_handler(CommandHandler("language", language))
    app.add_handler(CommandHandler("score", score))
    app.add_handler(CommandHandler("stats", stats))
    app.add_handler(CommandHandler("back", back))
    app.add_handler(CommandHandler("cancel", cancel))
    app.add_handler(CommandHandler("leave", leave))
    app.add_handler(CommandHandler("takeover", takeover))
    app.add_handler(CommandHandler("quit", quit_command))
    app.add_handler(CommandHandler("review", review.command))
    app.add_handler(CommandHandler("hints", hints.command))
    # In a group of its own: it sees every group message, and the commands still run.
    app.add_handler(MessageHandler(filters.ChatType.GROUPS, track_group_message), group=-1)
    app.add_handler(CallbackQueryHandler(button))
    app.add_handler(InlineQueryHandler(inline_query))
    app.add_handler(ChosenInlineResultHandler(chosen_inline))
    app.add_error_handler(on_error)
