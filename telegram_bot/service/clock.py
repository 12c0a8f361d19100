"""The game clock: turn timers, computer turns, and taking over a dead process's turns.

Every turn's clock is stored in the game row: ``deadline`` for a person's timer,
``due_at`` for when the computers move (and, while they think, a lease that keeps
other processes off). This process arms an asyncio timer or a computer task for the
games it touched; :meth:`Clock.sweep` takes over any turn whose clock ran out
with nobody on it. The row lock and the move number make each happen once.
(:mod:`telegram_bot.service.sweeper` is a different, slower pass: idle games and pings.)

With several workers, the row also names the worker that armed the turn's clock
(``clock_worker``), and each worker is known to be alive by a PostgreSQL advisory lock
it holds on a connection of its own (:class:`Liveness`). When a worker dies, PostgreSQL
drops its lock with its connection, and the next sweep of any other worker (each
second) takes its turns over: a computers' move at once (even while its lease runs),
a person's timer when it runs out. A turn on a live worker that is merely late is
taken over once its clock is ``_TAKEOVER_GRACE`` seconds past, as before.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import timedelta
from typing import Any

from sqlalchemy import literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from core import Action, Event, HandEnded, Match, MatchEnded
from core.players import make_player
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game, utcnow
from telegram_bot.platform.thinking import POOLED_LEVELS
from telegram_bot.service import online_seats, record
from telegram_bot.service.progress import Progress
from telegram_bot.service.shared import Shared
from telegram_bot.service.views import Views

__all__ = ["LIVENESS_KEY", "Clock", "Liveness"]

# The service's logger name from before it was split, so log filters still match.
log = logging.getLogger("telegram_bot.service.games")

#: A turn whose clock ran out this long ago is taken over, even if its worker lives.
_TAKEOVER_GRACE = 3.0
#: A computers' due time this far ahead is another process's lease, not a due time.
_LEASE_SLACK = timedelta(seconds=0.5)
#: The first key of the workers' liveness locks (the second is the worker's number).
LIVENESS_KEY = 0x484B  # "HK"

#: The numbers of the workers alive on this database: the liveness locks held.
_LIVE_WORKERS = (
    select(literal_column("CAST(objid AS bigint)"))
    .select_from(text("pg_locks"))
    .where(
        text(
            f"locktype = 'advisory' AND classid = {LIVENESS_KEY} AND objsubid = 2 AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
    )
)


class Liveness:
    """One worker of several: its number, stamped on the turns whose clock it arms, and
    an advisory lock (``LIVENESS_KEY``, number) held for as long as it runs, on a
    connection of its own (autocommit, never returned to the pool). PostgreSQL releases
    the lock when the process dies, so the others see at once that its turns have nobody
    on them. The same connection runs the clock's sweep query, which so never waits for
    a pooled connection behind the worker's other work. A lost connection is opened and
    locked again at the next sweep (meanwhile others may take this worker's turns over:
    the row lock and the move number keep that safe)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.number = 1 + secrets.randbelow(2**31 - 2)
        self._conn: AsyncConnection | None = None

    async def connection(self) -> AsyncConnection:
        if self._conn is None:
            conn = await self.engine.connect()
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            lock = text("SELECT pg_try_advisory_lock(CAST(:k AS integer), CAST(:n AS integer))")
            while not await conn.scalar(lock, {"k": LIVENESS_KEY, "n": self.number}):
                self.number = 1 + secrets.randbelow(2**31 - 2)  # another worker's number
            self._conn = conn
        return self._conn

    async def due(self, before: Any, now: Any) -> list[tuple[str, int, int | None]]:
        """:func:`repo.due_games` with the dead workers' turns, on this connection."""
        conn = await self.connection()
        try:
            return await repo.due_games(conn, before, now=now, live_workers=_LIVE_WORKERS)
        except Exception:
            await self.close()
            raise

    async def close(self) -> None:
        """Release the lock: the connection is closed, not returned to the pool."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.invalidate()
                await conn.close()
            except Exception:
                log.debug("closing the liveness connection failed", exc_info=True)


class Clock:
    """Every game's turn clock in this process: a person's timer, the computers'
    turns (and their players), and the takeover of turns nobody is on."""

    def __init__(
        self,
        shared: Shared,
        *,
        views: Views,
        progress: Progress,
        liveness: Liveness | None = None,
    ) -> None:
        self._shared = shared
        self._views = views
        self._progress = progress
        #: Several workers on PostgreSQL: this one's number and liveness lock; None
        #: for one process.
        self.liveness = liveness
        # Computer players and a timer live only while their match runs.
        self._timers: dict[str, asyncio.TimerHandle] = {}
        #: The move each of those timers is for.
        self._timer_moves: dict[str, int] = {}
        self._players: dict[tuple[str, int], Any] = {}
        self._taking: set[str] = set()
        self._loops: list[asyncio.Task[None]] = []

    @property
    def worker(self) -> int | None:
        """This worker's number in the game rows (None: one process)."""
        return None if self.liveness is None else self.liveness.number

    def sizes(self) -> dict[str, int]:
        """How many per-game entries this clock holds (all go when their games end)."""
        return {
            "players": len(self._players),
            "timers": len(self._timers),
            "timer_moves": len(self._timer_moves),
            "taking": len(self._taking),
        }

    # ---------------------------------------------------------- computer turns

    def controller(self, game: Game, match: Match) -> str | None:
        """The computer level that plays the seat on turn, or None for a human."""
        if match.turn is None:
            return None
        info = game.seats[match.order[match.turn]]
        if info.get("bot"):
            return info["bot"]
        if info.get("away"):
            return "normal"
        return None

    def computers_follow(self, game: Game, match: Match, events: list[Event]) -> bool:
        """True when computer seats play next within the same hand: the human's card
        is then shown together with theirs in one edit after the pause."""
        return self.controller(game, match) is not None and not any(
            isinstance(e, HandEnded | MatchEnded) for e in events
        )

    def after_commit(self, game: Game, match: Match) -> None:
        """After a change of ``game`` was committed: the computers' turn, or the
        person's timer; or, once the game is over, its timer and players go."""
        if game.status != "playing" or match.is_over:
            self._cancel_timer(game.id)
            for key in [k for k in self._players if k[0] == game.id]:
                del self._players[key]
            self._shared.outbox.forget_game(game.id)
            return
        if self.controller(game, match) is not None:
            self._cancel_timer(game.id)
            self._shared.background.spawn(self._advance(game.id, game.move))
        else:
            self.schedule_timer(game)

    def resume(self, game: Game, match: Match) -> None:
        """After a restart of the single process: like :meth:`after_commit`, but the
        computers' lease in the row is its dead predecessor's (nobody else plays here),
        so their turn is taken over at once, not when that lease runs out."""
        if self.liveness is not None or self.controller(game, match) is None:
            self.after_commit(game, match)
            return
        self._cancel_timer(game.id)
        wait = 0.0 if game.due_at is None else (game.due_at - utcnow()).total_seconds()
        delay = min(max(0.0, wait), self._shared.config.computer_delay)
        self._shared.background.spawn(
            self._advance(game.id, game.move, delay=delay, dead=game.clock_worker or 0)
        )

    def after_commit_later(self, game: Game, match: Match) -> None:
        """Arm the timer or the computers once the caller's transaction has committed."""

        async def later() -> None:
            await asyncio.sleep(0)
            self.after_commit(game, match)

        self._shared.background.spawn(later())

    async def commit(self, s: AsyncSession, game: Game, match: Match, events: list[Event]) -> None:
        """Store an accepted action, with the next turn's clock (see :mod:`.record`),
        and announce the move to open pages once it commits (every move, whoever made
        it: a press, the page, inline mode, a computer, a timer, comes through here)."""
        await record.commit(s, game, match, events, self.arm)
        await self._shared.announce(s, game.id, game.move)

    async def _advance(
        self, game_id: str, move: int, delay: float | None = None, dead: int | None = None
    ) -> None:
        """Computer seats play until a human is on turn, shown in one table edit.
        ``dead``: the worker that armed the turn died (0: unmarked); its lease is void."""
        await asyncio.sleep(self._shared.config.computer_delay if delay is None else delay)
        async with self._shared.locks[game_id]:
            # No database connection is held while computers think (a search takes
            # up to its budget): a lease in the game row (``due_at``) keeps other
            # processes' clocks off it meanwhile, and the commit checks the move number.
            async with self._shared.sessions.begin() as s:
                game = await repo.get_game(s, game_id, lock=True)
                if game is None or game.status != "playing" or game.move != move:
                    return
                leased = game.due_at is not None and game.due_at > utcnow() + _LEASE_SLACK
                if leased and (dead is None or (game.clock_worker or 0) != dead):
                    return  # another process holds the computers' lease
                until = utcnow() + self._think_lease(game)
                await repo.lease_computers(s, game_id, move, until, self.worker)
                game.due_at, game.clock_worker = until, self.worker
            match = Match.from_json(game.state)
            events: list[Event] = []
            hand_no = match.hand_no
            while not match.is_over and match.hand_no == hand_no:
                level = self.controller(game, match)
                if level is None:
                    break
                seat = match.turn
                assert seat is not None
                action = await self._think(game.id, seat, level, match)
                events += match.apply(seat, action)
            if not events:
                return
            # The people's cards stored without a render (:meth:`.table.Table._store`)
            # are shown with these.
            late = frozenset(
                seat
                for seat in range(match.n)
                if game.seats[match.order[seat]].pop("unshown", None)
            )
            try:
                async with self._shared.outbox.transaction() as s:
                    await self.commit(s, game, match, events)
                    await self._views.render(s, game, match, events, acted=late)
            except repo.StaleGameError:  # another process took the turn over meanwhile
                return
            self._progress.note(game, match)
        if any(isinstance(e, HandEnded) for e in events) and not match.is_over:
            await asyncio.sleep(self._shared.config.hand_pause)
        self.after_commit(game, match)

    async def _think(self, game_id: str, seat: int, level: str, match: Match) -> Action:
        key = (game_id, seat)
        budget = self._shared.config.think_budget(match.n)
        player = self._players.get(key)
        if player is None or getattr(player, "level", None) != level:
            player = make_player(level, time_budget=budget)
            player.level = level
            self._players[key] = player
        view = match.view(seat)
        if level in POOLED_LEVELS:
            if self._shared.thinkers is not None:
                return await self._shared.thinkers.act(level, budget, view)
            return await asyncio.to_thread(player.act, view)
        return player.act(view)

    # ------------------------------------------------------------------ timers

    def arm(self, game: Game, match: Match) -> None:
        """The turn's clock, in the game row: a person's timer, or when the computers
        move (so another process can take either over if this one dies)."""
        seconds = int(game.settings.get("timer", 0) or 0)
        computers = not match.is_over and self.controller(game, match) is not None
        game.due_at = (
            utcnow() + timedelta(seconds=self._shared.config.computer_delay) if computers else None
        )
        game.clock_worker = self.worker
        if seconds <= 0 or match.is_over or computers:
            game.deadline = None
        else:
            game.deadline = utcnow() + timedelta(seconds=seconds)

    def _think_lease(self, game: Game) -> timedelta:
        """How long computers may think before another process may take over."""
        return timedelta(
            seconds=10 + 4 * max(self._shared.config.think_seconds, 0.1) * len(game.seats)
        )

    def schedule_timer(self, game: Game) -> None:
        """Arm this process's timer for the turn's stored deadline (if any)."""
        self._cancel_timer(game.id)
        if game.deadline is None:
            return
        delay = max(0.0, (game.deadline - utcnow()).total_seconds())
        loop = asyncio.get_running_loop()
        self._timers[game.id] = loop.call_later(delay, self._timer_fired, game.id, game.move)
        self._timer_moves[game.id] = game.move

    def _timer_fired(self, game_id: str, move: int) -> None:
        self._timers.pop(game_id, None)
        self._timer_moves.pop(game_id, None)
        self._shared.background.spawn(self.time_out(game_id, move))

    def _cancel_timer(self, game_id: str) -> None:
        handle = self._timers.pop(game_id, None)
        self._timer_moves.pop(game_id, None)
        if handle is not None:
            handle.cancel()

    async def time_out(self, game_id: str, move: int) -> None:
        """The person on turn at ``move`` ran out of time: the computer plays for them
        (twice in a row, and they are marked away)."""
        async with self._shared.locks[game_id]:
            async with self._shared.outbox.transaction() as s:
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
                forfeited = None
                if info["timeouts"] >= 2:
                    info["away"] = True
                    # An online table: the seat goes to a computer for good.
                    uid, name = info.get("user_id"), info.get("name")
                    if online_seats.forfeit(game, match.order[seat]):
                        forfeited = uid
                await self.commit(s, game, match, events)
                if forfeited is not None:
                    await online_seats.tell_forfeit(
                        s, self._shared.outbox, self._shared.translators, game, forfeited, name
                    )
                await self._views.render(s, game, match, events)
            self._progress.note(game, match)
        self.after_commit(game, match)

    # ------------------------------------------------------------ the clock

    async def run(self, interval: float = 1.0) -> None:
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
        now = utcnow()
        before = now - timedelta(seconds=_TAKEOVER_GRACE + self._shared.config.hand_pause)
        if self.liveness is not None:
            due = await self.liveness.due(before, now)
        else:
            async with self._shared.sessions() as s:
                due = await repo.due_games(s, before)
        taken = 0
        for game_id, move, dead in due:
            # This process has it in hand: a timer armed for this very move (one armed
            # for an earlier move, which another worker has since played on, waits to
            # fire for nothing: it must not keep the turn from being taken over).
            if self._timer_moves.get(game_id) == move or game_id in self._taking:
                continue
            self._taking.add(game_id)
            self._shared.background.spawn(self._take_over(game_id, move, dead))
            taken += 1
        return taken

    async def _take_over(self, game_id: str, move: int, dead: int | None = None) -> None:
        try:
            async with self._shared.sessions() as s:
                game = await repo.get_game(s, game_id)
            if game is None or game.status != "playing" or game.move != move:
                return
            log.info(
                "taking over the %s of game %s at move %s (%s)",
                "computers" if game.due_at is not None else "timer",
                game_id,
                move,
                "its worker died" if dead is not None else "late",
            )
            if game.due_at is not None:
                # A dead worker's computers may not be due yet: not before their time
                # (nor later than their usual pause, if it is a lease).
                wait = (game.due_at - utcnow()).total_seconds()
                delay = min(max(0.0, wait), self._shared.config.computer_delay)
                await self._advance(game_id, move, delay=delay, dead=dead)
            elif game.deadline is not None:
                await self.time_out(game_id, move)
        finally:
            self._taking.discard(game_id)

    def start(self, interval: float = 1.0) -> None:
        """The takeover clock and the outbox's poll, until :meth:`stop`."""
        self._loops = [
            asyncio.create_task(self.run(interval), name="clock"),
            asyncio.create_task(self._shared.outbox.run_poll(interval), name="outbox poll"),
        ]

    async def stop(self) -> None:
        """Stop the loops and the timers (a restart re-arms them from the database),
        and give up this worker's liveness lock: the others take its turns over."""
        for task in self._loops:
            task.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        if self.liveness is not None:
            await self.liveness.close()
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._timer_moves.clear()
