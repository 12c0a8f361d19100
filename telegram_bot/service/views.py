"""Views: what each move shows, decided in the move's transaction into the outbox.

The table message in the game's chat, the results, the reposts, and each player's
hand message (only the hands a move changes are edited; after the trump call the
others' hands are posted anew, so that it notifies them).

Which hands a move changes is not read from its events alone: a person's card that
computers follow is stored without a render (it is shown with theirs, one edit later,
by another transaction, maybe by the next process after a kill). So each hand's
essentials (its cards, whether it is that player's turn, the phase) as last decided
are remembered, and a hand whose essentials differ, or that this process has not
decided since it started, is edited too.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from telegram import InlineKeyboardMarkup

from core import CardPlayed, Event, HandEnded, Match, MatchEnded, TrickWon, TrumpChosen
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.platform import live
from telegram_bot.platform.keyboards import PlainKeyboard, web_app_button
from telegram_bot.platform.outbox import Outbox
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service import online_seats, reposts, review
from telegram_bot.service.config import ServiceConfig
from telegram_bot.service.languages import Translators
from telegram_bot.service.seats import seat_of

__all__ = ["OPEN_TABLE", "Views"]

#: The Mini App's buttons: on each hand message, and on the group's table.
OPEN_TABLE = N_("🃏 Open the table")

#: Hands whose essentials are remembered (least recently decided ones forgotten first:
#: a forgotten hand is edited at its next render, which costs a call, never a wrong hand).
_HANDS_REMEMBERED = 20_000


def _essentials(game: Game, match: Match, seat: int) -> tuple[Any, ...]:
    """What a hand message must never show wrong: the cards, whose turn it is (theirs
    or not), the phase and hand, whether the seat is away."""
    view = match.view(seat)
    away = bool(game.seats[match.order[seat]].get("away"))
    return (view.hand_no, view.phase, tuple(view.hand), view.turn == seat, away)


class Views:
    def __init__(
        self,
        outbox: Outbox,
        translators: Translators,
        config: ServiceConfig | None = None,
    ) -> None:
        # The outbox, through online_seats.FanOut (an online table's chat is its
        # people's private chats).
        self._outbox: Any = outbox
        self._translators = translators
        self._config = config or ServiceConfig()
        # Hand slot -> the essentials its last committed edit shows (see the module).
        self._hands: OrderedDict[str, tuple[Any, ...]] = OrderedDict()

    def hand_keyboard(
        self, game: Game, match: Match, seat: int, tr: Translator, selected: Any = ()
    ) -> PlainKeyboard | None:
        """``seat``'s hand keyboard, with the Mini App's button when it is configured."""
        keyboard = render.private_keyboard(game, match, seat, tr, selected)
        url = self._config.webapp_url
        if not url or match.is_over:
            return keyboard
        sep = "&" if "?" in url else "?"
        row = [web_app_button(tr(OPEN_TABLE), f"{url}{sep}game={game.id}")]
        if keyboard is None:
            return PlainKeyboard([row])
        return PlainKeyboard([*keyboard.rows, row])

    def table_keyboard(self, game: Game, match: Match, tr: Translator) -> PlainKeyboard | None:
        """The table's keyboard, with a t.me link to the Mini App in a group when its
        short name is configured (web_app buttons work only in private chats)."""
        keyboard = render.table_keyboard(game, match, tr)
        name = self._config.webapp_short_name
        if not name or not self._config.webapp_url or match.is_over or game.chat_id > 0:
            return keyboard
        url = f"https://t.me/{self._config.bot_username}/{name}?startapp={game.id}"
        row = [{"text": tr(OPEN_TABLE), "url": url}]
        if keyboard is None:
            return PlainKeyboard([row])
        return PlainKeyboard([*keyboard.rows, row])

    async def watching(self, s: AsyncSession, game: Game) -> frozenset[int]:
        """The people at ``game`` who have its page open (the Mini App), in any
        process: one query in the move's transaction, none without a Mini App."""
        if not self._config.webapp_url:
            return frozenset()
        people = {int(u) for u in game.user_ids()}
        if not people:
            return frozenset()
        return await live.open_pages(s, game.id) & people

    async def show_table(
        self,
        s: AsyncSession,
        game: Game,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None,
        *,
        skip: frozenset[int] = frozenset(),
    ) -> None:
        """Edit the game's table message (at an online table, not for the people in
        ``skip``: each person's copy is their own message)."""
        if skip:
            await self._outbox.edit(
                s,
                game.chat_id,
                text,
                markup,
                slot=repo.table_slot(game.id),
                thread=game.thread_id,
                skip=skip,
            )
            return
        await self._outbox.edit(
            s, game.chat_id, text, markup, slot=repo.table_slot(game.id), thread=game.thread_id
        )

    def private_text(self, game: Game, match: Match, seat: int, tr: Translator) -> str:
        """The text of ``seat``'s hand message."""
        text = render.private_text(game, match, seat, tr)
        info = game.seats[match.order[seat]]
        if info.get("timed_out"):
            text = tr("Time is up; the computer played for you") + "\n" + text
        rating = online_seats.rating_line(info, match.n, tr)
        if rating:
            text += "\n\n" + rating
        return text

    async def render(self, s: AsyncSession, game: Game, match: Match, events: list[Event]) -> None:
        """Decide, in the move's transaction, what every chat of the game shows now."""
        gtr = await self._translators.chat(game.chat_id, s)
        table = render.table_text(game, match, gtr)
        keyboard = self.table_keyboard(game, match, gtr)
        # Who follows the game on its page (the Mini App) gets fewer chat messages,
        # each person for themselves. Their hand message is left alone while the page
        # is open (no edit a card, no new message at the trump call; the match's end
        # is shown): it is brought up to date when the page closes
        # (:meth:`page_closed`) and, should that be missed (a killed process's lease
        # runs out), by the first move after, as what each hand message shows is
        # remembered (see the module's text). At an online table their own copy of
        # the table is left alone while cards are played; the others' copies follow once
        # a trick, as their hand message shows the trick when it is their turn (a
        # stranger's table costs at most a call a card). A group's table, which
        # everyone reads, is edited once a trick (and for all but cards) when every
        # person at it has the page open.
        watching = await self.watching(s, game) if events else frozenset()
        people = {int(u) for u in game.user_ids()}
        cards_only = bool(events) and all(isinstance(e, CardPlayed | TrickWon) for e in events)
        trick_won = any(isinstance(e, TrickWon) for e in events)
        skip: frozenset[int] = frozenset()
        if online_seats.is_online(game):
            skip = frozenset()
            if cards_only:
                skip = watching if trick_won else frozenset(people)
            quiet_table = bool(people) and people <= skip
        else:
            quiet_table = bool(people) and people <= watching and cards_only and not trick_won
        repost = await reposts.due(self._outbox, s, game, match, events)
        if not repost and not quiet_table:
            await self.show_table(s, game, table, keyboard, skip=skip)
        for e in events:
            if isinstance(e, HandEnded):
                text = render.hand_result_text(e, game, match, gtr)
                await self._outbox.send(
                    s,
                    game.chat_id,
                    text,
                    review.button(game, match, e, gtr),
                    thread=game.thread_id,
                )
            elif isinstance(e, MatchEnded):
                await self._outbox.send(
                    s,
                    game.chat_id,
                    render.match_result_text(game, match, gtr),
                    thread=game.thread_id,
                )
        if repost:  # below the hand result
            await reposts.repost(self._outbox, s, game, table, keyboard)
        # Those whose page shows the trump call get no new, notifying hand message.
        await self._after_trump_call(s, game, match, events, watching)
        # A card played by someone else edits only the hand of the player now on turn:
        # each hand message is brought up to date when its player acts or is on turn,
        # and by every deal, trump call and hand result (a card costs 3 calls, not 5).
        everyone = not events or any(not isinstance(e, CardPlayed | TrickWon) for e in events)
        acted = {getattr(e, "seat", None) for e in events}
        decided: dict[str, tuple[Any, ...]] = {}
        for seat in range(match.n):
            uid = game.seats[match.order[seat]].get("user_id")
            if not uid:
                continue
            slot = repo.hand_slot(game.id, uid)
            essentials = _essentials(game, match, seat)
            changed = self._hands.get(slot) != essentials
            if int(uid) in watching:  # the page shows the hand (and is the one looked at)
                wanted = match.is_over
            else:
                wanted = everyone or changed or seat == match.turn or seat in acted
            if not wanted:
                continue
            await self._edit_hand(s, game, match, seat, uid)
            decided[slot] = essentials
        if decided:
            self._outbox.after_commit(s, lambda: self._remember(decided))

    async def page_closed(self, s: AsyncSession, game: Game, match: Match, seat: int) -> None:
        """``seat``'s person closed the game's page (no stream of theirs is open
        anywhere): their hand message, and at an online table their copy of the
        table, brought up to date, whatever this process believes they show (an
        edit equal to what a message shows costs nothing: the outbox skips it)."""
        uid = int(game.seats[match.order[seat]]["user_id"])
        slot = repo.hand_slot(game.id, uid)
        essentials = _essentials(game, match, seat)
        await self._edit_hand(s, game, match, seat, uid)
        self._outbox.after_commit(s, lambda: self._remember({slot: essentials}))
        if online_seats.is_online(game):
            gtr = await self._translators.chat(game.chat_id, s)
            others = frozenset(int(u) for u in game.user_ids()) - {uid}
            text = render.table_text(game, match, gtr)
            await self.show_table(s, game, text, self.table_keyboard(game, match, gtr), skip=others)

    async def _edit_hand(
        self, s: AsyncSession, game: Game, match: Match, seat: int, uid: int
    ) -> None:
        """``seat``'s hand message edited to what it should show now, in ``uid``'s language."""
        tr = await self._translators.user(uid, s)
        await self._outbox.edit(
            s,
            uid,
            self.private_text(game, match, seat, tr),
            self.hand_keyboard(game, match, seat, tr),
            slot=repo.hand_slot(game.id, uid),
        )

    def _remember(self, decided: dict[str, tuple[Any, ...]]) -> None:
        for slot, essentials in decided.items():
            self._hands[slot] = essentials
            self._hands.move_to_end(slot)
        while len(self._hands) > _HANDS_REMEMBERED:
            self._hands.popitem(last=False)

    async def _after_trump_call(
        self,
        s: AsyncSession,
        game: Game,
        match: Match,
        events: list[Event],
        watching: frozenset[int] = frozenset(),
    ) -> None:
        """Before the hand messages are edited: after the trump call everyone else gets
        their whole hand as a new, notifying message (the edit that follows then finds
        nothing to change), but for those whose page is open (it shows the call). See
        :mod:`telegram_bot.service.pings`."""
        for event in events:
            if not isinstance(event, TrumpChosen):
                continue
            for seat in range(match.n):
                info = game.seats[match.order[seat]]
                uid = info.get("user_id")
                if seat == event.seat or not uid or info.get("away") or int(uid) in watching:
                    continue
                await self.post_hand_again(s, game, match, seat, int(uid))

    async def post_hand_again(
        self,
        s: AsyncSession,
        game: Game,
        match: Match,
        seat: int,
        uid: int,
        first_line: str | None = None,
    ) -> None:
        """Delete ``seat``'s hand message and send it anew (it notifies), under
        ``first_line`` if given."""
        tr = await self._translators.user(uid, s)
        text = self.private_text(game, match, seat, tr)
        if first_line:
            text = first_line + "\n" + text
        slot = repo.hand_slot(game.id, uid)
        await self._outbox.delete(s, uid, slot=slot)
        await self._outbox.send(s, uid, text, self.hand_keyboard(game, match, seat, tr), slot=slot)

    async def repost_table(
        self,
        s: AsyncSession,
        game: Game,
        text: str,
        markup: InlineKeyboardMarkup | PlainKeyboard | None,
    ) -> None:
        """The table message deleted and sent again, at the bottom of its chat."""
        await reposts.repost(self._outbox, s, game, text, markup)

    async def send_hand(
        self, s: AsyncSession, game: Game, match: Match, seat: int, uid: int
    ) -> None:
        """A new hand message for ``seat``'s player ``uid``."""
        tr = await self._translators.user(uid, s)
        await self._outbox.send(
            s,
            uid,
            self.private_text(game, match, seat, tr),
            self.hand_keyboard(game, match, seat, tr),
            slot=repo.hand_slot(game.id, uid),
        )

    async def redeal(
        self, s: AsyncSession, game: Game, match: Match, seat: int, user_id: int
    ) -> None:
        """A player is back: give them a hand message if theirs never arrived, and
        forget what their chat shows, so the next render edits it whatever we believe."""
        await self._outbox.forget_chat(s, user_id)
        if await repo.slot_message_id(s, repo.hand_slot(game.id, user_id)) is None:
            await self.send_hand(s, game, match, seat, user_id)

    async def show_selection(self, game_id: str, user_id: int, selected: list[Any]) -> None:
        """Redraw one player's keyboard with cards ticked (discard/exchange)."""
        async with self._outbox.transaction() as s:
            game = await repo.get_game(s, game_id)
            if game is None or game.state is None:
                return
            match = Match.from_json(game.state)
            seat = seat_of(game, match, user_id)
            if seat is None:
                return
            tr = await self._translators.user(user_id, s)
            await self._outbox.edit(
                s,
                user_id,
                render.private_text(game, match, seat, tr),
                self.hand_keyboard(game, match, seat, tr, selected),
                slot=repo.hand_slot(game.id, user_id),
            )
