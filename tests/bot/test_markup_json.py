"""The outbox writes plain keyboards' JSON itself: the same JSON as to_dict() gives."""

from __future__ import annotations

import json

from telegram import (
    CopyTextButton,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LoginUrl,
    WebAppInfo,
)

from telegram_bot.platform.outbox.markup import _markup_json, _plain_button


def _slow(markup: InlineKeyboardMarkup) -> str:
    return json.dumps(markup.to_dict(), ensure_ascii=False, sort_keys=True)


def test_plain_and_other_keyboards_give_to_dicts_json() -> None:
    plain = InlineKeyboardMarkup(
        [
            [InlineKeyboardButton("♠ پیک", callback_data="p:abc:3:S"), InlineKeyboardButton("x")],
            [InlineKeyboardButton("rules", url="https://t.me/x?start=rules")],
            [
                InlineKeyboardButton("share", switch_inline_query="hokm"),
                InlineKeyboardButton("here", switch_inline_query_current_chat=""),
            ],
        ]
    )
    others = [
        InlineKeyboardButton("login", login_url=LoginUrl("https://example.org")),
        InlineKeyboardButton("app", web_app=WebAppInfo("https://example.org")),
        InlineKeyboardButton("copy", copy_text=CopyTextButton("abc")),
        InlineKeyboardButton("pay", pay=True),
        InlineKeyboardButton("odd", callback_data=("not", "a", "string")),  # type: ignore[arg-type]
        InlineKeyboardButton("extra", callback_data="a", api_kwargs={"style": "x"}),
    ]
    assert all(_plain_button(b) is not None for row in plain.inline_keyboard for b in row)
    assert _markup_json(plain) == _slow(plain)
    for other in others:
        assert _plain_button(other) is None
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("a", callback_data="b")], [other]])
        if not isinstance(other.callback_data, tuple):
            assert _markup_json(markup) == _slow(markup)
    assert _markup_json(None) is None


def test_plain_keyboards_give_the_same_json_as_their_markup() -> None:
    from core import Match, Variant
    from telegram_bot.chat import render
    from telegram_bot.chat.i18n import get_translator
    from telegram_bot.platform.keyboards import PlainKeyboard, button

    table = PlainKeyboard(
        [[button("♠ پیک", "p:abc:3:S"), {"text": "here", "switch_inline_query_current_chat": ""}]]
    )
    assert table.to_json() == _slow(table.to_markup())
    assert _markup_json(table) == table.to_json()
    assert table == table.to_markup()
    # The Mini App's button on a hand message (HOKM_WEBAPP_URL).
    from telegram_bot.platform.keyboards import web_app_button

    hand = PlainKeyboard(
        [[button("A♠", "p:abc:3:AS")], [web_app_button("🃏", "https://h.example/?game=abc")]]
    )
    assert hand.to_json() == _slow(hand.to_markup())
    assert _markup_json(hand) == hand.to_json()
    assert hand.to_markup().inline_keyboard[1][0].web_app == WebAppInfo(
        "https://h.example/?game=abc"
    )

    from types import SimpleNamespace

    game = SimpleNamespace(
        id="abc123",
        move=7,
        settings={},
        seats=[{"user_id": i, "name": f"P{i}"} for i in range(1, 5)],
    )

    match, _events = Match.new(Variant(), seed=3)
    drawn = 0
    for _ in range(6):  # the trump call, then cards
        for language in ("en", "fa"):
            tr = get_translator(language)
            for seat in range(4):
                keyboard = render.private_keyboard(game, match, seat, tr)
                if keyboard is not None:
                    drawn += 1
                    assert keyboard.to_json() == _slow(keyboard.to_markup())
        match.apply(match.turn, match.view(match.turn).legal[0])
    assert drawn > 8
