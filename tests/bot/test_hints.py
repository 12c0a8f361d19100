"""End to end, in Persian and English: the «💡 Hint» button, off by default, offered
only while one person plays alone against the computers."""

from __future__ import annotations

import re

import pytest

from core import Match, Phase
from telegram_bot.chat.i18n import LRI, PDI

from .driver import Table, buttons, lowest_card
from .test_game_flow import _data, _open, _people

NAMES = {"fa": ["سارا", "علی", "مریم"], "en": ["Sara", "Ali", "Maryam"]}
TEXT = {
    "fa": {
        "on": "💡 راهنمایی روشن شد: وقتی یک نفر تنها در برابر کامپیوترها بازی می‌کند، در نوبتش "
        "دکمهٔ «💡 راهنمایی» زیر ورق‌هایش می‌آید. برای خاموش کردن، دوباره \u200e/hints\u200e را بفرستید.",
        "off": "راهنمایی خاموش شد.",
        "button": "💡 راهنمایی",
        "hint": re.compile(f"^💡 راهنمایی: {LRI}(.+){PDI} را بازی کنید$"),
        "old": "این دکمه مربوط به دور قبل است",
        "admin": "فقط مدیر گروه می‌تواند راهنمایی را روشن یا خاموش کند.",
    },
    "en": {
        "on": "💡 Hints are on: when one person plays alone against the computers, their hand "
        "shows a «💡 Hint» button on their turn. Send /hints again to turn them off.",
        "off": "Hints are off.",
        "button": "💡 Hint",
        "hint": re.compile(f"^💡 Hint: play {LRI}(.+){PDI}$"),
        "old": "This button belongs to an earlier hand",
        "admin": "Only a group admin can turn hints on or off.",
    },
}


async def _say(emu, runner, user, chat_id, text):
    await emu.send_message(user, chat_id, text)
    await runner.settle()
    return emu.chat_log(chat_id)[-1].text


def _hint_buttons(message) -> list[dict]:
    return [
        b
        for version in message.edit_history
        for row in (version.reply_markup or {}).get("inline_keyboard", [])
        for b in row
        if (b.get("callback_data") or "").startswith("h:")
    ]


async def _solo(emu, runner, user) -> Table:
    await emu.send_message(user, user.private_chat_id, "/play")
    await runner.settle()
    table = Table(emu, runner, user.private_chat, [user])
    table.check_hidden = False  # the private chat is the table: it shows the hand
    return table


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_a_solo_player_asks_for_hints(emu, runner, lang):
    user = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    await runner.settle()
    assert await _say(emu, runner, user, user.private_chat_id, "/hints") == TEXT[lang]["on"]
    table = await _solo(emu, runner, user)
    hinted = 0
    for _ in range(40):
        game = await table.game()
        match = Match.from_json(game.state)
        seat = next(s for s in range(4) if game.seats[match.order[s]].get("user_id") == user.id)
        message = table.hand_message(game, user)
        offered = [b for b in buttons(message) if b["callback_data"].startswith("h:")]
        if match.phase is not Phase.PLAY or match.turn != seat:
            assert not offered, (match.phase, offered)
        else:
            assert [(b["text"], b["callback_data"]) for b in offered] == [
                (TEXT[lang]["button"], f"h:{game.id}:{game.move}")
            ]
            h = await table.press(user, message, f"h:{game.id}:{game.move}")
            assert h.answer.show_alert, h.answer
            card = TEXT[lang]["hint"].match(h.answer.text)
            assert card, h.answer.text
            assert card.group(1) in {str(c) for c in match.legal_cards(seat)}
            old = f"h:{game.id}:{game.move}"
            hinted += 1
            if hinted == 3:
                break
        await table.step({user.id: lowest_card})
    assert hinted == 3
    await table.step({user.id: lowest_card})  # the hinted turn is played
    # A hint of an earlier turn is refused.
    h = await emu.press(user, user.private_chat_id, message.message_id, old)
    await runner.settle()
    assert h.answer.show_alert and h.answer.text == TEXT[lang]["old"]
    # Off again: no button from the next turn on.
    assert await _say(emu, runner, user, user.private_chat_id, "/hints") == TEXT[lang]["off"]
    for _ in range(8):
        await table.step({user.id: lowest_card})
    game = await table.game()
    assert not [
        b for b in buttons(table.hand_message(game, user)) if b["callback_data"].startswith("h:")
    ]


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_no_hints_by_default_nor_between_people(emu, runner, lang):
    # Off by default, even alone against the computers.
    user = (await _people(emu, NAMES[lang][:1], lang=lang))[0]
    await runner.settle()
    table = await _solo(emu, runner, user)
    for _ in range(12):
        await table.step({user.id: lowest_card})
    game = await table.game()
    assert not _hint_buttons(table.hand_message(game, user))

    # A group turns them on (its admin only): two people at the table get none.
    people = await _people(emu, NAMES[lang][1:], lang=lang)
    group = emu.add_group("Table", members=people, admins=[people[0]])
    if lang == "en":
        await emu.send_message(people[0], group.id, "/language")
        await runner.settle()
        await emu.press(people[0], group.id, emu.chat_log(group.id)[-1].message_id, "g:::c=en")
        await runner.settle()
    assert await _say(emu, runner, people[1], group.id, "/hints") == TEXT[lang]["admin"]
    assert await _say(emu, runner, people[0], group.id, "/hints") == TEXT[lang]["on"]
    game, lobby = await _open(emu, runner, group, people[0], timer=0)
    assert game.settings.get("hints") is True
    await emu.press(people[1], group.id, lobby.message_id, _data(game.id, "j"))
    await runner.settle()
    await emu.press(people[0], group.id, lobby.message_id, _data(game.id, "s"))
    await runner.settle()
    table = Table(emu, runner, group, people)
    for _ in range(16):
        await table.step({p.id: lowest_card for p in people})
    game = await table.game()
    for p in people:
        assert not _hint_buttons(table.hand_message(game, p))
