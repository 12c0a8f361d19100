"""Moves: a person's press applied to the match, stored, and its result recorded.

A press is refused at once when it is known to be stale (see :mod:`.progress`),
otherwise checked against the stored game under its lock; an accepted action is
committed with the next move number before anything is sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from core import Action, ErrorCode, IllegalAction, Match
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service.answer import Answer, Refused
from telegram_bot.service.clock import Clock
from telegram_bot.service.progress import Progress
from telegram_bot.service.seats import seat_of
from telegram_bot.service.shared import Shared
from telegram_bot.service.views import Views

__all__ = ["ERROR_TEXTS", "Table"]

#: Error codes from core, as the player reads them.
ERROR_TEXTS = {
    ErrorCode.NOT_YOUR_TURN: N_("Not your turn"),
    ErrorCode.WRONG_PHASE: N_("That is not possible right now"),
    ErrorCode.CARD_NOT_IN_HAND: N_("That card is not in your hand"),
    ErrorCode.MUST_FOLLOW_SUIT: N_("You must follow the led suit ({suit})"),
    ErrorCode.UNKNOWN_CARD: N_("Unknown card"),
    ErrorCode.SPADES_NOT_BROKEN: N_(
        "Spades cannot be led until a spade has been played on another suit"
    ),
    ErrorCode.BAD_BID: N_("Bid 0 to 13 tricks"),
    ErrorCode.BAD_DISCARD: N_("Choose exactly two cards"),
    ErrorCode.BAD_EXCHANGE: N_("Choose at most three cards"),
    ErrorCode.NO_SUCH_SEAT: N_("You are not playing in this game"),
    ErrorCode.MATCH_OVER: N_("This match is over"),
    ErrorCode.UNKNOWN_ACTION: N_("This button is not valid"),
}


#: "I'm back" (or /back) from a player whose seat nobody plays for them.
NOT_AWAY = N_("You were not away: your seat is still yours.")


class Table:
    """A person's moves on a running match: a press, being away and back."""

    def __init__(
        self,
        shared: Shared,
        *,
        views: Views,
        clock: Clock,
        progress: Progress,
    ) -> None:
        self._shared = shared
        self._views = views
        self._clock = clock
        self._progress = progress

    async def act(
        self,
        game_id: str,
        move: int | None,
        user_id: int,
        build: Callable[[Match, int], Action | Answer],
        *,
        by_hand: bool = False,
        on_commit: Callable[[], Awaitable[Any]] | None = None,
        press: tuple[str, Answer] | None = None,
    ) -> Answer:
        """Apply a human's action if the press is current and legal.

        ``move`` is the move number the button was drawn for, or with ``by_hand``
        the hand number (card buttons stay valid for their whole hand). A press
        known to be stale is refused at once, without waiting for the game's lock.
        ``on_commit`` runs (in the background) as soon as the action is stored,
        before the messages are redrawn: it answers the press, and returns False if
        it could not. ``press`` (the callback query's id and that answer) stores the
        answer with the move, so that a press whose handler is killed before it
        answers is answered after the restart (see ``Outbox.answer``).
        """
        tr = await self._shared.translators.user(user_id)
        stale = self._progress.stale(game_id, move, by_hand, tr)
        if stale is not None:
            return stale
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                loaded = await self._load_seat(s, game_id, user_id, tr)
                if isinstance(loaded, Answer):
                    return loaded
                game, match, seat = loaded
                if move is not None and move != (match.hand_no if by_hand else game.move):
                    return Answer(tr("This button belongs to an earlier hand"), alert=True)
                built = build(match, seat)
                if isinstance(built, Answer):
                    return built
                try:
                    events = match.apply(seat, built)
                except IllegalAction as exc:
                    return Answer(_error_text(exc, tr), alert=True)
                if press is not None:
                    query_id, answer = press
                    await self._shared.outbox.answer(
                        s, user_id, query_id, answer.text, answer.alert
                    )
                await self._store(s, game, match, seat, events)
            self._progress.note(game, match)
            if on_commit is not None:
                self._shared.background.spawn(self._answer(on_commit, press))
        self._clock.after_commit(game, match)
        return Answer()

    async def play(self, game_id: str, user_id: int, move: int, action: Action) -> None:
        """The Mini App's move: the same path as a press (the game's lock, the move
        number, one transaction with the outbox's messages, the clock after commit),
        for a caller that shows its own words: raises :class:`Refused` (nothing is
        stored then)."""
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or game.state is None:
                    raise Refused("no_such_game")
                match = Match.from_json(game.state)
                seat = seat_of(game, match, user_id)
                if seat is None:
                    raise Refused("not_seated")
                if game.status != "playing" or match.is_over:
                    raise Refused("not_playing")
                if move != game.move:
                    raise Refused("stale_move", move=game.move)
                try:
                    events = match.apply(seat, action)
                except IllegalAction as exc:
                    raise Refused(str(exc.code)) from None
                await self._store(s, game, match, seat, events)
            self._progress.note(game, match)
        self._clock.after_commit(game, match)

    async def page_closed(self, game_id: str, user_id: int) -> None:
        """The Mini App's page of ``game_id`` closed for ``user_id`` (their last event
        stream in the process that served it): unless another is open (a tab, another
        process), their chat messages are brought up to date (see
        :meth:`.views.Views.page_closed`)."""
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game_id)
                if game is None or game.state is None or game.status != "playing":
                    return
                match = Match.from_json(game.state)
                seat = seat_of(game, match, user_id)
                if seat is None or user_id in await self._views.watching(s, game):
                    return
                await self._views.page_closed(s, game, match, seat)

    async def _store(
        self, s: AsyncSession, game: Game, match: Match, seat: int, events: list[Any]
    ) -> None:
        """A person's accepted action: committed with the next move, and shown."""
        info = game.seats[match.order[seat]]
        info.pop("timed_out", None)
        info["timeouts"] = 0
        follow = self._clock.computers_follow(game, match, events)
        if follow:
            # Shown with the computers' cards, by the move that plays them (maybe in
            # another process): the row tells that move whose hand it must edit too.
            info["unshown"] = True
        await self._clock.commit(s, game, match, events)
        if not follow:
            await self._views.render(s, game, match, events)

    async def _answer(
        self, on_commit: Callable[[], Awaitable[Any]], press: tuple[str, Answer] | None
    ) -> None:
        ok = await on_commit()
        if press is not None:
            self._shared.outbox.answered(press[0], ok is not False)

    async def _load_seat(
        self, s: AsyncSession, game_id: str, user_id: int, tr: Translator
    ) -> tuple[Game, Match, int] | Answer:
        """The game in progress (its row locked) and the user's seat in it, or the
        alert to show."""
        game = await repo.get_game(s, game_id, lock=True)
        if game is None or game.status != "playing":
            if game is not None:
                self._progress.note(game, None)
            return Answer(tr("This button belongs to an earlier game"), alert=True)
        match = Match.from_json(game.state)
        self._progress.note(game, match)
        seat = seat_of(game, match, user_id)
        if seat is None:
            return Answer(tr("You are not playing in this game"), alert=True)
        return game, match, seat

    async def set_away(self, game_id: str, user_id: int, away: bool) -> Answer:
        """The player leaves their seat to the computer for a while, or is back."""
        tr = await self._shared.translators.user(user_id)
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                loaded = await self._load_seat(s, game_id, user_id, tr)
                if isinstance(loaded, Answer):
                    return loaded
                game, match, seat = loaded
                info = game.seats[match.order[seat]]
                if not away and not (info.get("away") or info.get("timed_out")):
                    return Answer(tr(NOT_AWAY))  # nothing to come back from
                info["away"] = away
                info["timeouts"] = 0
                info.pop("timed_out", None)
                # A move of its own, as a seat taken over is: a timer or a computer
                # armed for the old one stands down, and the open pages are told.
                expected = game.move
                game.move += 1
                self._clock.arm(game, match)
                await repo.save_game(s, game, expected)
                await self._shared.announce(s, game.id, game.move)
                if not away:
                    await self._views.redeal(s, game, match, seat, user_id)
                await self._views.render(s, game, match, [])
        self._clock.after_commit(game, match)
        return Answer(tr("Welcome back!") if not away else None)


def _error_text(exc: IllegalAction, tr: Translator) -> str:
    text = tr(ERROR_TEXTS.get(exc.code, ERROR_TEXTS[ErrorCode.UNKNOWN_ACTION]))
    if exc.code is ErrorCode.MUST_FOLLOW_SUIT:
        suit = exc.info.get("led_suit")
        return text.format(suit=tr(render.SUIT_NAMES[suit]) if suit is not None else "")
    return text
