"""Play with anyone, for people: the /online queue in the private chat, the tables it
makes, what strangers see of each other, the preset reactions and the ratings at the
end. The queue and matching rules are in :mod:`.online` and :mod:`.matching`, the
rating maths in :mod:`.ratings` (openskill).

An online table is a game whose chat is not a Telegram chat: a chat row of its own
(:func:`is_online_chat`, below every real chat id), so that everything the service
writes to "the game's chat" (the table, hand results, who left) goes, through
:class:`FanOut`, to the private chat of every person seated, each table message in a
slot of its own (``t:<game>:<user>``) and in their own language (a table may mix
languages once its people have waited a while). Strangers see display names only (the seats'
first names): no username, id or mention is ever written for an online table
(pings go to the private chat).

The game's settings hold ``online``: ``{"people": [user ids by lobby index],
"rated": bool}``. A person seated at the start and not seated at the end (left, or
away two turns in a row: :func:`forfeit`) loses the match for rating purposes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator, get_translator, language_from_telegram
from telegram_bot.platform.keyboards import PlainKeyboard
from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import utcnow
from telegram_bot.service import online
from telegram_bot.service.answer import Answer
from telegram_bot.service.lobby import BUSY, DEFAULT_SETTINGS, Lobby
from telegram_bot.service.online_seats import (
    ONLINE_CHAT_BASE,
    REACTIONS,
    FanOut,
    is_online,
)
from telegram_bot.service.shared import Shared

__all__ = ["OnlineTables"]

log = logging.getLogger(__name__)

#: Seconds between two reactions of one person.
REACTION_GAP = 5.0
#: Tables a matching round seats at once (each in its own transaction; PostgreSQL).
SEATING = 4


WHICH_GAME = N_(
    "<b>Play with anyone</b>\nWhich game? You will be seated with people of about your rating."
)
GAME_4 = N_("👥 4 players (two teams)")
GAME_3 = N_("👤 3 players")
GAME_2 = N_("🤺 2 players")
QUEUED = N_(
    "You are in the queue for a {n}-player game. The match starts as soon as a table fills."
)
LEAVE_QUEUE = N_("Leave the queue")
LEFT_QUEUE = N_("You left the queue.")
NOT_QUEUED = N_("You are not in the queue.")
OFFER = N_(
    "Nobody else is here yet. Start now with computers in the empty seats? "
    "(Such a match is not rated.)"
)
START_NOW = N_("🤖 Start now with computers")
TOO_EARLY = N_("Please wait a little longer: the computers are offered after the wait.")
SEATED = N_("A table is ready! Your cards are below. You play with: {names}.")
TABLE_HEAD = N_("🌐 Online table")
UNRATED = N_("(not rated)")
REACTED = N_("{name}: {reaction}")
REACTION_SENT = N_("Sent")
REACTION_WAIT = N_("Wait a moment before the next reaction.")
COMPUTERS = N_("🤖 computers")
GAME_NAMES = {4: GAME_4, 3: GAME_3, 2: GAME_2}


# --------------------------------------------------------------- the tables


class OnlineTables:
    """The /online queue for people, the matching loop and the tables it starts."""

    def __init__(self, shared: Shared, *, lobby: Lobby, fan_out: FanOut) -> None:
        self._shared = shared
        self._lobby = lobby
        self._fan_out = fan_out
        self._task: asyncio.Task[None] | None = None
        #: Tables made and computers' starts, by this process.
        self.made = 0

    @property
    def wait(self) -> float:
        return self._shared.config.online_wait

    # --------------------------------------------------------- the person's side

    def choice_keyboard(self, tr: Translator) -> PlainKeyboard:
        return PlainKeyboard(
            [
                [{"text": tr(GAME_NAMES[n]), "callback_data": cb.encode("q", "", None, str(n))}]
                for n in (4, 3, 2)
            ]
        )

    def leave_keyboard(self, tr: Translator) -> PlainKeyboard:
        return PlainKeyboard(
            [[{"text": tr(LEAVE_QUEUE), "callback_data": cb.encode("q", "", None, "0")}]]
        )

    async def join(self, user: Any, players: int) -> tuple[str, PlainKeyboard | None]:
        """Queue ``user`` for a game of ``players``: the text and keyboard to show."""
        async with self._shared.sessions.begin() as s:
            db_user = await repo.get_or_create_user(
                s, user.id, user.first_name, user.username, user.language_code
            )
            await repo.mark_started(s, user.id)
            lang = db_user.language or language_from_telegram(db_user.telegram_language)
            tr = get_translator(lang)
            joined = await online.join(s, user.id, players, lang, utcnow())
        if joined.status == "playing":
            return tr(BUSY), None
        return tr(QUEUED).format(n=tr.format_number(players)), self.leave_keyboard(tr)

    async def leave_queue(self, user_id: int) -> str:
        tr = await self._shared.translators.user(user_id)
        async with self._shared.sessions.begin() as s:
            was = await online.leave(s, user_id)
        return tr(LEFT_QUEUE) if was is not None else tr(NOT_QUEUED)

    async def with_computers(self, user: Any) -> Answer:
        """The offer taken: the person alone (if still waiting, for long enough) with
        computers in the empty seats; unrated."""
        tr = await self._shared.translators.user(user.id)
        # The new game's lock is held until the commit (as the lobby's start holds
        # its game's): its computers and timer, armed at the start, wait for it.
        async with contextlib.AsyncExitStack() as held, self._shared.outbox.transaction() as s:
            entry = await store.queued(s, user.id)
            if entry is None:
                return Answer(tr(NOT_QUEUED), alert=True)
            if (utcnow() - entry.joined_at).total_seconds() < self.wait:
                return Answer(tr(TOO_EARLY), alert=True)
            if await online.leave(s, user.id) is None:  # the matcher seated them meanwhile
                return Answer(tr(NOT_QUEUED), alert=True)
            await self._open_table(s, [entry], entry.players, held)
        return Answer()

    async def react(self, game_id: str, user_id: int, arg: str) -> Answer:
        tr = await self._shared.translators.user(user_id)
        if not arg.isdigit() or int(arg) >= len(REACTIONS):
            return Answer(tr("This button is not valid"), alert=True)
        async with self._shared.outbox.transaction() as s:
            game = await repo.get_game(s, game_id)
            if game is None or not is_online(game) or game.status != "playing":
                return Answer(tr("This button belongs to an earlier game"), alert=True)
            me = next((x for x in game.seats if x.get("user_id") == user_id), None)
            if me is None:
                return Answer(tr("You are not playing in this game"), alert=True)
            # Noted in the table's chat row, so that the limit holds whichever worker
            # takes the next press.
            if not await store.claim_reaction(s, game.chat_id, user_id, time.time(), REACTION_GAP):
                return Answer(tr(REACTION_WAIT))
            for uid in game.user_ids():
                utr = await self._shared.translators.user(uid, s)
                text = utr(REACTED).format(
                    name=render.user_name(me.get("name")), reaction=utr(REACTIONS[int(arg)])
                )
                await self._shared.outbox.send(s, uid, text)
        return Answer(tr(REACTION_SENT))

    # ---------------------------------------------------------------- matching

    async def round(self, now: datetime | None = None) -> int:
        """One matching pass: start the tables that fill, then offer the computers to
        those who waited long enough. Returns the tables started."""
        now = now or utcnow()
        started = 0
        for players in (4, 3, 2):
            # The round's own transaction holds the matcher's lock (one matcher of a
            # game at a time, across workers) and reads the queue, locking no row;
            # each table is then seated in a short transaction of its own, so its
            # people are told as soon as it commits, not after every table's deal.
            # On PostgreSQL up to SEATING tables are seated at once (their people,
            # rows and chats are all different): a table's set-up is a few dozen
            # round trips to the database, and one after the other they made the
            # round's last table wait seconds (benchmarks/online.py).
            async with self._shared.sessions() as guard:
                picked = await online.pick(guard, players, now)
                at_once = SEATING
                if guard.get_bind().dialect.name != "postgresql":
                    await guard.rollback()  # SQLite: hold no lock while seating
                    at_once = 1  # one writer
                started += await self._seat_all(players, picked, at_once)
        async with self._shared.outbox.transaction() as s:
            for entry in await online.due_offers(s, now, self.wait):
                tr = await self._shared.translators.user(entry.user_id, s)
                keys = PlainKeyboard(
                    [
                        [{"text": tr(START_NOW), "callback_data": cb.encode("q", "", None, "c")}],
                        [{"text": tr(LEAVE_QUEUE), "callback_data": cb.encode("q", "", None, "0")}],
                    ]
                )
                await self._shared.outbox.send(s, entry.user_id, tr(OFFER), keys)
        return started

    async def _seat_all(self, players: int, picked: Sequence[Sequence[int]], at_once: int) -> int:
        """Seat the picked tables, ``at_once`` at a time: the games started."""
        gate = asyncio.Semaphore(at_once)

        async def seat(ids: Sequence[int]) -> int:
            async with gate:
                return await self._seat(players, ids)

        return sum(await asyncio.gather(*(seat(ids) for ids in picked)))

    async def _seat(self, players: int, ids: Sequence[int]) -> int:
        """Seat one picked table in a transaction of its own: 1 if its game started, 0
        if one of its people was gone (left, seated elsewhere, busy)."""
        async with contextlib.AsyncExitStack() as held, self._shared.outbox.transaction() as s:
            table = await online.claim(s, players, ids)
            if table is None or not await self._free(s, table):
                return 0
            await self._open_table(s, table, players, held)
        return 1

    async def _free(self, s: AsyncSession, table: Sequence[Any]) -> bool:
        """Is everyone at ``table`` free to play? Someone who, while waiting, joined a
        group's game or started a solo match is not: they stay out of the queue, and
        the others go back to it in their places (a table for them comes next round)."""
        busy = [e for e in table if await repo.find_active_game_for_user(s, e.user_id) is not None]
        if not busy:
            return True
        for e in table:
            if e not in busy:
                await store.join(s, e.user_id, e.players, e.language, e.rating, e.band, e.joined_at)
        return False

    async def _open_table(
        self,
        s: AsyncSession,
        table: Sequence[Any],
        players: int,
        held: contextlib.AsyncExitStack,
    ) -> None:
        """Create and start the game of ``table`` (queue rows) in the caller's
        transaction: the seats in matching order, computers in any empty seat."""
        users = {}
        for entry in table:
            users[entry.user_id] = await repo.get_user(s, entry.user_id)
        lang = table[0].language
        chat_id = ONLINE_CHAT_BASE - 1 - secrets.randbelow(10**15)
        await repo.get_or_create_chat(s, chat_id, "online", None, language=lang)
        seats: list[dict[str, Any]] = [
            {
                "user_id": e.user_id,
                "name": (users[e.user_id].first_name if users[e.user_id] else "") or "?",
                "away": False,
                "timeouts": 0,
            }
            for e in table
        ]
        rated = len(seats) == players
        seats += [{} for _ in range(players - len(seats))]
        settings = {
            **DEFAULT_SETTINGS,
            "players": players,
            "ping_to": "private",
            "online": {"people": [e.user_id for e in table], "rated": rated},
        }
        game = await repo.create_game(s, chat_id, table[0].user_id, seats, settings)
        await held.enter_async_context(self._shared.locks[game.id])
        gtr = get_translator(lang)
        for e in table:
            utr = await self._shared.translators.user(e.user_id, s)
            names = [render.user_name(x["name"]) for x in seats if x and x["user_id"] != e.user_id]
            if len(seats) > len(table):
                names.append(utr(COMPUTERS) + " " + utr(UNRATED))
            await self._shared.outbox.send(
                s, e.user_id, utr(SEATED).format(names=render.and_join(names, utr))
            )
        # Each person's table message (the start's render edits it, as a group's lobby).
        await self._fan_out.send(s, chat_id, gtr(TABLE_HEAD), None, slot=repo.table_slot(game.id))
        await self._lobby.start_now(s, game, seats, gtr)
        self.made += 1

    async def run(self, interval: float = 1.0) -> None:
        while True:
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be away for a moment
                log.exception("online matching failed")
            await asyncio.sleep(interval)

    def start(self, interval: float | None = None) -> None:
        if self._task is None:
            every = self._shared.config.online_interval if interval is None else interval
            if every > 0:
                self._task = asyncio.create_task(self.run(every), name="online matching")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
