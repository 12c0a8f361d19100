"""Texts and keyboards: a game's state drawn for one recipient, in their language.

Nothing here decides a rule; it only reads the engine's state and events. Group
texts are built from the spectator view, so a private hand cannot reach them.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from core import (
    Bid,
    Card,
    ChooseTrump,
    HandEnded,
    HandKind,
    Kind,
    Match,
    Phase,
    SeatView,
    Suit,
    Variant,
    parse_card,
)
from telegram_bot.chat import callbacks as cb
from telegram_bot.chat.i18n import N_, Translator, isolate, ltr
from telegram_bot.platform.keyboards import Button, PlainKeyboard, button

__all__ = [
    "SUIT_NAMES",
    "card_label",
    "hand_result_text",
    "lobby_keyboard",
    "lobby_text",
    "match_result_text",
    "private_keyboard",
    "private_text",
    "settings_keyboard",
    "signed",
    "table_keyboard",
    "table_text",
    "user_name",
]

SUIT_NAMES = {
    Suit.SPADES: N_("spades"),
    Suit.HEARTS: N_("hearts"),
    Suit.DIAMONDS: N_("diamonds"),
    Suit.CLUBS: N_("clubs"),
}
LEVEL_NAMES = {"easy": N_("easy"), "normal": N_("normal"), "hard": N_("hard")}
TIMER_CHOICES = (0, 30, 60, 120)
#: What a player is asked on their own turn in the phases decided by one button row.
OWN_TURN_PROMPTS = {
    Phase.DISCARD: N_("Put two cards away (face down)."),
    Phase.BLIND: N_("Bid blind nil before you see your cards? (+200 / −200)"),
    Phase.EXCHANGE: N_(
        "Blind nil: pick up to three cards to exchange for random discards, then confirm."
    ),
    Phase.BID: N_("How many tricks will you take? (0 = nil)"),
}
TARGET_CHOICES = (1, 3, 5, 7, 10)
#: The settings keyboard's row labels, and what pressing one explains.
SETTING_HINTS = {
    "players": (N_("👥 Players"), N_("How many play; empty seats get computer players.")),
    "target": (N_("🎯 Points to win"), N_("The first side to reach this many points wins.")),
    "timer": (
        N_("⏱ Turn timer"),
        N_("When a turn's time runs out, the computer plays for that player."),
    ),
    "level": (
        N_("🤖 Computer players"),
        N_(
            "How well the computer players play. Easy and normal play at once; hard "
            "thinks up to {seconds} s a card and plays best."
        ),
    ),
    "teams_by_aces": (
        N_("🤝 Partners"),
        N_("Fixed: partners by seat. By aces: the second ace dealt is the hakem's partner."),
    ),
    "removed_two": (
        N_("🃏 The 2 taken out"),
        N_("With 2 or 3 players one 2 leaves the deck: 51 cards."),
    ),
    "hakem_rule": (
        N_("👑 The next hakem"),
        N_("Who becomes hakem when the hakem loses a hand."),
    ),
    "card_points": (
        N_("🧮 Card points"),
        N_("Also count the cards in each player's tricks (A 14 … 2), plus 100 a point."),
    ),
    "ping": (
        N_("🔔 Turn reminder"),
        N_("When a person's turn has waited this long, they are reminded, once a turn."),
    ),
    "ping_to": (
        N_("📣 Reminders go to"),
        N_("A private message from the bot, or a mention in the group."),
    ),
}
#: Seconds before a waiting turn is reminded (0: off); see telegram_bot.service.pings.
PING_CHOICES = (0, 15, 30, 60)
BIDDING_TARGET_CHOICES = (100, 250, 500)
#: The lobby's button to the private chat, short enough for a phone's width.
GET_CARDS = N_("🃏 Get your cards in private")


# --------------------------------------------------------------------- pieces


def card_label(card: Card) -> str:
    """A card as shown on a button: the same glyphs in both languages."""
    return str(card)


def card_text(card: Card) -> str:
    """A card inside running text, isolated left-to-right so Persian does not flip it."""
    return ltr(str(card))


def suit_text(suit: Suit, tr: Translator) -> str:
    return f"{tr(SUIT_NAMES[suit])} {suit.symbol}"


def seat_names(game: Any, match: Match | None, tr: Translator) -> list[str]:
    """Display names per engine seat (after any rearrangement by aces)."""
    seats = game.seats
    order = match.order if match is not None else tuple(range(len(seats)))
    return [player_name(seats[order[s]], order[s], tr) for s in range(len(order))]


def player_name(seat: dict[str, Any], index: int, tr: Translator) -> str:
    """A seat's name for a message: escaped for HTML and isolated (FSI … PDI), so that
    a Latin name does not turn a Persian line around."""
    if seat.get("bot"):
        return isolate(escape(tr("🤖 Computer {n}").format(n=tr.format_number(index + 1))))
    return user_name(seat.get("name"))


def user_name(name: str | None) -> str:
    """A person's (first) name for a message: escaped for HTML and isolated."""
    return isolate(escape(name or "?"))


