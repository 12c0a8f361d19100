"""Teach the table: a player's private review of a finished hand.

Under each hand result a «Review this hand» button (``y:<game>:<hand>``) sends the
player who presses it, in private, what double dummy says about the hand: the
tricks their team could have taken from the first trick with every card in view and
perfect play all round, the tricks it took, and the plays of their team that cost
tricks (the card played, a better card from the same hand, the tricks it cost).
``/review`` in private does the same for the player's last finished hand.

What the review may show: after a hand every played card is public, but a hand
stops once a side has 7 tricks, and the cards nobody played stay hidden. So the
review names only cards of the reviewer's own team: the cards they played, and the
better card of the same hand at that moment (the player's own, or their partner's).
The opponents' plays and cards are never named; the figures are counts.

The solves (one per card played, under a second in all) run in the thinkers' pool
(:meth:`telegram_bot.platform.thinking.Thinkers.run`), off the event loop: the press is
answered at once and the review follows as a private message.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from core import CARDS, HandEnded, Match
from core.review import CostlyPlay, HandReview
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat import render
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import HandRecord
from telegram_bot.platform.thinking import review as solve_review
from telegram_bot.service import hands
from telegram_bot.service.answer import Answer
from telegram_bot.service.shared import Shared

__all__ = ["Review", "button", "review_text"]

log = logging.getLogger(__name__)

#: Reviews kept, by (game, hand): every player of a hand shares one.
CACHE_SIZE = 64

PREPARING = N_("Preparing your review…")
NOTE = N_(
    "Double dummy is a yardstick, not a verdict: it counts all 13 tricks, even when the "
    "hand stopped at 7, as if every card were in view. With the cards hidden, a play it "
    "faults can still have been the right one."
)


# ------------------------------------------------------------------- the button


def button(
    game: Any, match: Match, event: HandEnded, tr: Translator
) -> InlineKeyboardMarkup | None:
    """The button under a hand result (None for hands that are not reviewed)."""
    if not hands.reviewable(match) or not game.user_ids():
        return None
    data = cb.encode("y", game.id, event.hand_no)
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(tr("🔎 Review this hand"), callback_data=data)]]
    )


class Review:
    """The reviews asked for: each solved once for all the hand's players, in the
    background (tracked, so that the service's idle() and shutdown() wait for it)."""

    def __init__(
        self,
        shared: Shared,
    ) -> None:
        self._shared = shared
        #: Reviews computed lately, and those being computed, by (game, hand).
        self._cache: OrderedDict[tuple[str, int], HandReview] = OrderedDict()
        self._running: dict[tuple[str, int], asyncio.Future[HandReview]] = {}

    async def press(self, game_id: str, hand_no: int | None, user_id: int) -> Answer:
        """A press on «Review this hand»: answered at once; the review follows in private."""
        tr = await self._shared.translators.user(user_id)
        if hand_no is None:
            return Answer(tr("This button is not valid"), alert=True)
        async with self._shared.sessions() as s:
            record = await hands.get(s, user_id, game_id, hand_no)
            if record is None:
                return Answer(await _refusal(s, game_id, hand_no, user_id, tr), alert=True)
        self._start(user_id, record)
        return Answer(tr(PREPARING))

    async def last_hand(self, user_id: int) -> bool:
        """/review: the player's last finished hand, if there is one (False if not)."""
        async with self._shared.sessions() as s:
            record = await hands.latest(s, user_id)
        if record is None:
            return False
        self._start(user_id, record)
        return True

    def _start(self, user_id: int, record: HandRecord) -> None:
        """Compute and send the review in the background."""
        hand = hands.unpack(record)
        self._shared.background.spawn(
            self._send(user_id, record.game_id, hand, record.seat, list(record.players))
        )

    async def _send(
        self, user_id: int, game_id: str, hand: hands.FinishedHand, seat: int, players: list
    ) -> None:
        tr = await self._shared.translators.user(user_id)
        try:
            review = await self._review(game_id, hand)
        except Exception:  # the solver refused the hand, or the pool broke: say so
            log.exception("could not review hand %s of game %s", hand.hand_no, game_id)
            text = tr("Sorry, this hand could not be reviewed.")
        else:
            text = review_text(review, hand, seat, players, tr)
        async with self._shared.outbox.transaction() as s:
            await self._shared.outbox.send(s, user_id, text)

    async def _review(self, game_id: str, hand: hands.FinishedHand) -> HandReview:
        """The hand's review, solved once for all its players (a press while it is being
        solved waits for the same solve)."""
        key = (game_id, hand.hand_no)
        done = self._cache.get(key)
        if done is not None:
            self._cache.move_to_end(key)
            return done
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[HandReview] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            args = (hand.deal, int(hand.trump), hand.plays)
            if self._shared.thinkers is not None:
                par, taken, costly = await self._shared.thinkers.run(solve_review, *args)
            else:
                par, taken, costly = await asyncio.to_thread(solve_review, *args)
            review = HandReview(
                int(hand.trump),
                par,
                taken,
                tuple(
                    CostlyPlay(t, seat, CARDS[c], CARDS[b], lost) for t, seat, c, b, lost in costly
                ),
            )
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a press nobody waits on logs nothing
            raise
        else:
            future.set_result(review)
            self._cache[key] = review
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
            return review
        finally:
            del self._running[key]


async def _refusal(s: Any, game_id: str, hand_no: int, user_id: int, tr: Translator) -> str:
    """Why there is no review to give: an old hand, someone else's, or a made-up button."""
    game = await repo.get_game(s, game_id)
    if game is None or game.state is None:
        return tr("This button is not valid")
    if user_id not in game.user_ids():
        return tr("You are not playing in this game")
    finished = {h["hand"] for h in Match.from_json(game.state).history}
    if hand_no not in finished:
        return tr("This button is not valid")
    return tr.ngettext(
        "This hand can no longer be reviewed: only your last hand is kept.",
        "This hand can no longer be reviewed: only your last {n} hands are kept.",
        hands.KEEP,
    )


# ------------------------------------------------------------------- the text


def review_text(
    review: HandReview, hand: hands.FinishedHand, seat: int, players: list, tr: Translator
) -> str:
    """The review as ``seat``'s player reads it: only their team's cards are named."""
    side = seat % 2
    partner = (seat + 2) % 4
    partner_name = render.player_name(players[partner], players[partner]["number"] - 1, tr)
    played = len(hand.plays) // 4
    lines = [
        tr("🔎 <b>Review of hand {n}</b>").format(n=tr.format_number(hand.hand_no)),
        tr("Trump: {suit}").format(suit=render.suit_text(hand.trump, tr)),
        "",
        tr(
            "With every card in view and perfect play by all four, your team could have "
            "taken {par} of the 13 tricks from the first trick (double dummy).",
            par=review.par[side],
        ),
        tr(
            "It took {taken} of the {played} tricks played.",
            taken=review.taken[side],
            played=played,
        ),
        "",
    ]
    costly = review.costly_plays(side)
    if not costly:
        lines.append(tr("No play of your team cost a trick."))
    else:
        lines.append(tr("<b>Plays that cost your team tricks:</b>"))
        for p in costly:
            lines.append("• " + _costly_line(p, seat, partner_name, tr))
        lines.append(
            tr.ngettext(
                "In all, your team's plays cost {n} trick.",
                "In all, your team's plays cost {n} tricks.",
                review.tricks_lost(side),
            )
        )
    lines += ["", "<i>" + tr(NOTE) + "</i>"]
    return "\n".join(lines)


def _costly_line(p: CostlyPlay, seat: int, partner: str, tr: Translator) -> str:
    played, best = render.card_text(p.played), render.card_text(p.best)
    if p.seat == seat:
        return tr.ngettext(
            "Trick {trick}: you played {played}; {best} would have taken {n} more trick.",
            "Trick {trick}: you played {played}; {best} would have taken {n} more tricks.",
            p.lost,
            trick=p.trick,
            played=played,
            best=best,
        )
    return tr.ngettext(
        "Trick {trick}: your partner {name} played {played}; {best} would have taken "
        "{n} more trick.",
        "Trick {trick}: your partner {name} played {played}; {best} would have taken "
        "{n} more tricks.",
        p.lost,
        trick=p.trick,
        name=partner,
        played=played,
        best=best,
    )
