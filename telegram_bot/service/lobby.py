"""The lobby: /newgame, joining and leaving seats, the settings, start and cancel.

Everything before a match runs: the seats and settings of a game in the lobby, and
the deal that starts it (the first hands go out in the start's transaction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core import HakemRule, Match, Variant, parse_card
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator, get_translator, language_from_telegram
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service import pings
from telegram_bot.service.answer import Answer
from telegram_bot.service.clock import Clock
from telegram_bot.service.seats import human_seat
from telegram_bot.service.shared import Shared
from telegram_bot.service.views import Views

__all__ = ["BUSY", "DEFAULT_SETTINGS", "GAME_OPEN", "Lobby", "variant_of"]

DEFAULT_SETTINGS: dict[str, Any] = {
    "players": 4,
    "kind": "classic",
    "target": 7,
    "timer": 60,
    "level": "normal",
    "teams_by_aces": False,
    "removed_two": "C",
    "hakem_rule": "next",
    "card_points": False,
    "ping": pings.DEFAULT_PING,
    "ping_to": "private",
}


BUSY = N_(
    "You are already playing in another game: to leave it, send /leave (or /quit for a solo match)."
)
GAME_OPEN = N_("A game is already open in this group: play it out, or end it with /cancel.")


class Lobby:
    """The games not started yet: their seats and settings, and the start."""

    def __init__(
        self,
        shared: Shared,
        *,
        views: Views,
        clock: Clock,
    ) -> None:
        self._shared = shared
        self._views = views
        self._clock = clock
        self._matches_started = 0

    async def open(
        self,
        chat_id: int,
        chat_type: str,
        title: str | None,
        user: Any,
        thread_id: int | None = None,
    ) -> str | None:
        """/newgame: post a lobby in the chat's forum topic ``thread_id`` (None: no
        topic; a forum holds one table per topic). Returns an error text, or None."""
        async with self._shared.outbox.transaction() as s:
            chat = await repo.get_or_create_chat(s, chat_id, chat_type, title)
            tr = get_translator(chat.language)
            db_user = await repo.get_or_create_user(
                s, user.id, user.first_name, user.username, user.language_code
            )
            if await repo.get_active_game(s, chat_id, thread_id) is not None:
                return tr(GAME_OPEN)
            other = await repo.find_active_game_for_user(s, user.id)
            settings = {**DEFAULT_SETTINGS, **(chat.settings or {})}
            seats: list[dict[str, Any]] = [{} for _ in range(settings["players"])]
            if db_user.started_bot and other is None:
                seats[0] = human_seat(user)
            try:
                game = await repo.create_game(
                    s, chat_id, user.id, seats, settings, thread_id=thread_id
                )
            except repo.ActiveGameExistsError:  # another /newgame won the race
                return tr(GAME_OPEN)
            await self._shared.outbox.send(
                s,
                chat_id,
                render.lobby_text(game, tr),
                render.lobby_keyboard(game, tr, self._shared.config.bot_username),
                slot=repo.table_slot(game.id),
                thread=game.thread_id,
            )
        return None

    async def action(
        self, game_id: str, user: Any, action: str, arg: str, is_admin: Callable[[], Any]
    ) -> Answer:
        """Join, leave, add a computer, settings, start or cancel a lobby."""
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game_id, lock=True)
                db_user = await repo.get_or_create_user(
                    s, user.id, user.first_name, user.username, user.language_code
                )
                tr = get_translator(
                    db_user.language or language_from_telegram(db_user.telegram_language)
                )
                chat = await repo.get_chat(s, game.chat_id) if game else None
                gtr = get_translator(chat.language if chat else "fa")
                if game is None or game.status != "lobby":
                    return Answer(tr("This button belongs to an earlier game"), alert=True)
                seats = [dict(x) for x in game.seats]
                seated = next((i for i, x in enumerate(seats) if x.get("user_id") == user.id), None)
                owner_ok = user.id == game.owner_id
                answer = Answer()
                if action == "j":
                    if seated is not None:
                        return Answer(tr("You have already joined"))
                    if not db_user.started_bot:
                        return Answer(
                            tr("Open the bot in private to get your cards"),
                            url=f"https://t.me/{self._shared.config.bot_username}?start=join_{game.id}",
                        )
                    other = await repo.find_active_game_for_user(s, user.id)
                    if other is not None and other.id != game.id:
                        return Answer(tr(BUSY), alert=True)
                    free = next((i for i, x in enumerate(seats) if not x), None)
                    if free is None:
                        return Answer(tr("The game is full"), alert=True)
                    seats[free] = human_seat(user)
                    answer = Answer(tr("You joined the game"))
                elif action == "l":
                    if seated is None:
                        return Answer(tr("You are not in this game"))
                    seats[seated] = {}
                    answer = Answer(tr("You left the game"))
                elif action == "b":
                    free = next((i for i, x in enumerate(seats) if not x), None)
                    if free is None:
                        return Answer(tr("The game is full"), alert=True)
                    seats[free] = {"bot": game.settings.get("level", "normal")}
                    answer = Answer(tr("A computer player took a seat"))
                elif action in ("s", "c", "o"):
                    if not (owner_ok or await is_admin()):
                        return Answer(
                            tr("Only the player who opened the game or a group admin can do that"),
                            alert=True,
                        )
                    if action == "c":
                        game.status = "cancelled"
                        await repo.save_game(s, game, game.move)
                        await self._views.show_table(s, game, gtr("The game was cancelled."), None)
                        return Answer(tr("The game was cancelled."))
                    if action == "o":
                        return await self._settings(s, game, seats, arg, tr, gtr)
                    return await self._start(s, game, seats, tr, gtr)
                game.seats = seats
                await repo.save_game(s, game, game.move)
                await self._views.show_table(
                    s,
                    game,
                    render.lobby_text(game, gtr),
                    render.lobby_keyboard(game, gtr, self._shared.config.bot_username),
                )
        return answer

    async def _settings(
        self, s, game: Game, seats, arg: str, tr: Translator, gtr: Translator
    ) -> Answer:
        settings = dict(game.settings)
        if arg in ("", "back"):
            keyboard = (
                render.settings_keyboard(game, gtr)
                if arg == ""
                else render.lobby_keyboard(game, gtr, self._shared.config.bot_username)
            )
            await self._views.show_table(s, game, render.lobby_text(game, gtr), keyboard)
            return Answer(tr("⚙️ Settings") if arg == "" else tr("Settings saved"))
        name, _, value = arg.partition("=")
        if name == "about" and value in render.SETTING_HINTS:  # a row's label: explain it
            # (The level's hint names the hard player's time a card: what it costs.)
            seconds = self._shared.config.think_budget(int(settings.get("players", 4)))
            return Answer(tr(render.SETTING_HINTS[value][1], seconds=seconds))
        parsed: Any
        try:
            if name in ("players", "target", "timer", "ping"):
                parsed = int(value)
            elif name in ("teams_by_aces", "card_points"):
                parsed = value == "1"
            elif name in ("level", "hakem_rule", "removed_two", "kind", "ping_to"):
                parsed = value
            else:
                raise ValueError(name)
            if name == "kind":
                settings["kind"], settings["players"] = "bidding", 2
                settings["target"] = 500
            elif name == "players":
                if settings.get("kind") == "bidding":
                    settings["target"] = 7
                settings["players"], settings["kind"] = parsed, "classic"
            else:
                settings[name] = parsed
            if not _allowed(settings):
                raise ValueError(arg)
            variant_of(settings)  # and the rules' own checks
        except (ValueError, KeyError):
            return Answer(tr("This button is not valid"), alert=True)
        size = settings["players"]
        humans = [x for x in seats if x.get("user_id")]
        if len(humans) > size:
            return Answer(tr("Too many players have joined for that"), alert=True)
        keep = [x for x in seats if x.get("user_id")] + [x for x in seats if x.get("bot")]
        keep = keep[:size]
        seats = keep + [{} for _ in range(size - len(keep))]
        game.seats = seats
        game.settings = settings
        await repo.save_game(s, game, game.move)
        if name in ("ping", "ping_to") and game.chat_id < 0:  # the group's choice, kept
            await repo.update_chat_settings(s, game.chat_id, {name: parsed})
        await self._views.show_table(
            s, game, render.lobby_text(game, gtr), render.settings_keyboard(game, gtr)
        )
        return Answer(tr("Settings saved"))

    async def _start(self, s, game: Game, seats, tr: Translator, gtr: Translator) -> Answer:
        if not any(x.get("user_id") for x in seats):
            return Answer(tr("At least one person must join first"), alert=True)
        level = game.settings.get("level", "normal")
        seats = [x if x else {"bot": level} for x in seats]
        match = Match(variant_of(game.settings), seed=self._next_seed())
        match.start()
        game.seats = seats
        game.status = "playing"
        game.state = match.to_json()
        expected = game.move
        game.move += 1
        self._clock.arm(game, match)
        await repo.save_game(s, game, expected)
        await self._shared.announce(s, game.id, game.move)
        # Every person's hand, dealt in the same transaction as the start: a crash
        # right after it still delivers them.
        for seat in range(match.n):
            uid = seats[match.order[seat]].get("user_id")
            if uid:
                await self._views.send_hand(s, game, match, seat, uid)
        await self._views.render(s, game, match, [])
        self._clock.after_commit_later(game, match)
        return Answer(tr("The game starts!"))

    async def start_now(self, s, game: Game, seats, gtr: Translator) -> None:
        """Start ``game`` at once in the caller's transaction (an online table)."""
        await self._start(s, game, seats, gtr, gtr)

    def _next_seed(self) -> int | None:
        if self._shared.config.deal_seed is None:
            return None
        self._matches_started += 1
        return self._shared.config.deal_seed + self._matches_started - 1