def signed(n: int, tr: Translator) -> str:
    """``+100`` / ``−100``; in Persian isolated left to right («⁦+۱۰۰⁩»), so that the
    sign stays on the left of the digits."""
    text = ("+" if n >= 0 else "−") + tr.format_number(abs(n))
    return ltr(text) if tr.is_rtl else text


def list_sep(tr: Translator) -> str:
    """The comma between the items of a list: «، » in Persian, ", " in English."""
    return "، " if tr.lang == "fa" else ", "


def side_name(v: Variant, side: int, names: Sequence[str], tr: Translator) -> str:
    if v.teams:
        return tr("Team {n}").format(n=tr.format_number(side + 1))
    return names[side]


def _num(tr: Translator, n: int) -> str:
    return tr.format_number(n)


def and_join(items: Sequence[str], tr: Translator) -> str:
    """``Ali & Sara`` / «علی و سارا»: partners named together."""
    return tr(" & ").join(items)


def side_members(v: Variant, side: int) -> list[int]:
    return [s for s in range(v.players) if v.side_of(s) == side]


def side_lines(
    view: SeatView, names: Sequence[str], tr: Translator, me: int | None = None
) -> list[str]:
    """Points and tricks of every side, from public facts only (both views use it).

    In seat ``me``'s own view that seat is «شما» / "you", named first in its team.
    """
    v = view.variant
    lines = []
    for side in range(v.sides):
        members = side_members(v, side)
        tricks = sum(view.tricks_won[s] for s in members)
        mine = me in members
        label = tr("You") if mine and not v.teams else side_name(v, side, names, tr)
        if v.teams:
            if mine:
                members = [me, *(s for s in members if s != me)]
            who = [tr("you") if s == me else names[s] for s in members]
            label += " (" + and_join(who, tr) + ")"
        parts = [
            tr.ngettext("{n} point", "{n} points", view.scores[side]),
            tr.ngettext("{n} trick", "{n} tricks", tricks),
        ]
        if v.card_points:
            total = view.card_points[side] + 100 * view.scores[side]
            parts.append(tr("card points {n}").format(n=_num(tr, total)))
        if v.kind is Kind.BIDDING and view.bids[side] is not None:
            bid = view.bids[side]
            parts.append(
                tr("blind nil")
                if view.blind[side]
                else tr("nil")
                if bid == 0
                else tr("bid {n}").format(n=_num(tr, bid))
            )
        lines.append(f"{label}: " + " · ".join(parts))
    return lines


def trick_text(view: SeatView, names: Sequence[str], tr: Translator) -> str | None:
    """The trick on the table, or else the last trick and who took it."""
    if view.trick:
        return tr("On the table: {cards}").format(cards=_trick_line(view.trick, names, tr))
    if view.tricks:
        last = view.tricks[-1]
        return tr("Last trick: {cards} — {name} took it").format(
            cards=_trick_line(last.plays, names, tr), name=names[last.winner]
        )
    return None


# ---------------------------------------------------------------------- lobby


