"""Forged and broken input: every press gets a reason in the person's language, and
Telegram's expected refusals are logged as one line, never as a traceback."""

from __future__ import annotations

import logging

import pytest

from telegram_bot.chat import callbacks as cb

from .test_game_flow import _data, _open, _people


def test_callback_data_with_any_characters_is_malformed_not_an_error():
    for data in ("p:\ud800:1:AS", "\udcff", "j:abc\n", "p:abc:²:AS", "p:abc:1:A S", "x" * 65):
        with pytest.raises(cb.MalformedCallback):
            cb.decode(data)
    assert cb.decode("p:abc:3:AS") == cb.Callback("p", "abc", 3, "AS")


async def test_forged_presses_are_answered_with_a_translated_reason(emu, runner):
    fa, en = await _people(emu, ["Dara", "Eve"], lang="fa")
    menus = {}
    for user in (fa, en):
        await emu.send_message(user, user.private_chat_id, "/language")
        await runner.settle()
        menus[user.id] = emu.chat_log(user.private_chat_id)[-1]
    await emu.press(en, en.private_chat_id, menus[en.id].message_id, "g:::u=en")
    await runner.settle()
    group = emu.add_group("G", members=[fa, en], admins=[fa])
    game, lobby = await _open(emu, runner, group, fa)
    forged = [
        "p:\ud800:1:AS",  # a lone surrogate
        "\udcff" * 70,
        "g:::u=xx",  # a language that does not exist
        "o:" + game.id + "::players=9",
        "p:" + game.id + "::AS",  # a move button without its number
        "v:" + game.id + ":1:" + "9" * 40,
        "z" * 64,
    ]
    handles = []
    for data in forged:
        for user in (fa, en):
            handles.append((user, await emu.press(user, group.id, lobby.message_id, data)))
            menu = menus[user.id].message_id
            handles.append((user, await emu.press(user, user.private_chat_id, menu, data)))
    # The group's language, pressed by someone who is not an admin.
    handles.append((en, await emu.press(en, group.id, lobby.message_id, "g:::c=en")))
    await runner.settle()
    for user, h in handles:
        assert h.answer is not None and h.answer.text, (h.data, h.answer)
        assert h.answer.text != "?"
        persian = any("\u0600" <= ch <= "\u06ff" for ch in h.answer.text)
        assert persian == (user is fa), (user.first_name, h.data, h.answer.text)
    fresh = await _game(runner, game.id)
    assert (fresh.move, fresh.settings, fresh.seats) == (game.move, game.settings, game.seats)


async def test_expected_telegram_refusals_are_one_log_line(emu, runner, caplog):
    caplog.set_level(logging.INFO)
    user = (await _people(emu, ["Fay"], lang="en"))[0]
    group = emu.add_group("H", members=[user], admins=[user])
    game, lobby = await _open(emu, runner, group, user)
    emu.inject_error(
        "answerCallbackQuery",
        code=400,
        description="Bad Request: query is too old and response timeout expired or query ID "
        "is invalid",
    )
    press = await emu.press(user, group.id, lobby.message_id, _data(game.id, "l"))
    emu.inject_error("sendMessage", chat_id=group.id, code=403)
    await emu.send_message(user, group.id, "/help")
    emu.inject_error("sendMessage", chat_id=group.id, code=429, retry_after=3)
    await emu.send_message(user, group.id, "/score")
    await runner.settle()
    assert press.answer is None  # Telegram refused the answer
    records = [r for r in caplog.records if r.name.startswith("telegram_bot")]
    assert not [r for r in records if r.levelno >= logging.ERROR], [r.getMessage() for r in records]
    assert not [r for r in records if r.exc_info], [r.getMessage() for r in records]
    said = "\n".join(r.getMessage() for r in records)
    assert "query is too old" in said.lower()
    assert "Forbidden" in said and "RetryAfter" in said
    assert all("\n" not in r.getMessage() for r in records)


async def _game(runner, game_id):
    from telegram_bot.platform.storage import repo

    async with runner.service.sessions() as s:
        return await repo.get_game(s, game_id)
