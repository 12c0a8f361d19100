"""The page's words, through the same gettext catalogs as the chat.

The page asks for ``/texts/<lang>.json`` once and looks its words up by key; the
translations are the chat's where the words are the same (errors, suits, "Your turn").
Placeholders stay ``{name}`` and are filled in by the page.
"""

from __future__ import annotations

import functools
import json

from core.errors import ErrorCode
from telegram_bot.chat.i18n import LANGUAGES, N_, get_translator

__all__ = ["TEXTS", "texts_json"]

TEXTS: dict[str, str] = {
    "title": N_("Hokm table"),
    "your_turn": N_("Your turn"),
    "turn_of": N_("{name}'s turn"),
    "hakem": N_("Hakem"),
    "trump": N_("Trump"),
    "no_trump_yet": N_("The hakem is choosing trump…"),
    "choose_trump": N_("Choose trump"),
    "last_trick": N_("Last trick"),
    "tricks": N_("Tricks"),
    "score": N_("Score"),
    "target": N_("Match to {target}"),
    "hand_no": N_("Hand {n}"),
    "us": N_("Us"),
    "them": N_("Them"),
    "you": N_("You"),
    "computer": N_("computer"),
    "away": N_("away"),
    "keep": N_("Keep it"),
    "take_next": N_("Discard it and take the next"),
    "discard_two": N_("Choose two cards to put away"),
    "exchange_up_to": N_("Choose up to three cards to exchange"),
    "confirm": N_("Confirm"),
    "bid": N_("Your bid"),
    "blind_nil": N_("Blind nil"),
    "not_blind": N_("See my cards"),
    "match_over": N_("This match is over"),
    "we_won": N_("Your side won the match"),
    "they_won": N_("{name} won the match"),
    "reconnecting": N_("Connection lost: reconnecting…"),
    "expired": N_("This page has expired: open the table again from the chat"),
    "open_in_telegram": N_("Open this page from the bot's button in Telegram"),
    "not_seated": N_("You are not playing in this game"),
    "no_such_game": N_("This game no longer exists"),
    "stale_move": N_("The table has moved on: try again"),
    "too_many": N_("Too fast: wait a moment"),
    "deck": N_("Deck"),
    "deck_classic": N_("Classic"),
    "deck_four": N_("Four colours"),
    "spades": N_("spades"),
    "hearts": N_("hearts"),
    "diamonds": N_("diamonds"),
    "clubs": N_("clubs"),
    # core's refusals, as the chat words them
    str(ErrorCode.NOT_YOUR_TURN): N_("Not your turn"),
    str(ErrorCode.WRONG_PHASE): N_("That is not possible right now"),
    str(ErrorCode.CARD_NOT_IN_HAND): N_("That card is not in your hand"),
    str(ErrorCode.MUST_FOLLOW_SUIT): N_("You must follow the led suit ({suit})"),
    str(ErrorCode.UNKNOWN_CARD): N_("Unknown card"),
    str(ErrorCode.SPADES_NOT_BROKEN): N_(
        "Spades cannot be led until a spade has been played on another suit"
    ),
    str(ErrorCode.MATCH_OVER): N_("This match is over"),
    str(ErrorCode.UNKNOWN_ACTION): N_("This button is not valid"),
}


@functools.cache
def texts_json(lang: str) -> bytes:
    """The page's words in ``lang`` (``fa`` or ``en``), as JSON, with the language's
    direction."""
    if lang not in LANGUAGES:
        raise KeyError(lang)
    tr = get_translator(lang)
    body = {"lang": lang, "rtl": tr.is_rtl, "texts": {k: tr(v) for k, v in TEXTS.items()}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