def variant_summary(settings: dict[str, Any], tr: Translator) -> str:
    players = settings.get("players", 4)
    if settings.get("kind") == "bidding":
        text = tr("2 players, bidding (spades trump) to {target}")
    else:
        text = tr("{players} players to {target} points")
    parts = [text.format(players=_num(tr, players), target=_num(tr, settings.get("target", 7)))]
    timer = settings.get("timer", 60)
    parts.append(
        tr("turn timer: {seconds} s").format(seconds=_num(tr, timer)) if timer else tr("no timer")
    )
    parts.append(
        tr("computer: {level}").format(level=tr(LEVEL_NAMES[settings.get("level", "normal")]))
    )
    if players == 4 and settings.get("teams_by_aces"):
        parts.append(tr("partners by aces"))
    if players == 3 and settings.get("hakem_rule") == "winner":
        parts.append(tr("the winner becomes hakem"))
    if settings.get("card_points"):
        parts.append(tr("card points"))
    return " · ".join(parts)


def lobby_text(game: Any, tr: Translator) -> str:
    lines = [
        tr("<b>Hokm</b> — a new game is gathering players"),
        variant_summary(game.settings, tr),
        "",
    ]
    for i, seat in enumerate(game.seats):
        who = player_name(seat, i, tr) if seat else tr("— empty —")
        lines.append(f"{_num(tr, i + 1)}. {who}")
    lines.append("")
    lines.append(tr("Empty seats are filled by computer players when the game starts."))
    return "\n".join(lines)


def lobby_keyboard(game: Any, tr: Translator, bot_username: str) -> InlineKeyboardMarkup:
    g = game.id
    rows = [
        [
            InlineKeyboardButton(tr("Join the game"), callback_data=cb.encode("j", g)),
            InlineKeyboardButton(tr("Leave"), callback_data=cb.encode("l", g)),
        ],
        [
            InlineKeyboardButton(tr("Add a computer player"), callback_data=cb.encode("b", g)),
            InlineKeyboardButton(tr("⚙️ Settings"), callback_data=cb.encode("o", g)),
        ],
        [
            InlineKeyboardButton(tr("Start the game"), callback_data=cb.encode("s", g)),
            InlineKeyboardButton(tr("Cancel the game"), callback_data=cb.encode("c", g)),
        ],
        [
            InlineKeyboardButton(
                tr(GET_CARDS),
                url=f"https://t.me/{bot_username}?start=join_{g}",
            )
        ],
    ]
    return InlineKeyboardMarkup(rows)


def settings_keyboard(game: Any, tr: Translator) -> InlineKeyboardMarkup:
    """The lobby's settings: a labelled row of choices per setting. A label is a
    button too; pressing it explains the setting (SETTING_HINTS)."""
    g = game.id
    s = game.settings
    players = s.get("players", 4)
    bidding = s.get("kind") == "bidding"

    def opt(label: str, name: str, value: Any, current: Any) -> InlineKeyboardButton:
        mark = "✅ " if value == current else ""
        return InlineKeyboardButton(
            mark + label, callback_data=cb.encode("o", g, None, f"{name}={value}")
        )

    rows: list[list[InlineKeyboardButton]] = []

    def setting(name: str, *choices: list[InlineKeyboardButton]) -> None:
        label, _hint = SETTING_HINTS[name]
        about = cb.encode("o", g, None, f"about={name}")
        rows.append([InlineKeyboardButton(f"— {tr(label)} —", callback_data=about)])
        rows.extend(choices)

    setting(
        "players",
        [
            opt(tr("{n} players").format(n=_num(tr, n)), "players", n, None if bidding else players)
            for n in (2, 3, 4)
        ],
        [opt(tr("2 players, bidding"), "kind", "bidding", s.get("kind"))],
    )
    setting(
        "target",
        [
            opt(_num(tr, t), "target", t, s.get("target", 7))
            for t in (BIDDING_TARGET_CHOICES if bidding else TARGET_CHOICES)
        ],
    )
    setting(
        "timer",
        [
            opt(
                tr("no timer") if t == 0 else tr("{seconds} s").format(seconds=_num(tr, t)),
                "timer",
                t,
                s.get("timer", 60),
            )
            for t in TIMER_CHOICES
        ],
    )
    setting(
        "level",
        [
            opt(tr(LEVEL_NAMES[lv]), "level", lv, s.get("level", "normal"))
            for lv in ("easy", "normal", "hard")
        ],
    )
    if players == 4:
        by_aces = int(bool(s.get("teams_by_aces")))
        setting(
            "teams_by_aces",
            [
                opt(tr("Fixed partners"), "teams_by_aces", 0, by_aces),
                opt(tr("Partners by aces"), "teams_by_aces", 1, by_aces),
            ],
        )
    if players in (2, 3) and not bidding:
        setting(
            "removed_two",
            [
                opt(ltr("2" + suit.symbol), "removed_two", suit.letter, s.get("removed_two", "C"))
                for suit in Suit
            ],
        )
    if players == 3:
        rule = s.get("hakem_rule", "next")
        setting(
            "hakem_rule",
            [
                opt(tr("Next seat becomes hakem"), "hakem_rule", "next", rule),
                opt(tr("Winner becomes hakem"), "hakem_rule", "winner", rule),
            ],
        )
        points = int(bool(s.get("card_points")))
        setting(
            "card_points",
            [
                opt(tr("Card points off"), "card_points", 0, points),
                opt(tr("Card points on"), "card_points", 1, points),
            ],
        )
    ping = s.get("ping", 15)
    setting(
        "ping",
        [
            opt(
                tr("off") if t == 0 else tr("{seconds} s").format(seconds=_num(tr, t)),
                "ping",
                t,
                ping,
            )
            for t in PING_CHOICES
        ],
    )
    if game.chat_id < 0 and ping:
        to = s.get("ping_to", "private")
        setting(
            "ping_to",
            [
                opt(tr("Private message"), "ping_to", "private", to),
                opt(tr("Mention in the group"), "ping_to", "group", to),
            ],
        )
    rows.append([InlineKeyboardButton(tr("« Back"), callback_data=cb.encode("o", g, None, "back"))])
    return InlineKeyboardMarkup(rows)


