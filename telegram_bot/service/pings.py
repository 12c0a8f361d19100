"""Turn pings: Telegram's edits notify no one, so a person whose turn has waited is
told with a message that does, once a turn.

- ``private`` (the default): their hand message is posted again at the bottom of their
  private chat (deleted and sent anew, the same text and buttons under a ⏰ line).
  Their play edits it like any hand message, so the ping leaves nothing stale behind.
- ``group``: the group table is posted again with a mention of them; the next move
  edits the mention away.

The wait is a table setting (``ping``: seconds, 0 = off; ``ping_to``), checked by the
sweeper over the games table (:mod:`telegram_bot.service.sweeper`). A seat stores the move it
was pinged at (``pinged``), so a turn is pinged at most once, across restarts and
processes.

Besides, the hakem's trump call notifies the others: their hand message, which now
holds the whole hand, is posted anew instead of edited (by the views,
:mod:`telegram_bot.service.views`). (The start of a match needs
nothing more: the hands are new messages, and new messages notify.)
"""

from __future__ import annotations

from datetime import datetime
from html import escape

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from core import Match
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, isolate
from telegram_bot.platform.storage.models import Game
from telegram_bot.service.languages import Translators
from telegram_bot.service.views import Views

__all__ = ["DEFAULT_PING", "PING_CHOICES", "PING_TO", "due", "ping"]

#: Seconds a turn waits before its ping (0: no pings), as the settings offer them.
PING_CHOICES = render.PING_CHOICES
PING_TO = ("private", "group")
DEFAULT_PING = 15
#: No ping when the turn timer runs out within this many seconds anyway.
TIMER_MARGIN = 5.0

PRIVATE_PING = N_("⏰ The table is waiting for you.")
GROUP_PING = N_("⏰ {name}, it is your turn.")


def wait_seconds(game: Game) -> int:
    return int(game.settings.get("ping", DEFAULT_PING) or 0)


def due(game: Game, match: Match, now: datetime) -> int | None:
    """The engine seat to ping now, if any: a person on turn (not away), waiting for
    at least the table's ping time, and not pinged yet this turn."""
    seconds = wait_seconds(game)
    if seconds <= 0 or game.status != "playing" or match.is_over or match.turn is None:
        return None
    info = game.seats[match.order[match.turn]]
    if not info.get("user_id") or info.get("away") or info.get("bot"):
        return None
    if info.get("pinged") == game.move:
        return None
    if (now - game.updated_at).total_seconds() < seconds:
        return None
    if game.deadline is not None and (game.deadline - now).total_seconds() < TIMER_MARGIN:
        return None
    return match.turn


async def ping(
    views: Views, translators: Translators, s: AsyncSession, game: Game, match: Match, seat: int
) -> None:
    """Ping the seat on turn (decided by :func:`due`) and remember it in the seat."""
    info = game.seats[match.order[seat]]
    uid = int(info["user_id"])
    if game.chat_id < 0 and game.settings.get("ping_to") == "group":
        gtr = await translators.chat(game.chat_id, s)
        # Isolated outside the link, so a Latin name does not turn the Persian line around.
        name = escape(info.get("name") or "?")
        mention = isolate(f'<a href="tg://user?id={uid}">{name}</a>')
        text = render.table_text(game, match, gtr) + "\n\n" + gtr(GROUP_PING).format(name=mention)
        await views.repost_table(s, game, text, views.table_keyboard(game, match, gtr))
    else:
        tr = await translators.user(uid, s)
        await views.post_hand_again(s, game, match, seat, uid, tr(PRIVATE_PING))
    seats = [dict(x) for x in game.seats]
    seats[match.order[seat]]["pinged"] = game.move
    game.seats = seats
    # Bookkeeping, not a move: the move number and the last-action time stay.
    await s.execute(
        update(Game)
        .where(Game.id == game.id, Game.move == game.move)
        .values(seats=seats, updated_at=game.updated_at)
        .execution_options(synchronize_session=False)
    )