def variant_of(settings: dict[str, Any]) -> Variant:
    """The rules a lobby's settings choose."""
    if settings.get("kind") == "bidding":
        return Variant.bidding(target=int(settings.get("target", 500)))
    players = int(settings.get("players", 4))
    return Variant(
        players=players,
        target=int(settings.get("target", 7)),
        teams_by_aces=bool(settings.get("teams_by_aces")) and players == 4,
        removed_two=parse_card("2" + str(settings.get("removed_two", "C"))),
        hakem_rule=HakemRule(settings.get("hakem_rule", "next")),
        card_points=bool(settings.get("card_points")),
    )


def _allowed(settings: dict[str, Any]) -> bool:
    """Only the values the settings keyboard offers (callback data can be forged)."""
    targets = (
        render.BIDDING_TARGET_CHOICES
        if settings.get("kind") == "bidding"
        else render.TARGET_CHOICES
    )
    return (
        settings.get("players") in (2, 3, 4)
        and settings.get("kind") in ("classic", "bidding")
        and settings.get("target") in targets
        and settings.get("timer") in render.TIMER_CHOICES
        and settings.get("level") in render.LEVEL_NAMES
        and settings.get("removed_two") in ("S", "H", "D", "C")
        and settings.get("hakem_rule") in ("next", "winner")
        and settings.get("ping", pings.DEFAULT_PING) in pings.PING_CHOICES
        and settings.get("ping_to", "private") in pings.PING_TO
    )
