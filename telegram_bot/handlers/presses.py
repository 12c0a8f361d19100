"""Button presses: decoded, answered once, and handed to the game service."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

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
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, get_translator
from telegram_bot.handlers import online
from telegram_bot.handlers.admin import admin_known, chat_admin
from telegram_bot.handlers.common import language_keyboard, service
from telegram_bot.handlers.errors import expected_api_error, old_query
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import LOBBY, PLAYING
from telegram_bot.service import exits
from telegram_bot.service.answer import Answer
from telegram_bot.service.games import GameService

__all__ = ["CHECKING", "button"]

# The handlers' logger name from before they were split, so log filters still match.
log = logging.getLogger("telegram_bot.handlers.commands")

#: The toast of a press whose result waits for Telegram's word on an admin (the
#: message's edit tells it then).
CHECKING = N_("One moment: asking Telegram whether you are a group admin…")


class _Responder:
    """Answers one button press, once, before any other Bot API call the press
    causes: the messages its service call decides wait for the answer (the outbox's
    hold, see :mod:`telegram_bot.platform.outbox.holding`), and a handler's own calls
    (an admin check, an edit) come after it (:meth:`later`). A play is answered as
    soon as it is committed, before the computers' turns are thought out."""

    def __init__(self, query: Any, hold: Any = None) -> None:
        self.query = query
        self.hold = hold
        self.done = False
        self._later: list[Callable[[], Awaitable[Any]]] = []

    async def __call__(self, answer: Answer) -> bool:
        """False when the answer could not be given (a second call waits for the
        first one's outcome)."""
        if self.done:
            return await asyncio.shield(self._outcome)
        self.done = True
        self._outcome = asyncio.get_running_loop().create_future()
        ok = False
        try:
            await self.query.answer(answer.text, show_alert=answer.alert, url=answer.url)
            ok = True
        except TelegramError as exc:  # e.g. "query is too old": the person moved on
            if old_query(exc):  # answered already (a worker killed after answering), or late
                log.info("a press not answered (an old query): %s", exc)
            else:
                log.warning("could not answer a button press: %s: %s", type(exc).__name__, exc)
        finally:
            self._outcome.set_result(ok)
            if self.hold is not None:
                self.hold.release()
        return ok

    def later(self, call: Callable[[], Awaitable[Any]]) -> None:
        """A Bot API call of the handler's own, made once the press is answered."""
        self._later.append(call)

    async def run_later(self) -> None:
        for call in self._later:
            try:
                await call()
            except TelegramError as exc:
                log.info("after answering a press: %s: %s", type(exc).__name__, exc)


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    svc = service(context)
    with svc.outbox.hold_kicks() as hold:
        respond = _Responder(query, hold)
        await _button(update, context, respond)
    await respond.run_later()


async def _button(update: Update, context: ContextTypes.DEFAULT_TYPE, respond: _Responder) -> None:
    query = update.callback_query
    svc = service(context)
    user = query.from_user
    tr = await svc.user_tr(user.id)
    try:
        data = cb.decode(query.data)
    except cb.MalformedCallback:
        await respond(Answer(tr("This button is not valid"), alert=True))
        return
    try:
        answer = await _dispatch(data, update, context, respond)
    except Exception as exc:  # the press is answered whatever happened
        if old_query(exc):
            log.info("the button %r: an old press: %s", data, exc)
        elif expected_api_error(exc):
            log.warning("the button %r: Telegram refused: %s: %s", data, type(exc).__name__, exc)
        else:
            log.exception("the button %r failed", data)
        answer = Answer(tr("Something went wrong; please try again"), alert=True)
    await respond(answer)


async def _admin(
    context: ContextTypes.DEFAULT_TYPE, respond: _Responder, chat_id: int, user_id: int, tr
) -> bool:
    """Whether the user is the chat's admin: known at once (a private chat, or asked
    of Telegram lately), or else the press is answered first and Telegram asked then
    (what came of it is told by the message's edit)."""
    known = admin_known(context, chat_id, user_id)
    if known is not None:
        return known
    await respond(Answer(tr(CHECKING)))
    return await chat_admin(context, chat_id, user_id)


