"""A simulated Telegram table: the real bot, the Bot API emulator, and people who
read their private hand message and press the buttons it offers.

Used by the end-to-end tests and by ``python -m testkit.demo``. A strategy
decides *what* a person plays (from the seat's own view, as a careful player knows
the rules); :class:`Table` then finds the button for it on that person's keyboard
and presses it, and fails if the bot did not offer it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
from collections.abc import Callable
from typing import Any

from core import (
    Action,
    Bid,
    ChooseTrump,
    DeclareBlind,
    Discard,
    Draw,
    Exchange,
    Match,
    PlayCard,
    SeatView,
    cards_in,
)
from core.players import make_player
from telegram_bot.platform.storage import repo
from telegram_bot.runtime.app import build_application, close_application, open_application
from telegram_bot.runtime.config import Settings
from testkit.emulator import BotApiEmulator

__all__ = ["TOKEN", "BotRunner", "Table", "buttons", "by_level", "lowest_card"]

TOKEN = "123456:TEST-TOKEN"

#: settle(): how long everything must stay done before the bot counts as settled.
QUIET_SECONDS = 0.01
#: settle(): how long nothing at all may change before the bot counts as stuck.
STALL_SECONDS = 120.0

Strategy = Callable[[SeatView], Action]


def buttons(message: Any) -> list[dict[str, Any]]:
    """The inline buttons of an emulator message record, row by row."""
    markup = message.reply_markup or {}
    return [b for row in markup.get("inline_keyboard", []) for b in row]


class BotRunner:
    """Starts and stops the real Application the way ``run_polling`` does."""

    def __init__(self, emu: BotApiEmulator, db_url: str, **overrides: Any) -> None:
        self.emu = emu
        self.settings = Settings(
            token=emu.token,
            database_url=db_url,
            api_url=emu.base_url,
            rate_limit=False,
            computer_delay=0.0,
            hand_pause=0.0,
            think_seconds=0.05,
            deal_seed=1,
            # Tests sweep explicitly (Sweeper.sweep(now=...)): no wall-clock surprises.
            sweep_seconds=0.0,
            # HOKM_HTTP=httpx runs the tests on python-telegram-bot's own client.
            http=os.environ.get("HOKM_HTTP", "lean"),
        )
        for k, v in overrides.items():
            object.__setattr__(self.settings, k, v)
        self.app: Any = None
        #: Serve updates by webhook on this loopback port instead of long polling.
        self.webhook_port: int | None = None
        #: settle() also waits until every edit was sent (off to let a rate limiter lag).
        self.wait_for_edits = True

    @property
    def service(self):
        return self.app.bot_data["service"]

    async def start(self) -> None:
        app = build_application(self.settings)
        await open_application(app)
        if self.webhook_port is not None:
            # The same path run_webhook takes in production, on loopback.
            await app.updater.start_webhook(
                listen="127.0.0.1",
                port=self.webhook_port,
                url_path=self.settings.token,
                webhook_url=f"http://127.0.0.1:{self.webhook_port}/{self.settings.token}",
                secret_token="emulator-secret",
            )
        else:
            await app.updater.start_polling(poll_interval=0.0, timeout=1)
        await app.start()
        self.app = app

    async def stop(self, graceful: bool = True) -> None:
        app = self.app
        if app is None:
            return
        self.app = None
        if graceful:
            with contextlib.suppress(Exception):
                await app.bot_data["service"].idle()
        await app.updater.stop()
        await close_application(app)

    async def crash(self) -> None:
        """Stop without waiting for anything in flight, as a killed process would
        (what the outbox has not sent stays stored, as it would)."""
        if self.app is not None:
            await self.service.outbox.close(timeout=0)
        await self.stop(graceful=False)

    def unfinished(self) -> dict[str, int]:
        """What the bot has not finished, by kind (all zero when it is done)."""
        counts = {"api calls in flight": self.emu.server.inflight + int(self.emu.webhook.busy)}
        if self.app is not None:
            # Pushed by a person but not yet confirmed by the bot (a getUpdates
            # offset, or a webhook answer), so maybe still on its way into the app.
            counts["at the emulator"] = self.emu.world.updates.pending
            app_queue = self.app.update_queue
            # Counted from put() to the end of its handling (task_done), so an update
            # taken from the queue but not yet started still counts.
            counts["in the application"] = getattr(
                app_queue, "_unfinished_tasks", app_queue.qsize()
            )
            counts["being handled"] = self.app.update_processor.in_flight
            counts["service work"] = self.service.pending_work(groups=self.wait_for_edits)
        return counts

    def _progress(self) -> tuple[Any, ...]:
        """Anything that moves while the bot works: calls, updates, counts (not
        long polls: a stuck bot still polls)."""
        queue = self.emu.world.updates
        processed = self.app.update_processor.processed if self.app is not None else 0
        return (
            self.emu.server.last_activity,
            queue.pending,
            queue.last_delivery,
            processed,
            tuple(self.unfinished().values()),
        )

    async def settle(self, quiet: float = QUIET_SECONDS, stall: float = STALL_SECONDS) -> None:
        """Until the bot is done with everything people did so far.

        Done means: for ``quiet`` seconds, no update waiting at the emulator, none
        queued or being handled in the Application, no API call in flight, and no
        pending work in the service. It waits as long as anything changes; it fails
        only when nothing at all changed for ``stall`` seconds (a stuck bot), never
        because the bot is slow (a busy machine).
        """
        loop = asyncio.get_running_loop()
        seen = self._progress()
        changed = idle_since = loop.time()
        while True:
            await asyncio.sleep(0.003)
            now = loop.time()
            progress = self._progress()
            if progress != seen:
                seen, changed = progress, now
            if any(self.unfinished().values()):
                idle_since = now
            elif now - idle_since >= quiet:
                return
            if now - changed >= stall:
                raise AssertionError(self._stall_report(now - changed))

    def _stall_report(self, seconds: float) -> str:
        lines = [f"the bot made no progress for {seconds:.0f} s: {self.unfinished()}"]
        for task in asyncio.all_tasks():
            out = io.StringIO()
            task.print_stack(limit=8, file=out)
            lines.append(f"--- {task.get_name()}\n{out.getvalue()}")
        return "\n".join(lines)


def lowest_card(view: SeatView) -> Action:
    """A weak player: the lowest-ranked legal card, trump by length otherwise."""
    plays = [a for a in view.legal if isinstance(a, PlayCard)]
    if plays:
        return min(plays, key=lambda a: (a.card.suit == view.trump, a.card.rank))
    return view.legal[0]


def by_level(level: str, seed: int = 0) -> Strategy:
    player = make_player(level, seed=seed)
    return player.act


class Table:
    def __init__(self, emu: BotApiEmulator, runner: Any, chat: Any, users: list[Any]) -> None:
        self.emu = emu
        self.runner = runner
        self.chat = chat
        self.users = {u.id: u for u in users}
        self.presses = 0
        #: Check before every action that no hidden card shows in the group. (Off only
        #: where the table may lag a hand behind, whose played cards it still shows.)
        self.check_hidden = True

    async def game(self):
        async with self.runner.service.sessions() as s:
            game = await repo.get_active_game(s, self.chat.id)
            if game is None:
                games = await repo.recent_matches(s, self.chat.id, limit=1)
                return None if not games else await repo.get_game(s, games[0].game_id)
            return game

    def hand_message(self, game, user):
        mid = (game.private_messages or {}).get(str(user.id))
        assert mid is not None, f"{user.first_name} has no private hand message"
        return next(m for m in self.emu.chat_log(user.private_chat_id) if m.message_id == mid)

    async def press(self, user, message, data: str):
        datas = [b.get("callback_data") for b in buttons(message)]
        assert data in datas, f"{user.first_name}'s keyboard lacks {data!r}: {datas}"
        self.presses += 1
        handle = await self.emu.press(user, user.private_chat_id, message.message_id, data)
        await self.runner.settle()
        return handle

    async def step(self, strategies: dict[int, Strategy]) -> bool:
        """One human action. False when the match is over."""
        await self.runner.settle()
        game = await self.game()
        if game is None or game.status != "playing":
            return False
        match = Match.from_json(game.state)
        if self.check_hidden:
            self.check_group_shows_no_hand(match)
        seat = match.turn
        info = game.seats[match.order[seat]]
        uid = info.get("user_id")
        assert uid is not None and not info.get("away"), "a computer seat is waiting"
        user = self.users[uid]
        action = strategies[uid](match.view(seat))
        message = self.hand_message(game, user)
        g, mv = game.id, game.move
        if isinstance(action, PlayCard):
            await self.press(user, message, f"p:{g}:{match.hand_no}:{action.card.ascii}")
        elif isinstance(action, ChooseTrump):
            await self.press(user, message, f"t:{g}:{mv}:{action.suit.letter}")
        elif isinstance(action, Draw):
            await self.press(user, message, f"k:{g}:{mv}:{int(action.keep)}")
        elif isinstance(action, DeclareBlind):
            await self.press(user, message, f"n:{g}:{mv}:{int(action.blind)}")
        elif isinstance(action, Bid):
            await self.press(user, message, f"v:{g}:{mv}:{action.tricks}")
        elif isinstance(action, Discard | Exchange):
            prefix = "d" if isinstance(action, Discard) else "x"
            chosen: list[str] = []
            for card in action.cards:
                sel = ".".join(chosen)
                await self.press(user, message, f"{prefix}:{g}:{mv}:{sel}.{card.ascii}")
                chosen.append(card.ascii)
                message = self.hand_message(game, user)
            if prefix == "x":
                sel = ".".join(chosen)
                await self.press(user, message, f"x:{g}:{mv}:{sel}!" if sel else f"x:{g}:{mv}:!")
        else:  # pragma: no cover
            raise AssertionError(action)
        return True

    def check_group_shows_no_hand(self, match: Match) -> None:
        """Every card still in a hand is absent from every message the bot shows in
        the group, text and buttons (the first-ace draw, dealt from its own deck, is
        public; what people write themselves is theirs)."""
        public = {c for _, c in match.first_draw}
        # Cards played this hand are public, whatever else lists them.
        public |= {c for _, c in match.trick}
        public |= {c for t in match.tricks for _, c in t.plays}
        texts = []
        # A deleted message shows nothing (a re-posted table leaves its old copy
        # deleted, still showing the previous hand's last trick, checked back then).
        for message in self.emu.chat_log(self.chat.id, include_deleted=False):
            if not message.from_bot:
                continue
            texts.append(message.text)
            texts.extend([str(b.get("text", "")) for b in buttons(message)])
        shown = "\n".join(texts)
        secret = [c for seat in range(match.n) for c in match.hand_of(seat)]
        secret += match.stock + [c for d in match.discards for c in cards_in(d)]
        for card in secret:
            if card not in public:
                assert str(card) not in shown, f"the hidden card {card} appears in the group"
        self.checks = getattr(self, "checks", 0) + 1

    async def play_out(self, strategies: dict[int, Strategy], limit: int = 5000) -> None:
        for _ in range(limit):
            if not await self.step(strategies):
                return
        raise AssertionError("the match did not end")
