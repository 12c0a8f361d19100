"""Moves: a person's press applied to the match, stored, and its result recorded.

A press is refused at once when it is known to be stale (see ``_known_stale``),
otherwise checked against the stored game under its lock; an accepted action is
committed with the next move number before anything is sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from core import Action, ErrorCode, Event, HandKind, IllegalAction, Match
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service import hands
from telegram_bot.service.base import Answer, ServiceBase, _seat_of

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


class MovesMixin(ServiceBase):
    async def act(
        self,
        game_id: str,
        move: int | None,
        user_id: int,
        build: Callable[[Match, int], Action | Answer],
        *,
        by_hand: bool = False,
        on_commit: Callable[[], Awaitable[Any]] | None = None,
    ) -> Answer:
        """Apply a human's action if the press is current and legal.

        ``move`` is the move number the button was drawn for, or with ``by_hand``
        the hand number (card buttons stay valid for their whole hand). A press
        known to be stale is refused at once, without waiting for the game's lock.
        ``on_commit`` runs (in the background) as soon as the action is stored,
        before the messages are redrawn: it answers the press.
        """
        tr = await self.user_tr(user_id)
        stale = self._known_stale(game_id, move, by_hand, tr)
        if stale is not None:
            return stale
        async with self._locks[game_id]:
            async with self.outbox.transaction() as s:
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
                info = game.seats[match.order[seat]]
                info.pop("timed_out", None)
                info["timeouts"] = 0
                await self._commit(s, game, match, events)
                if not self._computers_follow(game, match, events):
                    await self._render(s, game, match, events)
            self._note_progress(game, match)
            if on_commit is not None:
                self._spawn(on_commit())
        self._after_commit(game, match)
        return Answer()

    def _note_progress(self, game: Game, match: Match | None) -> None:
        """Remember how far a game in progress is, as stored (moves and hands only go
        forward, so an old note is safe: it only refuses less). A game that is over
        is forgotten: its presses are refused from the database, under a free lock."""
        if game.status != "playing" or match is None or match.is_over:
            self._progress.pop(game.id, None)
            return
        old = self._progress.get(game.id, (0, 0))
        self._progress[game.id] = (max(old[0], game.move), max(old[1], match.hand_no))

    def _known_stale(
        self, game_id: str, move: int | None, by_hand: bool, tr: Translator
    ) -> Answer | None:
        """The refusal for a press on a button already known to be outdated."""
        known = self._progress.get(game_id)
        if known is None or move is None:
            return None
        current_move, hand_no = known
        if move < (hand_no if by_hand else current_move):
            return Answer(tr("This button belongs to an earlier hand"), alert=True)
        return None

    async def _load_seat(
        self, s: AsyncSession, game_id: str, user_id: int, tr: Translator
    ) -> tuple[Game, Match, int] | Answer:
        """The game in progress (its row locked) and the user's seat in it, or the
        alert to show."""
        game = await repo.get_game(s, game_id, lock=True)
        if game is None or game.status != "playing":
            if game is not None:
                self._note_progress(game, None)
            return Answer(tr("This button belongs to an earlier game"), alert=True)
        match = Match.from_json(game.state)
        self._note_progress(game, match)
        seat = _seat_of(game, match, user_id)
        if seat is None:
            return Answer(tr("You are not playing in this game"), alert=True)
        return game, match, seat

    async def set_away(self, game_id: str, user_id: int, away: bool) -> Answer:
        tr = await self.user_tr(user_id)
        async with self._locks[game_id]:
            async with self.outbox.transaction() as s:
                loaded = await self._load_seat(s, game_id, user_id, tr)
                if isinstance(loaded, Answer):
                    return loaded
                game, match, seat = loaded
                info = game.seats[match.order[seat]]
                info["away"] = away
                info["timeouts"] = 0
                info.pop("timed_out", None)
                self._arm_deadline(game, match)
                await repo.save_game(s, game, game.move)
                if not away:
                    await self._redeal(s, game, match, seat, user_id)
                await self._render(s, game, match, [])
        self._after_commit(game, match)
        return Answer(tr("Welcome back!") if not away else None)

    async def _commit(self, s: AsyncSession, game: Game, match: Match, events: list[Event]) -> None:
        """Persist an accepted action (and a finished match's result) in one transaction."""
        await hands.record_finished(s, game, match, events)  # before game.state moves on
        expected = game.move
        game.move += 1
        game.state = match.to_json()
        if match.is_over:
            game.status = "finished"
            game.deadline = None
            await self._record_result(s, game, match)
        else:
            self._arm_deadline(game, match)
        await repo.save_game(s, game, expected)

    async def _record_result(self, s: AsyncSession, game: Game, match: Match) -> None:
        v = match.variant
        hands_won = [0] * v.sides
        kots = [0] * v.sides
        for h in match.history:
            if h["winner"] is not None:
                hands_won[h["winner"]] += 1
                if h["kind"] in (HandKind.KOT, HandKind.HAKEM_KOT):
                    kots[h["winner"]] += 1
        players = []
        for seat in range(match.n):
            info = game.seats[match.order[seat]]
            players.append(
                {
                    "user_id": info.get("user_id"),
                    "name": info.get("name") or "",
                    "side": v.side_of(seat),
                    "bot": info.get("bot"),
                    # A computer is named by its seat in the lobby ("Computer 4").
                    "number": match.order[seat] + 1,
                }
            )
        await repo.record_match_result(
            s,
            chat_id=game.chat_id,
            game_id=game.id,
            variant=f"{v.players}p-{v.kind}",
            target=v.target,
            scores=match.scores,
            winner_side=match.winner,
            hands_played=len(match.history),
            players=players,
            hands_won=hands_won,
            kots=kots,
        )


def _error_text(exc: IllegalAction, tr: Translator) -> str:
    text = tr(ERROR_TEXTS.get(exc.code, ERROR_TEXTS[ErrorCode.UNKNOWN_ACTION]))
    if exc.code is ErrorCode.MUST_FOLLOW_SUIT:
        suit = exc.info.get("led_suit")
        return text.format(suit=tr(render.SUIT_NAMES[suit]) if suit is not None else "")
    return text
