"""Recovery and draining: after a restart, for a returning player, and at shutdown.

The database is the truth: :meth:`Recovery.resume_all` sends what was decided and
not sent and re-arms every game in progress; a player back with /start or /back gets
their hand and table again; ``pending_work``/``idle``/``shutdown`` drain or stop what
this process still has in hand (a restart re-arms it from the database).
"""

from __future__ import annotations

from core import Match
from telegram_bot.platform.storage import repo
from telegram_bot.service.clock import Clock
from telegram_bot.service.seats import seat_of
from telegram_bot.service.shared import Shared
from telegram_bot.service.views import Views

__all__ = ["Recovery"]


class Recovery:
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

    async def player_returns(self, user_id: int) -> None:
        """/start or /back from a player of a running game: re-send their hand and
        table view (a 429 or a block may have kept them from it)."""
        async with self._shared.sessions() as s:
            game = await repo.find_active_game_for_user(s, user_id)
        if game is None or game.status != "playing":
            return
        async with self._shared.locks[game.id]:
            async with self._shared.outbox.transaction() as s:
                game = await repo.get_game(s, game.id)
                if game is None or game.status != "playing":
                    return
                match = Match.from_json(game.state)
                seat = seat_of(game, match, user_id)
                if seat is None:
                    return
                await self._views.redeal(s, game, match, seat, user_id)
                await self._views.render(s, game, match, [])

    async def resume_all(self) -> int:
        """After a (re)start: send what was decided and not sent, re-arm the timers and
        the computers of every game in progress (their messages are in the outbox)."""
        await self._shared.outbox.start()
        if self._clock.liveness is not None:
            # One worker of several: the turns of the one this replaces are taken over
            # by the clock's sweeps (this worker's first one too); re-arming every game
            # at each start would race the live workers for all of theirs.
            return 0
        async with self._shared.sessions() as s:
            games = await repo.list_active_games(s)
        count = 0
        for game in games:
            if game.status != "playing" or game.state is None:
                continue
            self._clock.resume(game, Match.from_json(game.state))
            count += 1
        return count

    def pending_work(self, *, groups: bool = True) -> int:
        """Work the bot still has to do: background game tasks and chats with decided
        messages not sent yet (without ``groups``, only private chats count: a rate
        limiter may hold group edits back on purpose)."""
        return len(self._shared.background) + self._shared.outbox.pending(private_only=not groups)

    async def idle(self) -> None:
        """Wait for background work and the messages it decided (tests, shutdown)."""
        while self.pending_work():
            await self._shared.background.wait()
            await self._shared.outbox.idle()

    async def shutdown(self) -> None:
        """Stop the timers and computer turns (a restart re-arms them from the database),
        then let the outbox send what was decided."""
        await self._clock.stop()
        await self._shared.background.cancel()
        if self._shared.thinkers is not None:
            await self._shared.thinkers.shutdown()
        await self._shared.outbox.close()