# ---------------------------------------------------------------------- table


def _trick_line(plays: Sequence[tuple[int, Card]], names: Sequence[str], tr: Translator) -> str:
    """«علی ⁦10♣⁩، سارا ⁦5♣⁩»: each player with their card, as on the draw line."""
    return list_sep(tr).join(f"{names[s]} {card_text(c)}" for s, c in plays)


def first_draw_text(view: SeatView, names: Sequence[str], tr: Translator) -> str:
    cards = list_sep(tr).join(f"{names[s]} {card_text(c)}" for s, c in view.first_draw)
    return tr("To choose the hakem, cards were dealt face up until the first ace: {cards}").format(
        cards=cards
    )


def table_text(game: Any, match: Match, tr: Translator) -> str:
    """The group's table message. Built from the spectator view only."""
    view = match.view(None)
    names = seat_names(game, match, tr)
    lines: list[str] = []
    lines.append(tr("<b>Hokm</b> · hand {n}").format(n=_num(tr, view.hand_no)))
    if view.hakem is not None:
        lines.append(tr("Hakem: {name}").format(name=names[view.hakem]))
    if view.trump is not None:
        lines.append(tr("Trump: {suit}").format(suit=suit_text(view.trump, tr)))
    if view.hand_no == 1 and view.first_draw and view.phase in (Phase.TRUMP, Phase.DISCARD):
        lines.append(first_draw_text(view, names, tr))
    lines.append("")
    lines += side_lines(view, names, tr)
    lines.append("")
    trick = trick_text(view, names, tr)
    if trick:
        lines.append(trick)
    turn = view.turn
    # Over: the result message posted below says who won (a line here stacked «the
    # match is over» right above it).
    if view.phase is not Phase.OVER and turn is not None:
        seat_info = game.seats[view.order[turn]]
        phase_text = {
            Phase.TRUMP: tr("The hakem is choosing trump…"),
            Phase.DISCARD: tr("{name} is putting two cards away…"),
            Phase.DRAW: tr("{name} is drawing from the stock…"),
            Phase.BLIND: tr("{name} may bid blind nil…"),
            Phase.EXCHANGE: tr("{name} is exchanging cards…"),
            Phase.BID: tr("{name} is bidding…"),
            Phase.PLAY: tr("Turn: {name}"),
        }[view.phase]
        line = phase_text.format(name=names[turn])
        if seat_info.get("away"):
            line += " · " + tr("away (the computer plays)")
        elif game.deadline is not None:  # a person's turn, on the clock
            seconds = int(game.settings.get("timer", 0))
            line += " · ⏱ " + tr("{seconds} s").format(seconds=_num(tr, seconds))
        lines.append(line)
    return "\n".join(lines)


