"""Views: what each move shows, decided in the move's transaction into the outbox.

The table message in the game's chat, the results, the reposts and pings, and each
player's hand message (only the hands a move changes are edited).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from telegram import InlineKeyboardMarkup

from core import CardPlayed, Event, HandEnded, Match, MatchEnded, TrickWon
from telegram_bot.chat import render
from telegram_bot.chat.i18n import Translator
from telegram_bot.chat.keyboards import PlainKeyboard
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service import pings, reposts, review
from telegram_bot.service.base import ServiceBase, _seat_of


class ViewsMixin(ServiceBase):
    async def _show_table(
        self,
        s: AsyncSession,
        game: Game,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None,
    ) -> None:
        await self.outbox.edit(s, game.chat_id, text, markup, slot=repo.table_slot(game.id))

    def _private_text(self, game: Game, match: Match, seat: int, tr: Translator) -> str:
        text = render.private_text(game, match, seat, tr)
        if game.seats[match.order[seat]].get("timed_out"):
            text = tr("Time is up; the computer played for you") + "\n" + text
        return text

    async def _render(self, s: AsyncSession, game: Game, match: Match, events: list[Event]) -> None:
        """Decide, in the move's transaction, what every chat of the game shows now."""
        gtr = await self.chat_tr(game.chat_id, s)
        table = render.table_text(game, match, gtr)
        keyboard = render.table_keyboard(game, match, gtr)
        repost = await reposts.due(self, s, game, match, events)
        if not repost:
            await self._show_table(s, game, table, keyboard)
        for e in events:
            if isinstance(e, HandEnded):
                text = render.hand_result_text(e, game, match, gtr)
                await self.outbox.send(s, game.chat_id, text, review.button(game, match, e, gtr))
            elif isinstance(e, MatchEnded):
                await self.outbox.send(s, game.chat_id, render.match_result_text(game, match, gtr))
        if repost:  # below the hand result
            await reposts.repost(self, s, game, table, keyboard)
        await pings.before_hands(self, s, game, match, events)
        # A card played by someone else edits only the hand of the player now on turn:
        # each hand message is brought up to date when its player acts or is on turn,
        # and by every deal, trump call and hand result (a card costs 3 calls, not 5).
        everyone = not events or any(not isinstance(e, CardPlayed | TrickWon) for e in events)
        acted = {getattr(e, "seat", None) for e in events}
        for seat in range(match.n):
            uid = game.seats[match.order[seat]].get("user_id")
            if not uid or not (everyone or seat == match.turn or seat in acted):
                continue
            tr = await self.user_tr(uid, s)
            await self.outbox.edit(
                s,
                uid,
                self._private_text(game, match, seat, tr),
                render.private_keyboard(game, match, seat, tr),
                slot=repo.hand_slot(game.id, uid),
            )

    async def _send_hand(
        self, s: AsyncSession, game: Game, match: Match, seat: int, uid: int
    ) -> None:
        tr = await self.user_tr(uid, s)
        await self.outbox.send(
            s,
            uid,
            self._private_text(game, match, seat, tr),
            render.private_keyboard(game, match, seat, tr),
            slot=repo.hand_slot(game.id, uid),
        )

    async def show_selection(self, game_id: str, user_id: int, selected: list[Any]) -> None:
        """Redraw one player's keyboard with cards ticked (discard/exchange)."""
        async with self.outbox.transaction() as s:
            game = await repo.get_game(s, game_id)
            if game is None or game.state is None:
                return
            match = Match.from_json(game.state)
            seat = _seat_of(game, match, user_id)
            if seat is None:
                return
            tr = await self.user_tr(user_id, s)
            await self.outbox.edit(
                s,
                user_id,
                render.private_text(game, match, seat, tr),
                render.private_keyboard(game, match, seat, tr, selected),
                slot=repo.hand_slot(game.id, user_id),
            )
