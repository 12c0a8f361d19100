"""The games of every chat: lobby, moves, computer turns, timers and rendering.

One asyncio lock per game serializes its updates; the database is the truth. An
accepted action is committed (with the new move number) before anything is sent,
so a crash at any moment loses nothing: :meth:`GameService.resume_all` re-renders
every game in progress and re-arms its timer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import InlineKeyboardMarkup

from core import (
    Action,
    CardPlayed,
    ErrorCode,
    Event,
    HandEnded,
    HandKind,
    IllegalAction,
    Match,
    MatchEnded,
    TrickWon,
    Variant,
)

from . import pings, render, reposts
from .i18n import N_, Translator, get_translator, language_from_telegram
from .languages import Languages
from .locks import KeyedLocks
from .outbox import Outbox
from .storage import repo
from .storage.models import Game, utcnow
from .thinking import POOLED_LEVELS, Thinkers

__all__ = ["DEFAULT_SETTINGS", "Answer", "GameService", "ServiceConfig"]

log = logging.getLogger(__name__)

#: A turn whose clock ran out this long ago with nobody on it is taken over.
_TAKEOVER_GRACE = 3.0
#: A computers' due time this far ahead is another process's lease, not a due time.
_LEASE_SLACK = timedelta(seconds=0.5)

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


BUSY = N_(
    "You are already playing in another game: to leave it, send /leave (or /quit for a "
    "solo match)."
)
GAME_OPEN = N_("A game is already open in this group: play it out, or end it with /cancel.")


@dataclass
class Answer:
    """What to tell the user who pressed a button (a toast, or an alert)."""

    text: str | None = None
    alert: bool = False
    url: str | None = None


@dataclass
class ServiceConfig:
    bot_username: str = "HokmBot"
    #: Pause before computer players move, so people can follow the table.
    computer_delay: float = 1.0
    #: Extra pause after a hand ends.
    hand_pause: float = 2.0
    #: Per-move thinking budget for the hard computer player.
    think_seconds: float = 1.0
    #: Tests and demos only: seed the deals (match ``k`` started uses ``deal_seed + k``)
    #: so a scenario is reproducible. Live tables leave it None: secure shuffles.
    deal_seed: int | None = None


class GameService:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        outbox: Outbox,
        config: ServiceConfig | None = None,
        scheduler: Callable[[str, float, Callable[[], Any]], None] | None = None,
        unscheduler: Callable[[str], None] | None = None,
        thinkers: Thinkers | None = None,
    ) -> None:
        self.sessions = sessions
        #: Where searching computer players think (None: in a thread of this process).
        self.thinkers = thinkers
        self.outbox = outbox
        self.config = config or ServiceConfig()
        # Per-game state lives only while a game needs it: a lock while held or
        # awaited, computer players and a timer while the match runs.
        self._locks = KeyedLocks()
        # Per process, unless workers share the database (telegram_bot.languages).
        self.languages = Languages(sessions, remember=not outbox.shared)
        self._background: set[asyncio.Task[Any]] = set()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._players: dict[tuple[str, int], Any] = {}
        self._taking: set[str] = set()
        self._loops: list[asyncio.Task[None]] = []
        #: game in progress -> (move, hand number) as last seen stored; see _known_stale.
        self._progress: dict[str, tuple[int, int]] = {}
        self._matches_started = 0

    # ---------------------------------------------------------------- languages

    async def user_lang(self, user_id: int, s: AsyncSession | None = None) -> str:
        """The user's language (inside a transaction, pass its session ``s``)."""
        return await self.languages.get(user_id, s)

    def forget_lang(self, user_id: int) -> None:
        self.languages.forget(user_id)

    async def user_tr(self, user_id: int, s: AsyncSession | None = None) -> Translator:
        return get_translator(await self.user_lang(user_id, s))

    async def chat_tr(self, chat_id: int, s: AsyncSession | None = None) -> Translator:
        """The chat's translator (inside a transaction, pass its session ``s``)."""
        if s is not None:
            chat = await repo.get_chat(s, chat_id)
        else:
            async with self.sessions() as own:
                chat = await repo.get_chat(own, chat_id)
        return get_translator(chat.language if chat else "fa")

    # ------------------------------------------------------------------- lobby

    async def open_lobby(
        self, chat_id: int, chat_type: str, title: str | None, user: Any
    ) -> str | None:
        """/newgame: post a lobby. Returns an error text, or None on success."""
        async with self.outbox.transaction() as s:
            chat = await repo.get_or_create_chat(s, chat_id, chat_type, title)
            tr = get_translator(chat.language)
            db_user = await repo.get_or_create_user(
                s, user.id, user.first_name, user.username, user.language_code
            )
            if await repo.get_active_game(s, chat_id) is not None:
                return tr(GAME_OPEN)
            other = await repo.find_active_game_for_user(s, user.id)
            settings = {**DEFAULT_SETTINGS, **(chat.settings or {})}
            seats: list[dict[str, Any]] = [{} for _ in range(settings["players"])]
            if db_user.started_bot and other is None:
                seats[0] = _human_seat(user)
            try:
                game = await repo.create_game(s, chat_id, user.id, seats, settings)
            except repo.ActiveGameExistsError:  # another /newgame won the race
                return tr(GAME_OPEN)
            await self.outbox.send(
                s,
                chat_id,
                render.lobby_text(game, tr),
                render.lobby_keyboard(game, tr, self.config.bot_username),
                slot=repo.table_slot(game.id),
            )
        return None

    async def lobby_action(
        self, game_id: str, user: Any, action: str, arg: str, is_admin: Callable[[], Any]
    ) -> Answer:
        """Join, leave, add a computer, settings, start or cancel a lobby."""
        async with self._locks[game_id]:
            async with self.outbox.transaction() as s:
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
                            url=f"https://t.me/{self.config.bot_username}?start=join_{game.id}",
                        )
                    other = await repo.find_active_game_for_user(s, user.id)
                    if other is not None and other.id != game.id:
                        return Answer(tr(BUSY), alert=True)
                    free = next((i for i, x in enumerate(seats) if not x), None)
                    if free is None:
                        return Answer(tr("The game is full"), alert=True)
                    seats[free] = _human_seat(user)
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
                        await self._show_table(s, game, gtr("The game was cancelled."), None)
                        return Answer(tr("The game was cancelled."))
                    if action == "o":
                        return await self._settings(s, game, seats, arg, tr, gtr)
                    return await self._start(s, game, seats, tr, gtr)
                game.seats = seats
                await repo.save_game(s, game, game.move)
                await self._show_table(
                    s,
                    game,
                    render.lobby_text(game, gtr),
                    render.lobby_keyboard(game, gtr, self.config.bot_username),
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
                else render.lobby_keyboard(game, gtr, self.config.bot_username)
            )
            await self._show_table(s, game, render.lobby_text(game, gtr), keyboard)
            return Answer(tr("⚙️ Settings") if arg == "" else tr("Settings saved"))
        name, _, value = arg.partition("=")
        if name == "about" and value in render.SETTING_HINTS:  # a row's label: explain it
            return Answer(tr(render.SETTING_HINTS[value][1]))
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
            _variant_of(settings)  # and the rules' own checks
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
        await self._show_table(
            s, game, render.lobby_text(game, gtr), render.settings_keyboard(game, gtr)
        )
        return Answer(tr("Settings saved"))

    async def _start(self, s, game: Game, seats, tr: Translator, gtr: Translator) -> Answer:
        if not any(x.get("user_id") for x in seats):
            return Answer(tr("At least one person must join first"), alert=True)
        level = game.settings.get("level", "normal")
        seats = [x if x else {"bot": level} for x in seats]
        match = Match(_variant_of(game.settings), seed=self._next_seed())
        match.start()
        game.seats = seats
        game.status = "playing"
        game.state = match.to_json()
        expected = game.move
        game.move += 1
        self._arm_deadline(game, match)
        await repo.save_game(s, game, expected)
        # Every person's hand, dealt in the same transaction as the start: a crash
        # right after it still delivers them.
        for seat in range(match.n):
            uid = seats[match.order[seat]].get("user_id")
            if uid:
                await self._send_hand(s, game, match, seat, uid)
        await self._render(s, game, match, [])
        self._after_commit_later(game, match)
        return Answer(tr("The game starts!"))

    async def _send_hand(self, s: AsyncSession, game: Game, match: Match, seat: int, uid: int) -> None:
        tr = await self.user_tr(uid, s)
        await self.outbox.send(
            s,
            uid,
            self._private_text(game, match, seat, tr),
            render.private_keyboard(game, match, seat, tr),
            slot=repo.hand_slot(game.id, uid),
        )

    def _after_commit_later(self, game: Game, match: Match) -> None:
        """Arm the timer or the computers once the caller's transaction has committed."""

        async def later() -> None:
            await asyncio.sleep(0)
            self._after_commit(game, match)

        self._spawn(later())

    # -------------------------------------------------------------------- play

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

    # ---------------------------------------------------------- computer turns

    def _controller(self, game: Game, match: Match) -> str | None:
        """The computer level that plays the seat on turn, or None for a human."""
        if match.turn is None:
            return None
        info = game.seats[match.order[match.turn]]
        if info.get("bot"):
            return info["bot"]
        if info.get("away"):
            return "normal"
        return None

    def _computers_follow(self, game: Game, match: Match, events: list[Event]) -> bool:
        """True when computer seats play next within the same hand: the human's card
        is then shown together with theirs in one edit after the pause."""
        return self._controller(game, match) is not None and not any(
            isinstance(e, HandEnded | MatchEnded) for e in events
        )

    def _after_commit(self, game: Game, match: Match) -> None:
        if game.status != "playing" or match.is_over:
            self._cancel_timer(game.id)
            for key in [k for k in self._players if k[0] == game.id]:
                del self._players[key]
            return
        if self._controller(game, match) is not None:
            self._cancel_timer(game.id)
            self._spawn(self._advance(game.id, game.move))
        else:
            self._schedule_timer(game)

    async def _advance(self, game_id: str, move: int, delay: float | None = None) -> None:
        """Computer seats play until a human is on turn, shown in one table edit."""
        await asyncio.sleep(self.config.computer_delay if delay is None else delay)
        async with self._locks[game_id]:
            # No database connection is held while computers think (a search takes
            # up to its budget): a lease in the game row (``due_at``) keeps other
            # processes' clocks off it meanwhile, and the commit checks the move number.
            async with self.sessions.begin() as s:
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or game.status != "playing" or game.move != move:
                    return
                if game.due_at is not None and game.due_at > utcnow() + _LEASE_SLACK:
                    return  # another process holds the computers' lease
                await repo.lease_computers(s, game_id, move, utcnow() + self._think_lease(game))
            match = Match.from_json(game.state)
            events: list[Event] = []
            hand_no = match.hand_no
            while not match.is_over and match.hand_no == hand_no:
                level = self._controller(game, match)
                if level is None:
                    break
                seat = match.turn
                assert seat is not None
                action = await self._think(game.id, seat, level, match)
                events += match.apply(seat, action)
            if not events:
                return
            try:
                async with self.outbox.transaction() as s:
                    await self._commit(s, game, match, events)
                    await self._render(s, game, match, events)
            except repo.StaleGameError:  # another process took the turn over meanwhile
                return
            self._note_progress(game, match)
        if any(isinstance(e, HandEnded) for e in events) and not match.is_over:
            await asyncio.sleep(self.config.hand_pause)
        self._after_commit(game, match)

    async def _think(self, game_id: str, seat: int, level: str, match: Match) -> Action:
        key = (game_id, seat)
        player = self._players.get(key)
        if player is None or getattr(player, "level", None) != level:
            from core.players import make_player

            player = make_player(level, time_budget=self.config.think_seconds)
            player.level = level
            self._players[key] = player
        view = match.view(seat)
        if level in POOLED_LEVELS:
            if self.thinkers is not None:
                return await self.thinkers.act(level, self.config.think_seconds, view)
            return await asyncio.to_thread(player.act, view)
        return player.act(view)

    # ------------------------------------------------------------------ timers

    def _arm_deadline(self, game: Game, match: Match) -> None:
        """The turn's clock, in the game row: a person's timer, or when the computers
        move (so another process can take either over if this one dies)."""
        seconds = int(game.settings.get("timer", 0) or 0)
        computers = not match.is_over and self._controller(game, match) is not None
        game.due_at = utcnow() + timedelta(seconds=self.config.computer_delay) if computers else None
        if seconds <= 0 or match.is_over or computers:
            game.deadline = None
        else:
            game.deadline = utcnow() + timedelta(seconds=seconds)

    def _think_lease(self, game: Game) -> timedelta:
        """How long computers may think before another process may take over."""
        return timedelta(seconds=10 + 4 * max(self.config.think_seconds, 0.1) * len(game.seats))

    def _schedule_timer(self, game: Game) -> None:
        self._cancel_timer(game.id)
        if game.deadline is None:
            return
        delay = max(0.0, (game.deadline - utcnow()).total_seconds())
        loop = asyncio.get_running_loop()
        self._timers[game.id] = loop.call_later(delay, self._timer_fired, game.id, game.move)

    def _timer_fired(self, game_id: str, move: int) -> None:
        self._timers.pop(game_id, None)
        self._spawn(self._on_timeout(game_id, move))

    def _cancel_timer(self, game_id: str) -> None:
        handle = self._timers.pop(game_id, None)
        if handle is not None:
            handle.cancel()

    async def _on_timeout(self, game_id: str, move: int) -> None:
        async with self._locks[game_id]:
            async with self.outbox.transaction() as s:
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or game.status != "playing" or game.move != move:
                    return
                match = Match.from_json(game.state)
                seat = match.turn
                if seat is None:
                    return
                info = game.seats[match.order[seat]]
                # The quick rule player, not normal's playouts: the game's row is locked
                # and the table waits for this card (playouts took 5-10 s under load).
                action = await self._think(game.id, seat, "normal0", match)
                events = match.apply(seat, action)
                info["timeouts"] = int(info.get("timeouts", 0)) + 1
                info["timed_out"] = True
                if info["timeouts"] >= 2:
                    info["away"] = True
                await self._commit(s, game, match, events)
                await self._render(s, game, match, events)
            self._note_progress(game, match)
        self._after_commit(game, match)

    # -------------------------------------------------------------- rendering

    async def _show_table(
        self, s: AsyncSession, game: Game, text: str, markup: InlineKeyboardMarkup | None
    ) -> None:
        await self.outbox.edit(s, game.chat_id, text, markup, slot=repo.table_slot(game.id))

    def _private_text(self, game: Game, match: Match, seat: int, tr: Translator) -> str:
        text = render.private_text(game, match, seat, tr)
        if game.seats[match.order[seat]].get("timed_out"):
            text = tr("Time is up; the computer played for you") + "\n" + text
        return text

    async def _render(
        self, s: AsyncSession, game: Game, match: Match, events: list[Event]
    ) -> None:
        """Decide, in the move's transaction, what every chat of the game shows now."""
        gtr = await self.chat_tr(game.chat_id, s)
        table = render.table_text(game, match, gtr)
        keyboard = render.table_keyboard(game, match, gtr)
        repost = await reposts.due(self, s, game, match, events)
        if not repost:
            await self._show_table(s, game, table, keyboard)
        for e in events:
            if isinstance(e, HandEnded):
                await self.outbox.send(s, game.chat_id, render.hand_result_text(e, game, match, gtr))
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

    async def _redeal(
        self, s: AsyncSession, game: Game, match: Match, seat: int, user_id: int
    ) -> None:
        """A player is back: give them a hand message if theirs never arrived, and
        forget what their chat shows, so the next render edits it whatever we believe."""
        await self.outbox.forget_chat(s, user_id)
        if await repo.slot_message_id(s, repo.hand_slot(game.id, user_id)) is None:
            await self._send_hand(s, game, match, seat, user_id)

    async def player_returns(self, user_id: int) -> None:
        """/start or /back from a player of a running game: re-send their hand and
        table view (a 429 or a block may have kept them from it)."""
        game = await self.game_for_user(user_id)
        if game is None or game.status != "playing":
            return
        async with self._locks[game.id]:
            async with self.outbox.transaction() as s:
                game = await repo.get_game(s, game.id)
                if game is None or game.status != "playing":
                    return
                match = Match.from_json(game.state)
                seat = _seat_of(game, match, user_id)
                if seat is None:
                    return
                await self._redeal(s, game, match, seat, user_id)
                await self._render(s, game, match, [])

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

    def _next_seed(self) -> int | None:
        if self.config.deal_seed is None:
            return None
        self._matches_started += 1
        return self.config.deal_seed + self._matches_started - 1

    # ------------------------------------------------------------ the clock

    async def run_clock(self, interval: float = 1.0) -> None:
        """Forever: take over turns whose clock ran out with nobody on them (the
        process that owned them died). The row lock and the move number make each
        timer and each computers' move happen once, whoever gets there first."""
        while True:
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("clock sweep failed")
            await asyncio.sleep(interval)

    async def sweep(self) -> int:
        grace = timedelta(seconds=_TAKEOVER_GRACE + self.config.hand_pause)
        async with self.sessions() as s:
            due = await repo.due_games(s, utcnow() - grace)
        taken = 0
        for game_id, move in due:
            if game_id in self._timers or game_id in self._taking:
                continue  # this process has it in hand
            self._taking.add(game_id)
            self._spawn(self._take_over(game_id, move))
            taken += 1
        return taken

    async def _take_over(self, game_id: str, move: int) -> None:
        try:
            async with self.sessions() as s:
                game = await repo.get_game(s, game_id)
            if game is None or game.status != "playing" or game.move != move:
                return
            log.info("taking over the clock of game %s at move %s", game_id, move)
            if game.due_at is not None:
                await self._advance(game_id, move, delay=0)
            elif game.deadline is not None:
                await self._on_timeout(game_id, move)
        finally:
            self._taking.discard(game_id)

    # ---------------------------------------------------------------- restart

    async def resume_all(self) -> int:
        """After a (re)start: send what was decided and not sent, re-arm the timers and
        the computers of every game in progress (their messages are in the outbox)."""
        await self.outbox.start()
        async with self.sessions() as s:
            games = await repo.list_active_games(s)
        count = 0
        for game in games:
            if game.status != "playing" or game.state is None:
                continue
            self._after_commit(game, Match.from_json(game.state))
            count += 1
        return count

    # --------------------------------------------------------------- queries

    async def active_game(self, chat_id: int) -> Game | None:
        async with self.sessions() as s:
            return await repo.get_active_game(s, chat_id)

    async def game_for_user(self, user_id: int) -> Game | None:
        async with self.sessions() as s:
            return await repo.find_active_game_for_user(s, user_id)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    def pending_work(self, *, groups: bool = True) -> int:
        """Work the bot still has to do: background game tasks and chats with decided
        messages not sent yet (without ``groups``, only private chats count: a rate
        limiter may hold group edits back on purpose)."""
        return len(self._background) + self.outbox.pending(private_only=not groups)

    async def idle(self) -> None:
        """Wait for background work and the messages it decided (tests, shutdown)."""
        while self.pending_work():
            while self._background:
                await asyncio.gather(*list(self._background), return_exceptions=True)
            await self.outbox.idle()

    def start_clock(self, interval: float = 1.0) -> None:
        """The takeover clock and the outbox's poll, until :meth:`shutdown`."""
        self._loops = [
            asyncio.create_task(self.run_clock(interval), name="clock"),
            asyncio.create_task(self.outbox.run_poll(interval), name="outbox poll"),
        ]

    async def shutdown(self) -> None:
        """Stop the timers and computer turns (a restart re-arms them from the database),
        then let the outbox send what was decided."""
        for task in self._loops:
            task.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self.thinkers is not None:
            await self.thinkers.shutdown()
        await self.outbox.close()


# ------------------------------------------------------------------- helpers


def _human_seat(user: Any) -> dict[str, Any]:
    return {"user_id": user.id, "name": user.first_name, "away": False, "timeouts": 0}


def _seat_of(game: Game, match: Match, user_id: int) -> int | None:
    for seat in range(match.n):
        if game.seats[match.order[seat]].get("user_id") == user_id:
            return seat
    return None


def _variant_of(settings: dict[str, Any]) -> Variant:
    from core import HakemRule, parse_card

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


def _error_text(exc: IllegalAction, tr: Translator) -> str:
    text = tr(ERROR_TEXTS.get(exc.code, ERROR_TEXTS[ErrorCode.UNKNOWN_ACTION]))
    if exc.code is ErrorCode.MUST_FOLLOW_SUIT:
        suit = exc.info.get("led_suit")
        return text.format(suit=tr(render.SUIT_NAMES[suit]) if suit is not None else "")
    return text
