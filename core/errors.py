"""The one error type the engine raises for a refused action."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ErrorCode", "IllegalAction"]


class ErrorCode(StrEnum):
    """Stable codes the bot translates into the player's language."""

    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    MUST_FOLLOW_SUIT = "must_follow_suit"
    UNKNOWN_CARD = "unknown_card"
    SPADES_NOT_BROKEN = "spades_not_broken"
    BAD_BID = "bad_bid"
    BAD_DISCARD = "bad_discard"
    BAD_EXCHANGE = "bad_exchange"
    NO_SUCH_SEAT = "no_such_seat"
    MATCH_OVER = "match_over"
    UNKNOWN_ACTION = "unknown_action"


class IllegalAction(Exception):
    """An action the rules refuse. The match is left exactly as it was."""

    def __init__(self, code: ErrorCode, detail: str = "", **info: object) -> None:
        super().__init__(f"{code}: {detail}" if detail else str(code))
        self.code = code
        #: Facts a message may use, e.g. ``led_suit`` for MUST_FOLLOW_SUIT.
        self.info = info
