"""What the bot tells people about itself: the greeting, /help, /rules, the command menu.

The rules are drawn from a table's settings (the variant it will play), so /rules
answers for the game at hand, not for a default the group never chose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core import Suit
from telegram_bot.chat.i18n import N_, Translator
from telegram_bot.chat.render import BIDDING_TARGET_CHOICES, TARGET_CHOICES, suit_text

__all__ = [
    "COMMANDS",
    "GREETING",
    "command_menu",
    "help_text",
    "or_list",
    "rules_text",
]

#: The command menu, in the order Telegram shows it. Descriptions are translated per
#: language (one menu per language, no mixed-language lines).
COMMANDS = (
    ("newgame", N_("New game in this group")),
    ("play", N_("Solo match against the computer")),
    ("online", N_("Play with anyone")),
    ("rating", N_("Your rating")),
    ("top", N_("Rated leaderboard")),
    ("rated", N_("Rated matches in this group, on or off")),
    ("rules", N_("The rules of this table")),
    ("score", N_("Running score")),
    ("stats", N_("Leaderboard")),
    ("review", N_("Review your last hand")),
    ("hints", N_("Hints on or off (one person against computers)")),
    ("language", N_("Language")),
    ("back", N_("I'm back")),
    ("leave", N_("Leave the match; a computer takes your seat")),
    ("takeover", N_("Take a computer's or an away player's seat")),
    ("cancel", N_("End this group's game")),
    ("quit", N_("End your solo match")),
    ("help", N_("How to play")),
)

#: «🃏 Get your cards in private» is the lobby's button (render.GET_CARDS): translate it
#: the same way in both.
GREETING = N_(
    "Hello! I host <b>Hokm</b> games in this group.\n"
    "To play: send /newgame, press «Join the game», then «Start the game». Empty seats "
    "get computer players. Each player gets their cards in a private chat with the bot: "
    "press «🃏 Get your cards in private» once to open it.\n"
    "/rules — the rules · /help — how to play · /language — the group's language"
)

HELP = N_(
    "<b>How Hokm is played</b>\n"
    "The first player dealt an ace is the hakem. The hakem sees five cards and names "
    "trump, then everyone gets the rest of their cards. Follow the led suit if you can; "
    "otherwise you may play any card, trump included. The highest trump takes the trick, "
    "else the highest card of the led suit. With 4 or 2 players, the first side to take "
    "7 tricks wins the hand: 1 point; kot (7-0 for the hakem's side) 2 points; hakem-kot "
    "(7-0 against the hakem) 3 points. A match is played to {targets} points, as chosen "
    "in the lobby's settings.\n"
    "/rules — the rules of this table · /newgame — open a game in a group · /play — a solo "
    "match in private · /score — the running score · /stats — leaderboard · /language — "
    "language · /back — come back after being away\n"
    "/review — review your last hand · /hints — hints on or off (one person against "
    "computers)"
)

WAYS_OUT = N_(
    "/leave — leave a match; a computer plays your seat · /takeover — take a computer's or "
    "an away player's seat · /cancel — end the group's game (whoever opened it, or an "
    "admin; it does not count) · /quit — end a solo match"
)

ONLINE = N_(
    "/online — play with anyone, matched by rating · /rating — your rating · /top — the "
    "rated leaderboard · /rated — rated matches in a group, on or off (its admins)"
)

_PLAY = N_(
    "Follow the led suit if you can; otherwise play any card, trump included. The "
    "highest trump takes the trick, else the highest card of the led suit; whoever "
    "takes it leads the next one."
)
RULES_FOUR = N_(
    "<b>Hokm, 4 players, to {target} points</b>\n"
    "Two teams; partners sit opposite. Cards are dealt face up until the first ace: that "
    "player is the hakem, sees five cards and names trump; then everyone gets 13.\n"
    "{play}\n"
    "The first team to take 7 tricks wins the hand: 1 point; kot (7-0 for the hakem's "
    "team) 2 points; hakem-kot (7-0 against the hakem's team) 3 points. If the hakem's "
    "team wins the hand the hakem stays; otherwise the next player becomes hakem."
)
RULES_THREE = N_(
    "<b>Hokm, 3 players, to {target} points</b>\n"
    "Each for themself. The {two} is taken out: 17 cards each. The first player dealt an "
    "ace is the hakem and names trump from five cards.\n"
    "{play}\n"
    "A hand ends when one player has more tricks than anyone else can still reach: 1 "
    "point. Taking the first 7 tricks (7-0-0): 2 points for the hakem, 3 for anyone else. "
    "If all 17 tricks are played and two players tie for most, the third player wins the "
    "hand."
)
RULES_TWO = N_(
    "<b>Hokm, 2 players, to {target} points</b>\n"
    "The {two} is taken out. The hakem names trump from five cards; each player then puts "
    "two of their five cards away, face down. In turn, each looks at the top card of the "
    "stock and keeps it (the next one is put away unseen) or puts it away and takes the "
    "next one, until both hold 13.\n"
    "{play}\n"
    "The first to take 7 tricks wins the hand: 1 point; 7-0: 2 points for the hakem, 3 for "
    "the other player. The hakem stays after winning a hand."
)
RULES_BIDDING = N_(
    "<b>Hokm with bidding, 2 players, to {target} points</b>\n"
    "Spades are always trump. Each player builds a hand of 13 from the stock: keep the top "
    "card and put the next away, or put it away and keep the next. Then each bids 0 to 13 "
    "tricks. Nil (0): +100 if you take no trick, −100 otherwise; blind nil, bid before "
    "looking at your cards: +200 / −200, and you may exchange up to three cards.\n"
    "Spades cannot be led until a spade has been played on another suit. {play}\n"
    "A bid made scores 10 per trick bid and 1 per extra trick (a bag); a bid missed loses "
    "10 per trick bid; every 10 bags cost 100 points."
)
HAKEM_STAYS = N_("The hakem stays after winning a hand; otherwise the next player becomes hakem.")
WINNER_HAKEM = N_("The winner of each hand becomes the hakem.")
BY_ACES = N_("Partners by aces: the player dealt the second ace is the hakem's partner.")
CARD_POINTS = N_(
    "Card points: the cards in each player's tricks are also counted (A 14, K 13, Q 12, "
    "J 11, the rest their number), plus 100 per point."
)
TIMER = N_("Turn timer: {seconds} s; when it runs out, the computer plays for you.")


def or_list(items: Sequence[str], tr: Translator) -> str:
    """``1, 3, 5, 7 or 10`` / «۱، ۳، ۵، ۷ یا ۱۰»."""
    if len(items) == 1:
        return items[0]
    sep = "، " if tr.lang == "fa" else ", "
    return tr("{items} or {last}").format(items=sep.join(items[:-1]), last=items[-1])


def help_text(tr: Translator) -> str:
    targets = or_list([tr.format_number(t) for t in TARGET_CHOICES], tr)
    return tr(HELP).format(targets=targets) + "\n" + tr(ONLINE) + "\n" + tr(WAYS_OUT)


def rules_text(settings: dict[str, Any], tr: Translator) -> str:
    """The rules of the variant ``settings`` describe (a table's or a group's defaults)."""
    players = int(settings.get("players", 4))
    play = tr(_PLAY)
    two = suit_text(Suit.parse(str(settings.get("removed_two", "C"))), tr)
    two = tr("2 of {suit}").format(suit=two)
    if settings.get("kind") == "bidding":
        target = int(settings.get("target", BIDDING_TARGET_CHOICES[-1]))
        lines = [tr(RULES_BIDDING).format(target=tr.format_number(target), play=play)]
    else:
        target = tr.format_number(int(settings.get("target", 7)))
        template = {4: RULES_FOUR, 3: RULES_THREE}.get(players, RULES_TWO)
        lines = [tr(template).format(target=target, play=play, two=two)]
        if players == 4 and settings.get("teams_by_aces"):
            lines.append(tr(BY_ACES))
        if players == 3:
            winner = settings.get("hakem_rule") == "winner"
            lines.append(tr(WINNER_HAKEM) if winner else tr(HAKEM_STAYS))
            if settings.get("card_points"):
                lines.append(tr(CARD_POINTS))
    seconds = int(settings.get("timer", 0) or 0)
    if seconds:
        lines.append(tr(TIMER).format(seconds=tr.format_number(seconds)))
    return "\n".join(lines)


def command_menu(tr: Translator) -> list[tuple[str, str]]:
    """The command menu in one language."""
    return [(name, tr(description)) for name, description in COMMANDS]