async def _dispatch(
    data: cb.Callback,
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    respond: _Responder,
) -> Answer:
    svc = service(context)
    user = update.callback_query.from_user
    a = data.action
    if a == "g":
        return await _set_language(data.arg, update, context, respond)
    if a in ("j", "l", "b", "s", "c", "o"):
        game = await _game_chat(svc, data.game_id)
        tr = await svc.user_tr(user.id)

        async def is_admin() -> bool:
            return game is not None and await _admin(context, respond, game.chat_id, user.id, tr)

        if game is not None and game.status == "playing":
            if a != "c":
                return await _lobby_press_in_play(data, game, user, tr)
            if user.id != game.owner_id and not await is_admin():
                return Answer(tr(exits.ONLY_OWNER), alert=True)
            await svc.exits.ask_to_end(game, user.id)
            return Answer((await svc.user_tr(user.id))(exits.ASK_END))
        return await svc.lobby_action(data.game_id, user, a, data.arg, is_admin)
    if a in ("q", "z"):
        return await online.press(data, update, context, respond.later)
    if a == "e":
        return await _end_pressed(data, update, context, respond)
    if a == "w":
        if not data.arg.isdigit():
            return Answer((await svc.user_tr(user.id))("This button is not valid"), alert=True)
        return await svc.exits.take_over(data.game_id, user, int(data.arg))
    if a == "r":
        return await svc.set_away(data.game_id, user.id, False)
    if a == "m":
        return await svc.rematch.press(data.game_id, user)
    if a == "y":
        return await svc.review.press(data.game_id, data.move, user.id)
    if a == "h":
        return await svc.hints.press(data.game_id, data.move, user.id)
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
        press=(update.callback_query.id, done),
    )
    pending = getattr(answer, "selection", None)
    if pending is not None:
        await svc.show_selection(data.game_id, user.id, pending)
        if not pending:
            return Answer(tr("No card selected"))
        cards = " ".join(render.card_text(c) for c in pending)
        return Answer(tr("Selected: {cards}").format(cards=cards))
    return answer if answer.text else done


async def _end_pressed(
    data: cb.Callback, update: Update, context: ContextTypes.DEFAULT_TYPE, respond: _Responder
) -> Answer:
    """The Yes/No under "End this match?": answered first; the question then says
    what came of it."""
    svc = service(context)
    query = update.callback_query
    user = query.from_user
    tr = await svc.user_tr(user.id)
    game = await _game_chat(svc, data.game_id)
    if game is None:
        return Answer(tr("This button is not valid"), alert=True)
    gtr = await svc.chat_tr(game.chat_id)

    def edit(text: str) -> None:
        if query.message is not None:
            respond.later(lambda: query.edit_message_text(text))

    if game.status not in (LOBBY, PLAYING):  # over meanwhile: nothing goes on, nor ends
        edit(gtr(exits.NOT_OVER))
        return Answer(tr(exits.NOT_OVER))
    lobby = game.status == LOBBY

    async def is_admin() -> bool:
        return await _admin(context, respond, game.chat_id, user.id, tr)

    if user.id != game.owner_id and not await is_admin():
        if respond.done:  # answered before Telegram was asked: the question says it
            keep = exits.end_question_markup(game, gtr)
            question = gtr(exits.ASK_CANCEL if lobby else exits.ASK_END)
            if query.message is not None:
                respond.later(
                    lambda: query.edit_message_text(
                        f"{question}\n\n{gtr(exits.ONLY_OWNER)}", reply_markup=keep
                    )
                )
        return Answer(tr(exits.ONLY_OWNER), alert=True)
    goes_on = exits.STAYS_OPEN if lobby else exits.GOES_ON
    if data.arg == "1":
        answer = await svc.exits.end_game(data.game_id, user, _yes)
    else:
        answer = Answer(tr(goes_on))
    if not answer.alert:
        ended = exits.WAS_CANCELLED if lobby else exits.WAS_ENDED
        edit(gtr(goes_on) if data.arg != "1" else gtr(ended))
    elif answer.text == tr(exits.NOT_OVER):  # over meanwhile
        edit(gtr(exits.NOT_OVER))
    return answer


async def _yes() -> bool:
    return True


async def _lobby_press_in_play(data: cb.Callback, game, user, tr) -> Answer:
    """A lobby button pressed once the match runs (an old view of the message)."""
    if data.action == "j":
        return Answer(tr("The game has already started: to take a seat, send /takeover."))
    if data.action == "l":
        return Answer(tr("To leave the match, send /leave."))
    return Answer(tr("The game has already started."))


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


async def _set_language(
    arg: str, update: Update, context: ContextTypes.DEFAULT_TYPE, respond: _Responder
) -> Answer:
    svc = service(context)
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
        tr = await svc.user_tr(user.id)
        if not await _admin(context, respond, chat.id, user.id, tr):
            refused = tr("Only a group admin can change the group's language")
            if respond.done:  # answered before Telegram was asked: the picker says it
                gtr = await svc.chat_tr(chat.id)
                picker = gtr("Choose the language")
                refused_here = gtr("Only a group admin can change the group's language")
                respond.later(
                    lambda: query.edit_message_text(
                        f"{picker}\n\n{refused_here}",
                        reply_markup=language_keyboard("c"),
                    )
                )
            return Answer(refused, alert=True)
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
        respond.later(lambda: query.edit_message_text(done))
    return Answer(done)
