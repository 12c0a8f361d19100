"""Ways out of a game: end it, leave it, take a seat over, /quit a solo match, and
the end of a game nobody moved in for hours.

- The lobby owner or a group admin ends a game (/cancel, confirmed by a button).
- A player leaves a running match (/leave): a computer player takes the seat; when no
  person is left, the match ends.
- Anyone takes over a computer's or an away player's seat of a running group match
  (/takeover): the hand message comes to them, the away player's says who took it.
- /quit ends a solo /play match.
- A game with no move for the idle time (HOKM_IDLE_HOURS) ends, timer or not, and frees
  its group and players (see :mod:`telegram_bot.service.sweeper`).

Each change is stored in the game row in the same transaction as the messages that
tell it (the durable outbox), so a restart at any moment loses nothing. An ended match
keeps its engine state with the status ``cancelled``: abandoned, never recorded as a
result, so no tally and no leaderboard changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from core import Match
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import CANCELLED, LOBBY, PLAYING, Game
from telegram_bot.service.answer import Answer
from telegram_bot.service.clock import Clock
from telegram_bot.service.lobby import BUSY, Lobby
from telegram_bot.service.progress import Progress
from telegram_bot.service.seats import human_seat, seat_of
from telegram_bot.service.shared import Shared
from telegram_bot.service.views import Views

__all__ = ["REASONS", "Exits", "end_question_markup", "is_abandoned"]

ENDED_HEAD = N_("<b>Hokm</b> · the match ended early")
ENDED_BY = N_("{name} ended the match. It does not count for anyone.")
EVERYONE_LEFT = N_("Everyone left the match, so it ended. It does not count for anyone.")
QUIT = N_("You ended your solo match. It does not count.")
TOPIC_GONE = N_(
    "The topic of this table was closed or deleted, so the game ended. "
    "It does not count for anyone."
)
LEFT = N_("{name} left the match; {computer} plays the seat now.")
YOU_LEFT = N_("You left the match; a computer player took your seat. It does not count for you.")
YOU_LEFT_RATED = N_(
    "You left the match; a computer player took your seat. It counts as lost for you."
)
TOOK_OVER = N_("{name} took over the seat of {old}.")
YOU_TOOK_OVER = N_("You took over the seat of {old}: your cards are in your private chat with me.")
YOUR_SEAT_TAKEN = N_("{name} took over your seat.")
NOT_OVER = N_("This match is already over.")
ASK_END = N_("End this match? It will not count for anyone.")
YES_END = N_("Yes, end the match")
NO_KEEP = N_("No, keep playing")
GOES_ON = N_("The match goes on.")
WAS_ENDED = N_("The match was ended.")
ONLY_OWNER = N_("Only the player who opened the game or a group admin can do that")
#: The same question for a lobby: nothing has been played, so nothing to count.
ASK_CANCEL = N_("Cancel this game?")
YES_CANCEL = N_("Yes, cancel the game")
NO_CANCEL = N_("No, keep it open")
STAYS_OPEN = N_("The game stays open.")
WAS_CANCELLED = N_("The game was cancelled.")

#: Why a game ended without a winner.
REASONS = ("ended", "idle", "left", "quit", "topic")


def is_abandoned(game: Game) -> bool:
    """A match that started and ended without a winner (never counted)."""
    return game.status == CANCELLED and game.state is not None


def _idle_text(tr: Translator, hours: float, started: bool) -> str:
    n = max(1, round(hours))
    if started:
        return tr.ngettext(
            "The match ended after {n} hour without a move. It does not count for anyone.",
            "The match ended after {n} hours without a move. It does not count for anyone.",
            n,
        )
    return tr.ngettext(
        "The game was cancelled after {n} hour without a move.",
        "The game was cancelled after {n} hours without a move.",
        n,
    )


def _reason_text(tr: Translator, reason: str, name: str | None, hours: float, started: bool) -> str:
    if reason == "idle":
        return _idle_text(tr, hours, started)
    if reason == "left":
        return tr(EVERYONE_LEFT)
    if reason == "quit":
        return tr(QUIT)
    if reason == "topic":
        return tr(TOPIC_GONE)
    if not started:
        return tr("The game was cancelled.")
    return tr(ENDED_BY).format(name=render.user_name(name))


class Exits:
    """Ways out of a game, and seats changing hands (see the module's text)."""

    def __init__(
        self,
        shared: Shared,
        *,
        views: Views,
        clock: Clock,
        progress: Progress,
        lobby: Lobby,
    ) -> None:
        self._shared = shared
        self._views = views
        self._clock = clock
        self._progress = progress
        self._lobby = lobby

    async def _active_game(self, chat_id: int, thread_id: int | None = None) -> Game | None:
        async with self._shared.sessions() as s:
            return await repo.get_active_game(s, chat_id, thread_id)

    async def _game_for_user(self, user_id: int) -> Game | None:
        async with self._shared.sessions() as s:
            return await repo.find_active_game_for_user(s, user_id)

    async def abandon(
        self,
        s: AsyncSession,
        game: Game,
        reason: str,
        *,
        name: str | None = None,
        hours: float = 0.0,
    ) -> None:
        """End ``game`` (read in this transaction) without a winner, and say why on the
        table and in every person's hand message. The caller holds the game's lock."""
        assert reason in REASONS
        started = game.state is not None
        expected = game.move
        game.status = CANCELLED
        game.deadline = None
        game.due_at = None
        game.move += 1
        await repo.save_game(s, game, expected)
        await self._shared.announce(s, game.id, game.move)
        gtr = await self._shared.translators.chat(game.chat_id, s)
        why = _reason_text(gtr, reason, name, hours, started)
        if not started:
            await self._shared.outbox.edit(
                s, game.chat_id, why, None, slot=repo.table_slot(game.id), thread=game.thread_id
            )
            return
        match = Match.from_json(game.state)
        names = render.seat_names(game, match, gtr)
        view = match.view(None)
        table = [gtr(ENDED_HEAD), "", *render.side_lines(view, names, gtr), "", why]
        await self._shared.outbox.edit(
            s,
            game.chat_id,
            "\n".join(table),
            None,
            slot=repo.table_slot(game.id),
            thread=game.thread_id,
        )
        for uid in game.user_ids():
            if uid == game.chat_id:
                # A solo match: the table just said why, in this same chat; the hand goes.
                await self._shared.outbox.delete(s, uid, slot=repo.hand_slot(game.id, uid))
                continue
            tr = await self._shared.translators.user(uid, s)
            text = _reason_text(tr, reason, name, hours, started)
            await self._shared.outbox.edit(s, uid, text, None, slot=repo.hand_slot(game.id, uid))

    def released(self, game: Game) -> None:
        """After the commit: the game's timer and computer players go."""
        self._progress.note(game, None)
        if game.state is not None:
            self._clock.after_commit(game, Match.from_json(game.state))

    async def end_game(
        self,
        game_id: str,
        user: Any,
        is_admin: Callable[[], Awaitable[bool]],
        reason: str = "ended",
    ) -> Answer:
        """End a lobby or a running match, if ``user`` may (the owner or a group admin)."""
        tr = await self._shared.translators.user(user.id)
        async with self._shared.sessions() as s:
            game = await repo.get_game(s, game_id)
        if game is None or game.status not in (LOBBY, PLAYING):
            return Answer(tr(NOT_OVER), alert=True)
        # Asked before the row is locked: it may be a call to Telegram.
        if user.id != game.owner_id and not await is_admin():
            return Answer(tr(ONLY_OWNER), alert=True)
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or game.status not in (LOBBY, PLAYING):
                    return Answer(tr(NOT_OVER), alert=True)
                await self.abandon(s, game, reason, name=user.first_name)
        self.released(game)
        if reason == "quit":
            return Answer()  # the table, in the same private chat, says it already
        if game.state is None:
            return Answer(tr("The game was cancelled."))
        return Answer(tr(ENDED_BY).format(name=render.user_name(user.first_name)))

    async def ask_to_end(self, game: Game, user_id: int) -> None:
        """Post, in the game's chat, the question whether to end it, with Yes and No."""
        gtr = await self._shared.translators.chat(game.chat_id)
        lobby = game.status == LOBBY  # not started: cancelled, not ended
        markup = end_question_markup(game, gtr)
        question = gtr(ASK_CANCEL if lobby else ASK_END)
        async with self._shared.outbox.transaction() as s:
            await self._shared.outbox.send(s, game.chat_id, question, markup, thread=game.thread_id)

    async def quit_solo(self, user: Any) -> Answer:
        """/quit: end the user's solo /play match (its table is their private chat)."""
        tr = await self._shared.translators.user(user.id)
        game = await self._active_game(user.id)
        if game is None:
            return Answer(tr("You have no solo match to end. To leave a group match, send /leave."))
        return await self.end_game(game.id, user, _yes, reason="quit")

    def _rearm(self, game: Game, match: Match) -> None:
        """After a seat changed hands: the timer or the computers, as the seat on turn needs."""
        self._progress.note(game, match)
        self._clock.after_commit(game, match)

    async def _save_new_move(self, s: AsyncSession, game: Game, match: Match) -> None:
        """Store changed seats as a new move: a timer or a computer move armed for the old
        seat sees the move changed and stands down."""
        expected = game.move
        game.move += 1
        self._clock.arm(game, match)
        await repo.save_game(s, game, expected)
        await self._shared.announce(s, game.id, game.move)

    async def leave(self, user: Any) -> Answer:
        """/leave: a computer player takes the user's seat in their running match."""
        tr = await self._shared.translators.user(user.id)
        game = await self._game_for_user(user.id)
        if game is None:
            return Answer(tr("You are not in a game right now."))
        if game.status == LOBBY:
            return await self._lobby.action(game.id, user, "l", "", _no)
        if game.chat_id == user.id:
            return await self.end_game(game.id, user, _yes, reason="quit")
        async with self._shared.locks[game.id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game.id, lock=True)
                if game is None or game.status != PLAYING:
                    return Answer(tr("You are not in a game right now."))
                match = Match.from_json(game.state)
                seat = seat_of(game, match, user.id)
                if seat is None:
                    return Answer(tr("You are not in a game right now."))
                index = match.order[seat]
                seats = [dict(x) for x in game.seats]
                seats[index] = {"bot": game.settings.get("level", "normal")}
                game.seats = seats
                left = tr(YOU_LEFT_RATED if _rated(game) else YOU_LEFT)
                await self._shared.outbox.edit(
                    s, user.id, left, None, slot=repo.hand_slot(game.id, user.id)
                )
                if not game.user_ids():
                    await self.abandon(s, game, "left")
                    ended = True
                else:
                    ended = False
                    await self._save_new_move(s, game, match)
                    gtr = await self._shared.translators.chat(game.chat_id, s)
                    computer = render.player_name(seats[index], index, gtr)
                    await self._shared.outbox.send(
                        s,
                        game.chat_id,
                        gtr(LEFT).format(name=render.user_name(user.first_name), computer=computer),
                        thread=game.thread_id,
                    )
                    await self._views.render(s, game, match, [])
        if ended:
            self.released(game)
        else:
            self._rearm(game, match)
        return Answer(left)

    async def takeover_choices(
        self, chat_id: int, user: Any, thread_id: int | None = None
    ) -> tuple[Answer, InlineKeyboardMarkup | None, int | None]:
        """/takeover in a group (in forum topic ``thread_id``): the answer, seat buttons
        when there is a choice, and the seat to take at once when there is exactly one."""
        tr = await self._shared.translators.user(user.id)
        game = await self._active_game(chat_id, thread_id)
        if game is None or game.status != PLAYING or game.chat_id > 0:
            return Answer(tr("No match is running in this group.")), None, None
        mine = next((x for x in game.seats if x.get("user_id") == user.id), None)
        if mine is not None:
            if mine.get("away"):
                return Answer(tr("Send /back to play your seat again.")), None, None
            return Answer(tr("You are already playing in this match.")), None, None
        seats = _free_seats(game)
        if not seats:
            return Answer(tr("There is no computer or away seat to take over.")), None, None
        if len(seats) == 1:
            return Answer(), None, seats[0]
        names = render.seat_names(game, None, tr)
        rows = []
        for i in seats:
            label = names[i]
            if game.seats[i].get("away"):
                label += " · " + tr("away (the computer plays)")
            rows.append(
                [InlineKeyboardButton(label, callback_data=cb.encode("w", game.id, None, str(i)))]
            )
        return Answer(tr("Which seat will you take over?")), InlineKeyboardMarkup(rows), None

    async def take_over(self, game_id: str, user: Any, index: int) -> Answer:
        """Seat ``user`` at lobby seat ``index`` (a computer or an away player) of a running
        group match: they get the hand message; an away player's says who took the seat."""
        tr = await self._shared.translators.user(user.id)
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                db_user = await repo.get_or_create_user(
                    s, user.id, user.first_name, user.username, user.language_code
                )
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or game.status != PLAYING or game.chat_id > 0:
                    return Answer(tr("No match is running in this group."), alert=True)
                if not db_user.started_bot:
                    return Answer(
                        tr("Open the bot in private to get your cards"),
                        url=f"https://t.me/{self._shared.config.bot_username}?start=hand",
                    )
                other = await repo.find_active_game_for_user(s, user.id)
                if other is not None:
                    text = (
                        tr("You are already playing in this match.")
                        if other.id == game.id
                        else tr(BUSY)
                    )
                    return Answer(text, alert=True)
                if index not in _free_seats(game):
                    return Answer(tr("That seat is no longer free."), alert=True)
                match = Match.from_json(game.state)
                gtr = await self._shared.translators.chat(game.chat_id, s)
                old_seat = game.seats[index]
                old_name = render.player_name(old_seat, index, gtr)
                seats = [dict(x) for x in game.seats]
                seats[index] = human_seat(user)
                game.seats = seats
                await self._save_new_move(s, game, match)
                seat = match.order.index(index)
                await self._views.send_hand(s, game, match, seat, user.id)
                away_uid = old_seat.get("user_id")
                if away_uid:
                    atr = await self._shared.translators.user(away_uid, s)
                    await self._shared.outbox.edit(
                        s,
                        away_uid,
                        atr(YOUR_SEAT_TAKEN).format(name=render.user_name(user.first_name)),
                        None,
                        slot=repo.hand_slot(game.id, away_uid),
                    )
                await self._shared.outbox.send(
                    s,
                    game.chat_id,
                    gtr(TOOK_OVER).format(name=render.user_name(user.first_name), old=old_name),
                    thread=game.thread_id,
                )
                await self._views.render(s, game, match, [])
                utr_old = render.player_name(old_seat, index, tr)
        self._rearm(game, match)
        return Answer(tr(YOU_TOOK_OVER).format(old=utr_old))


def _rated(game: Game) -> bool:
    """A rated online match (leaving it loses it for rating purposes)."""
    return bool(((game.settings or {}).get("online") or {}).get("rated"))


def _free_seats(game: Game) -> list[int]:
    """Seats (by lobby index) a person may take over: computers and away players."""
    return [i for i, x in enumerate(game.seats) if x.get("bot") or x.get("away")]


def end_question_markup(game: Game, gtr: Translator) -> InlineKeyboardMarkup:
    """Yes and No under "End this match?" (or, for a lobby, "Cancel this game?")."""
    lobby = game.status == LOBBY
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    gtr(YES_CANCEL if lobby else YES_END),
                    callback_data=cb.encode("e", game.id, None, "1"),
                ),
                InlineKeyboardButton(
                    gtr(NO_CANCEL if lobby else NO_KEEP),
                    callback_data=cb.encode("e", game.id, None, "0"),
                ),
            ]
        ]
    )


async def _yes() -> bool:
    return True


async def _no() -> bool:
    return False
