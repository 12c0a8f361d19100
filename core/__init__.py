"""Hokm (حکم), the Persian trick-taking card game: rules, match state machine and
computer players. Nothing here knows about Telegram, databases or languages.

>>> from core import Match, Variant, PlayCard
>>> match, events = Match.new(Variant.four(), seed=7)
>>> seat = match.turn
>>> action = match.legal_actions(seat)[0]          # the hakem names trump
>>> events = match.apply(seat, action)
>>> card = match.legal_cards(match.turn)[0]
>>> events = match.apply(match.turn, PlayCard(card))
"""

from .actions import (
    Action,
    Bid,
    ChooseTrump,
    DeclareBlind,
    Discard,
    Draw,
    Exchange,
    PlayCard,
    action_from_dict,
    action_to_dict,
)
from .cards import CARDS, SUIT_MASKS, Card, CardSet, Rank, Suit, cards_in, mask_of, parse_card
from .errors import ErrorCode, IllegalAction
from .events import (
    BidMade,
    BlindDeclared,
    CardPlayed,
    CardsDealt,
    Discarded,
    Drew,
    Event,
    Exchanged,
    HakemDrawn,
    HandEnded,
    HandKind,
    HandStarted,
    MatchEnded,
    SeatsArranged,
    TrickWon,
    TrumpChosen,
    event_to_dict,
)
from .match import FORMAT_VERSION, Match, Phase, SeatView, TrickRecord
from .trick import trick_winner, winning_index
from .variant import HakemRule, Kind, Variant

__all__ = [
    "CARDS",
    "FORMAT_VERSION",
    "SUIT_MASKS",
    "Action",
    "Bid",
    "BidMade",
    "BlindDeclared",
    "Card",
    "CardPlayed",
    "CardSet",
    "CardsDealt",
    "ChooseTrump",
    "DeclareBlind",
    "Discard",
    "Discarded",
    "Draw",
    "Drew",
    "ErrorCode",
    "Event",
    "Exchange",
    "Exchanged",
    "HakemDrawn",
    "HakemRule",
    "HandEnded",
    "HandKind",
    "HandStarted",
    "IllegalAction",
    "Kind",
    "Match",
    "MatchEnded",
    "Phase",
    "PlayCard",
    "Rank",
    "SeatView",
    "SeatsArranged",
    "Suit",
    "TrickRecord",
    "TrickWon",
    "TrumpChosen",
    "Variant",
    "action_from_dict",
    "action_to_dict",
    "cards_in",
    "event_to_dict",
    "mask_of",
    "parse_card",
    "trick_winner",
    "winning_index",
]
