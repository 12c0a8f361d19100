"""Recovery and draining: after a restart, for a returning player, and at shutdown.

The database is the truth: :meth:`RecoveryMixin.resume_all` sends what was decided
and not sent and re-arms every game in progress; a player back with /start or /back
gets their hand and table again; ``pending_work``/``idle``/``shutdown`` drain or stop
what this process still has in hand (a restart re-arms it from the database).
"""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession

from core import Match
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service.base import ServiceBase, _seat_of


class RecoveryMixin(ServiceBase):
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

    # ---------------------------------------------------------------- restart

    async def resume_all(self) -> int:
        """After a (re)start: send what was decided and not sent, re-arm the timers and
        the computers of every game in progress (their messages are in the outbox)."""
        await self.outbox.start()
        if self.liveness is not None:
            # One worker of several: the turns of the one this replaces are taken over
            # by the clock's sweeps (this worker's first one too); re-arming every game
            # at each start would race the live workers for all of theirs.
            return 0
        async with self.sessions() as s:
            games = await repo.list_active_games(s)
        count = 0
        for game in games:
            if game.status != "playing" or game.state is None:
                continue
            self._after_commit(game, Match.from_json(game.state))
            count += 1
        return count

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

    async def shutdown(self) -> None:
        """Stop the timers and computer turns (a restart re-arms them from the database),
        then let the outbox send what was decided."""
        for task in self._loops:
            task.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        if self.liveness is not None:
            await self.liveness.close()
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._timer_moves.clear()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self.thinkers is not None:
            await self.thinkers.shutdown()
        await self.outbox.close()
