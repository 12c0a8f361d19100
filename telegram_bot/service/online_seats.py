"""Online tables (see :mod:`.online_tables`): what the rest of the service needs to
know of them, without the queue: the chat ids they use, the chat fan-out to each
person's private chat, the ratings at the end and the seat of a person away twice.
Kept apart so that the views, the clock and the record import it without a circle.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from core import Match
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator, get_translator
from telegram_bot.platform.keyboards import PlainKeyboard
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game, utcnow
from telegram_bot.service import ratings
from telegram_bot.service.languages import Translators

__all__ = [
    "GROUP_RATED",
    "ONLINE_CHAT_BASE",
    "REACTIONS",
    "FanOut",
    "forfeit",
    "is_online",
    "is_online_chat",
    "online_slot",
    "rate_finished",
    "rating_line",
    "tell_forfeit",
]

#: Online tables' chat ids are at or below this (Telegram's ids are far above it).
ONLINE_CHAT_BASE = -(10**15)

REACTIONS = (N_("👏 Well played"), N_("😅 Sorry"), N_("⏳ One moment"))
YOU_FORFEIT = N_(
    "You were away for two turns in a row: a computer took your seat, "
    "and the match counts as lost for you."
)
FORFEITED = N_("{name} was away for two turns; a computer plays the seat now.")
#: A group's setting: its matches are rated (off by default).
GROUP_RATED = "rated"
RATING_CHANGE = N_("Your rating ({n} players): {before} → {after} ({change})")


def is_online_chat(chat_id: int) -> bool:
    return chat_id <= ONLINE_CHAT_BASE


def is_online(game: Game) -> bool:
    return bool((game.settings or {}).get("online"))


def online_slot(game_id: str, user_id: int) -> str:
    """The slot of one person's table message of an online game."""
    return f"t:{game_id}:{int(user_id)}"


def rating_line(info: dict[str, Any], players: int, tr: Translator) -> str | None:
    """The line a hand message shows at the end of a rated match."""
    change = info.get("rating")
    if not change:
        return None
    before, after = int(change[0]), int(change[1])
    return tr(RATING_CHANGE).format(
        n=tr.format_number(players),
        before=tr.format_number(before),
        after=tr.format_number(after),
        change=render.signed(after - before, tr),
    )


# ----------------------------------------------------------------- the ratings


async def rate_finished(s: AsyncSession, game: Game, match: Match) -> None:
    """A finished online match, in its commit's transaction: rate it (unless a computer
    sat in from the start) and put each seated person's change in their seat.

    A group's match, in a group that chose to rate its matches (``rated``, off by
    default: /rated), is rated when people sat in every seat to its end."""
    settings = game.settings or {}
    info = settings.get("online") or {}
    people: list[int | None]
    if info:
        if not info.get("rated"):
            return
        people = [int(u) for u in info.get("people", [])]
    elif settings.get(GROUP_RATED) and game.chat_id < 0:
        people = [x.get("user_id") for x in game.seats]
    else:
        return
    v = match.variant
    seated = set(game.user_ids())
    teams: list[list[int | None]] = [[] for _ in range(v.sides)]
    for seat in range(match.n):
        teams[v.side_of(seat)].append(people[match.order[seat]])
    lost = [any(uid not in seated for uid in team) for team in teams]
    playing = [p for side, p in enumerate(match.scores) if not lost[side]]
    ranks = [
        len(playing) + 1 if lost[side] else 1 + sum(other > p for other in playing)
        for side, p in enumerate(match.scores)
    ]
    # A leave forfeits the match for the leaver's side (docs/online.md): the leaver
    # loses and the others are rated as openskill computes that result, except a
    # partner who stayed: they left nothing, and played the rest beside a computer
    # (unrated), so their rating stays as it was.
    stayed = {uid for side, team in enumerate(teams) if lost[side] for uid in team} & seated
    rated_people = {uid for team in teams for uid in team if uid is not None} - stayed
    changes = await ratings.rate_match(
        s, game.id, v.players, teams, ranks, utcnow(), only=rated_people
    )
    if not changes:
        return
    seats = [dict(x) for x in game.seats]
    for x in seats:
        uid = x.get("user_id")
        if uid in changes:
            before, after = changes[uid]
            x["rating"] = [ratings.display(before), ratings.display(after)]
    game.seats = seats


def forfeit(game: Game, index: int) -> bool:
    """Away two turns in a row at an online table: the seat goes to a computer (the
    person loses the match for rating purposes). True if it did."""
    if not is_online(game):
        return False
    seats = [dict(x) for x in game.seats]
    if not seats[index].get("user_id"):
        return False
    seats[index] = {"bot": "normal", "forfeit": True}
    game.seats = seats
    return True


async def tell_forfeit(
    s: AsyncSession, outbox: Any, translators: Translators, game: Game, user_id: int, name: str
) -> None:
    """After :func:`forfeit` was stored: the person's hand message says so, and the
    others are told (the game's chat, fanned out)."""
    tr = await translators.user(user_id, s)
    await outbox.edit(s, user_id, tr(YOU_FORFEIT), None, slot=repo.hand_slot(game.id, user_id))
    gtr = await translators.chat(game.chat_id, s)
    await outbox.send(s, game.chat_id, gtr(FORFEITED).format(name=render.user_name(name)))