def table_keyboard(game: Any, match: Match, tr: Translator) -> PlainKeyboard | None:
    if match.phase is Phase.OVER:
        return PlainKeyboard([[button(tr("🔁 Rematch"), cb.encode("m", game.id))]])
    if match.phase is not Phase.PLAY:
        return None
    here = {"text": tr("🃏 Play a card from here"), "switch_inline_query_current_chat": ""}
    return PlainKeyboard([[here]])


def hand_result_text(event: HandEnded, game: Any, match: Match, tr: Translator) -> str:
    v = match.variant
    names = seat_names(game, match, tr)
    tricks_by_side = [0] * v.sides
    for seat, t in enumerate(event.tricks):
        tricks_by_side[v.side_of(seat)] += t
    hand = _num(tr, event.hand_no)
    if v.kind is Kind.BIDDING:
        lines = [tr("Hand {n} is over.").format(n=hand)]
        for side in range(v.sides):
            points = event.points[side]
            lines.append(
                f"{names[side]}: "
                + tr.ngettext("{n} trick", "{n} tricks", event.tricks[side])
                + list_sep(tr)
                + tr.ngettext("{n} point", "{n} points", abs(points), n=signed(points, tr))
            )
    else:
        winner = event.winner
        assert winner is not None
        others = sorted((t for s, t in enumerate(tricks_by_side) if s != winner), reverse=True)
        score = tr(" to ").join(_num(tr, t) for t in [tricks_by_side[winner], *others])
        kot = kot_text(event, v, names, tr)
        if kot:
            # «کوت! تیم ۲ کوت شد؛ …» says the score (7 to 0) already.
            head = tr("Hand {n}").format(n=hand) + ": " + kot
        elif v.teams:
            head = tr("Hand {hand}: Team {n} won, {score}").format(
                hand=hand, n=_num(tr, winner + 1), score=score
            )
        else:
            head = tr("Hand {hand}: {name} won, {score}").format(
                hand=hand, name=names[winner], score=score
            )
        lines = [head]
        if others and tricks_by_side[winner] < others[0]:
            # Three players, all tricks played, two tied for most: the third one wins.
            lines.append(
                tr("A tie at {n}–{n}: the third player wins").format(n=_num(tr, others[0]))
            )
    scores = " · ".join(
        f"{side_name(v, s, names, tr)}: {_num(tr, p)}" for s, p in enumerate(event.scores)
    )
    lines.append(tr("Score: {scores}").format(scores=scores))
    view = match.view(None)
    if not match.is_over and view.hand_no > event.hand_no and view.hakem is not None:
        lines.append(tr("Next hakem: {name}").format(name=names[view.hakem]))
    return "\n".join(lines)


def kot_text(event: HandEnded, v: Variant, names: Sequence[str], tr: Translator) -> str | None:
    """Kot and hakem-kot, naming the side that took no trick and the side that scores."""
    if event.kind is HandKind.NORMAL or event.winner is None:
        return None
    winner = side_name(v, event.winner, names, tr)
    losers = [s for s in range(v.sides) if s != event.winner]
    if event.kind is HandKind.KOT:
        if len(losers) == 1:
            return tr("Kot! {loser} took no trick: 2 points to {winner}").format(
                loser=side_name(v, losers[0], names, tr), winner=winner
            )
        return tr("Kot! {loser} and {other} took no trick: 2 points to {winner}").format(
            loser=names[losers[0]], other=names[losers[1]], winner=winner
        )
    hakem_side = v.side_of(event.hakem) if event.hakem is not None else losers[0]
    hakem_name = side_name(v, hakem_side, names, tr)
    if v.teams:
        return tr(
            "Hakem-kot! The hakem's team, {loser}, took no trick: 3 points to {winner}"
        ).format(loser=hakem_name, winner=winner)
    if len(losers) == 1:
        return tr("Hakem-kot! The hakem, {loser}, took no trick: 3 points to {winner}").format(
            loser=hakem_name, winner=winner
        )
    other = next(s for s in losers if s != hakem_side)
    return tr(
        "Hakem-kot! The hakem, {loser}, and {other} took no trick: 3 points to {winner}"
    ).format(loser=hakem_name, other=names[other], winner=winner)


