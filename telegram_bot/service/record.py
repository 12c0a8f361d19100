"""An accepted action stored: the new state with the next move number, the finished
hand kept for its review, and a finished match's result (one transaction)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncSession

from core import Event, HandKind, Match
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import Game
from telegram_bot.service import hands, online_seats

__all__ = ["commit", "record_result"]


async def commit(
    s: AsyncSession,
    game: Game,
    match: Match,
    events: list[Event],
    arm: Callable[[Game, Match], None],
) -> None:
    """Persist an accepted action (and a finished match's result) in one transaction;
    ``arm`` sets the next turn's clock in the row (the clock's ``arm``)."""
    await hands.record_finished(s, game, match, events)  # before game.state moves on
    expected = game.move
    game.move += 1
    game.state = match.to_json()
    if match.is_over:
        game.status = "finished"
        game.deadline = None
        await record_result(s, game, match)
        if game.settings.get("online") or game.settings.get(online_seats.GROUP_RATED):
            await online_seats.rate_finished(s, game, match)
    else:
        arm(game, match)
    await repo.save_game(s, game, expected)


async def record_result(s: AsyncSession, game: Game, match: Match) -> None:
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