# ------------------------------------------------------------ the chat fan-out


class FanOut:
    """The outbox, with what is written to an online table's chat sent to the private
    chat of every person seated (see the module's text). Everything else is the
    outbox's own."""

    def __init__(self, outbox: Any, translators: Translators) -> None:
        self._outbox = outbox
        self._translators = translators

    def __getattr__(self, name: str) -> Any:
        return getattr(self._outbox, name)

    async def _seated(self, s: AsyncSession, chat_id: int) -> tuple[str, list[int], bool] | None:
        with s.no_autoflush:
            row = (
                await s.execute(
                    select(Game.id, Game.seats, Game.status)
                    .where(Game.chat_id == chat_id)
                    .order_by(Game.created_at.desc())
                    .limit(1)
                )
            ).first()
        if row is None:
            return None
        people = [int(x["user_id"]) for x in row.seats or [] if x.get("user_id")]
        return row.id, people, row.status == "playing"

    async def _in_languages(
        self, s: AsyncSession, chat_id: int, game_id: str, text: str, langs: dict[int, str]
    ) -> dict[str, str]:
        """The table's text in each person's language, for a table of mixed languages:
        when ``text`` is the table as the chat's language renders it, each language's
        own rendering of it (anything else is left as written)."""
        chat = await repo.get_chat(s, chat_id)
        base = chat.language if chat else "fa"
        texts = {base: text}
        if set(langs.values()) <= {base}:
            return texts
        with s.no_autoflush:
            row = (
                await s.execute(
                    select(Game.seats, Game.settings, Game.deadline, Game.state).where(
                        Game.id == game_id
                    )
                )
            ).first()
        if row is None or row.state is None:
            return texts
        game = SimpleNamespace(
            id=game_id,
            chat_id=chat_id,
            seats=row.seats,
            settings=row.settings,
            deadline=row.deadline,
        )
        match = Match.from_json(row.state)
        if render.table_text(game, match, get_translator(base)) != text:
            return texts
        for lang in set(langs.values()) - {base}:
            texts[lang] = render.table_text(game, match, get_translator(lang))
        return texts

    async def _reactions(self, s: AsyncSession, game_id: str, uid: int, playing: bool) -> Any:
        """The table's buttons for one person: the reactions while the match runs (the
        group's buttons, inline play and the rematch, are not for strangers)."""
        if not playing:
            return None
        tr = await self._translators.user(uid, s)
        row = [
            {"text": tr(text), "callback_data": cb.encode("z", game_id, None, str(i))}
            for i, text in enumerate(REACTIONS)
        ]
        return PlainKeyboard([row])

    async def send(self, s, chat_id, text, markup=None, *, slot=None, thread=None) -> None:
        if not is_online_chat(chat_id):
            return await self._outbox.send(s, chat_id, text, markup, slot=slot, thread=thread)
        found = await self._seated(s, chat_id)
        if found is None:
            return None
        game_id, people, playing = found
        langs = {uid: await self._translators.user_lang(uid, s) for uid in people}
        texts = await self._in_languages(s, chat_id, game_id, text, langs) if slot else {}
        for uid in people:
            if slot is not None:
                keys = await self._reactions(s, game_id, uid, playing)
                mine = texts.get(langs[uid], text)
                await self._outbox.send(s, uid, mine, keys, slot=online_slot(game_id, uid))
            else:
                await self._outbox.send(s, uid, text, None)
        return None

    async def edit(
        self, s, chat_id, text, markup=None, *, slot=None, message_id=None, thread=None, skip=()
    ) -> None:
        """Edit the message in ``slot`` of ``chat_id``; at an online table, each
        person's copy but those of the people in ``skip`` (who follow the table on
        its page: see :meth:`telegram_bot.service.views.Views.render`)."""
        if not is_online_chat(chat_id):
            return await self._outbox.edit(
                s, chat_id, text, markup, slot=slot, message_id=message_id, thread=thread
            )
        found = await self._seated(s, chat_id)
        if found is None or slot is None:
            return None
        game_id, people, playing = found
        langs = {uid: await self._translators.user_lang(uid, s) for uid in people}
        texts = await self._in_languages(s, chat_id, game_id, text, langs)
        for uid in people:
            if uid in skip:
                continue
            keys = await self._reactions(s, game_id, uid, playing)
            mine = texts.get(langs[uid], text)
            await self._outbox.edit(s, uid, mine, keys, slot=online_slot(game_id, uid))
        return None

    async def delete(self, s, chat_id, *, slot=None, message_id=None) -> None:
        if not is_online_chat(chat_id):
            return await self._outbox.delete(s, chat_id, slot=slot, message_id=message_id)
        found = await self._seated(s, chat_id)
        if found is None or slot is None:
            return None
        game_id, people, _ = found
        for uid in people:
            await self._outbox.delete(s, uid, slot=online_slot(game_id, uid))
        return None