def match_result_text(game: Any, match: Match, tr: Translator) -> str:
    v = match.variant
    names = seat_names(game, match, tr)
    w = match.winner
    assert w is not None
    others = sorted((p for s, p in enumerate(match.scores) if s != w), reverse=True)
    score = tr(" to ").join(_num(tr, p) for p in [match.scores[w], *others])
    if v.teams:
        members = and_join([names[s] for s in side_members(v, w)], tr)
        return (
            tr("Match over: Team {n} wins {score}").format(n=_num(tr, w + 1), score=score)
            + f"\n🏆 {members}"
        )
    return tr("Match over: {name} wins {score}").format(name=names[w], score=score)


# -------------------------------------------------------------------- private


def _suit_order(trump: Suit | None) -> list[Suit]:
    suits = list(Suit)
    if trump is not None:
        suits.remove(trump)
        suits.insert(0, trump)
    return suits


def private_text(game: Any, match: Match, seat: int, tr: Translator) -> str:
    """A player's own hand message: the hand, the partner, the score, the trick and
    whose turn it is. Only the seat's own view and public facts reach it."""
    view = match.view(seat)
    names = seat_names(game, match, tr)
    lines: list[str] = []
    if view.phase is Phase.OVER:
        return match_result_text(game, match, tr)
    head = "<b>" + tr("Hand {n}").format(n=_num(tr, view.hand_no)) + "</b>"
    if view.hakem is not None:
        head += " · " + (
            tr("you are the hakem")
            if view.hakem == seat
            else tr("Hakem: {name}").format(name=names[view.hakem])
        )
    lines.append(head)
    if view.trump is not None:
        lines.append(tr("Trump: {suit}").format(suit=suit_text(view.trump, tr)))
    # The partner is named on the team's line: «تیم ۱ (شما و مریم)».
    lines += side_lines(view, names, tr, me=seat)
    mine = view.turn == seat
    waiting = (
        tr("Waiting for {name}…").format(name=names[view.turn]) if view.turn is not None else ""
    )
    if game.seats[view.order[seat]].get("away"):
        lines.append(tr("You are away: the computer plays for you."))
    lines.append("")
    if view.phase is Phase.TRUMP:
        if mine:
            lines.append(
                tr("Your first five cards: {cards}").format(
                    cards=" ".join(card_text(c) for c in view.hand)
                )
            )
            lines.append(tr("Choose the trump suit"))
        else:
            lines.append(tr("The hakem is choosing trump…"))
    elif view.phase in OWN_TURN_PROMPTS:
        lines.append(tr(OWN_TURN_PROMPTS[view.phase]) if mine else waiting)
    elif view.phase is Phase.DRAW:
        if mine and view.top_card is not None:
            lines.append(tr("Top card of the stock: {card}").format(card=card_text(view.top_card)))
            lines.append(
                tr("Keep it (the next card is discarded), or discard it and take the next one?")
            )
        else:
            lines.append(waiting)
        lines.append(
            tr("Cards in hand: {n} · stock: {m}").format(
                n=_num(tr, len(view.hand)), m=_num(tr, view.stock_size)
            )
        )
    elif view.phase is Phase.PLAY:
        trick = trick_text(view, names, tr)
        if trick:
            lines.append(trick)
        if mine:
            lines.append("<b>" + tr("Your turn") + "</b>")
        elif view.turn is not None:
            lines.append(tr("Not your turn: it is {name}'s turn").format(name=names[view.turn]))
    return "\n".join(lines)


#: The table setting (chat and game settings), True when hints are on (see
#: :mod:`telegram_bot.service.hints`).
HINTS_SETTING = "hints"


def hint_offered(game: Any, match: Match, seat: int) -> bool:
    """Whether ``seat``'s hand shows the hint button now: hints are on, a single
    person plays (no one gets help against another person), it is their turn in
    trick play, and they are not away."""
    return (
        bool((game.settings or {}).get(HINTS_SETTING))
        and len(game.user_ids()) == 1
        and match.phase is Phase.PLAY
        and match.turn == seat
        and not game.seats[match.order[seat]].get("away")
    )


def private_keyboard(
    game: Any, match: Match, seat: int, tr: Translator, selected: Sequence[Card] = ()
) -> PlainKeyboard | None:
    view = match.view(seat)
    g, move = game.id, game.move
    away = bool(game.seats[view.order[seat]].get("away"))
    rows: list[list[Button]] = []
    mine = view.turn == seat
    if view.phase is Phase.OVER:
        return None
    if view.phase is Phase.TRUMP:
        if not mine:
            return _away_rows(rows, g, move, tr, away)
        rows.append(
            [
                button(
                    f"{s.symbol} {tr(SUIT_NAMES[s])}",
                    cb.encode("t", g, move, s.letter),
                )
                for a in view.legal
                if isinstance(a, ChooseTrump)
                for s in [Suit(a.suit)]
            ]
        )
        return _away_rows(rows, g, move, tr, away)
    if view.phase is Phase.DRAW:
        if mine:
            rows.append(
                [
                    button(tr("Keep it"), cb.encode("k", g, move, "1")),
                    button(tr("Take the next"), cb.encode("k", g, move, "0")),
                ]
            )
        rows += _card_rows(view, g, move, "p", lambda c: c.ascii)
        return _away_rows(rows, g, move, tr, away)
    if view.phase is Phase.BLIND:
        if mine:
            rows.append(
                [
                    button(tr("Blind nil"), cb.encode("n", g, move, "1")),
                    button(tr("Look at my cards"), cb.encode("n", g, move, "0")),
                ]
            )
        return _away_rows(rows, g, move, tr, away)
    if view.phase is Phase.BID:
        if mine:
            bids = [a.tricks for a in view.legal if isinstance(a, Bid)]
            for i in range(0, len(bids), 7):
                rows.append(
                    [
                        button(
                            tr("nil") if b == 0 else _num(tr, b),
                            cb.encode("v", g, move, str(b)),
                        )
                        for b in bids[i : i + 7]
                    ]
                )
        rows += _card_rows(view, g, move, "p", lambda c: c.ascii)
        return _away_rows(rows, g, move, tr, away)
    if view.phase in (Phase.DISCARD, Phase.EXCHANGE):
        action = "d" if view.phase is Phase.DISCARD else "x"
        sel = ".".join(c.ascii for c in selected)
        rows += _card_rows(
            view,
            g,
            move,
            action,
            lambda c: f"{sel}.{c.ascii}" if sel else f".{c.ascii}",
            marked=set(selected),
        )
        if action == "x" and mine:
            rows.append(
                [
                    button(
                        tr("Confirm the exchange ({n})").format(n=_num(tr, len(selected))),
                        cb.encode("x", g, move, f"{sel}!" if sel else "!"),
                    )
                ]
            )
        return _away_rows(rows, g, move, tr, away)
    rows += _card_rows(view, g, move, "p", lambda c: c.ascii)
    if hint_offered(game, match, seat):
        rows.append([button(tr("💡 Hint"), cb.encode("h", g, move))])
    return _away_rows(rows, g, move, tr, away)


def _card_rows(
    view: SeatView, g: str, move: int, action: str, arg, marked: set[Card] = frozenset()
) -> list[list[Button]]:
    rows = []
    for suit in _suit_order(view.trump):
        cards = sorted((c for c in view.hand if c.suit == suit), reverse=True)
        if not cards:
            continue
        for i in range(0, len(cards), 7):
            rows.append(
                [
                    button(
                        ("✅" if c in marked else "") + card_label(c),
                        cb.encode(action, g, move, arg(c))
                        if action != "p"
                        else cb.encode("p", g, view.hand_no, c.ascii),
                    )
                    for c in cards[i : i + 7]
                ]
            )
    return rows


def _away_rows(rows, g: str, move: int, tr: Translator, away: bool) -> PlainKeyboard | None:
    if away:
        rows.append([button(tr("I'm back"), cb.encode("r", g))])
    return PlainKeyboard(rows) if rows else None


def parse_selection(arg: str) -> tuple[list[Card], str]:
    """``"AS.KH.QD"`` → the selected cards before the last, and the last part."""
    *sel, last = arg.split(".")
    return [parse_card(p) for p in sel if p], last
