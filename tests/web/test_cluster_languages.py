"""The cluster's ingress remembers each person's language and hears of its changes
(:func:`telegram_bot.service.languages.listen`), as a worker does. The ingress plays
the pages' moves, so it writes the hand messages that follow them. PostgreSQL only.

- A person changes language through a worker (``/language``): the next hand message
  the ingress writes for them is in the new language. An ingress that remembered
  without listening would still write the old one.
- Their row is then changed behind the bot's back (the NOTIFY trigger disabled, so no
  process hears of it): the ingress goes on writing the language it remembers. An
  ingress that read the row at every lookup would write the row's language.
"""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy import text

from core import Match, PlayCard
from telegram_bot.runtime.cluster import free_port
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, buttons
from tests.clusterutil import delivered, group_match, running_cluster, stored, until
from tests.dbutil import fresh_database_url
from tests.web.pages import CHAT_METHODS, post_move, seat_users, webapp_env

#: A letter of the Persian alphabet: the hand messages' Persian words have them, the
#: English ones none (the players' names are Latin, the cards are symbols).
PERSIAN = re.compile("[\u0600-\u06ff]")


@pytest.mark.slow
async def test_the_ingress_writes_the_language_it_heard_of(tmp_path: Path) -> None:
    async with fresh_database_url("postgresql", tmp_path) as db_url:  # skips without PG
        async with BotApiEmulator(token=TOKEN, bot_username="HokmLangBot", bot_name="H") as emu:
            web_port = free_port()
            async with running_cluster(emu, db_url, tmp_path, 1, webapp_env(web_port)) as sessions:
                await _run(emu, sessions, f"http://127.0.0.1:{web_port}")


async def _run(emu: BotApiEmulator, sessions, base: str) -> None:
    people = [emu.add_user(f"P{i}", language_code="en") for i in range(4)]
    by_id = {p.id: p for p in people}
    _, game_id = await group_match(emu, sessions, people)
    game = await stored(sessions, game_id)
    users = seat_users(game, Match.from_json(game.state))

    async def hand_text(uid: int) -> str:
        game = await stored(sessions, game_id)
        mid = game.private_messages[str(uid)]
        return next(m for m in emu.chat_log(uid) if m.message_id == mid).text or ""

    async def page_move() -> tuple[int, object]:
        """The seat on turn moves on its page (the ingress plays it); returns who."""
        game = await stored(sessions, game_id)
        match, action = await post_move(http, base, game, users)

        async def moved() -> bool:
            return (await stored(sessions, game_id)).move == game.move + 1

        await until(moved, "the page's move stored")
        await until(lambda: delivered(sessions), "the move's messages sent")
        return users[match.turn], action

    async with aiohttp.ClientSession() as http:
        # The trump call, played by the ingress, writes every hand (it looks up, and
        # remembers, each person's language): all in English.
        await page_move()
        for uid in users:
            assert not PERSIAN.search(await hand_text(uid)), await hand_text(uid)
        game = await stored(sessions, game_id)
        person = users[Match.from_json(game.state).turn]  # the hakem, who leads

        # 1. They choose Persian in their chat: a worker writes their row, whose
        # trigger NOTIFYs on commit, before the press is answered (the ingress's
        # listening connection has heard it long before the page's move below).
        user = by_id[person]
        await emu.send_message(user, user.private_chat_id, "/language")

        def picker():
            return next(
                (m for m in reversed(emu.chat_log(person)) if m.from_bot and _fa_button(m)),
                None,
            )

        await emu.wait_until(lambda: picker() is not None, timeout=60)
        press = await emu.press(user, person, picker().message_id, _fa_button(picker()))
        await press.wait_answer(timeout=60)
        mark = emu.mark()
        who, action = await page_move()  # their card, played by the ingress
        assert who == person and isinstance(action, PlayCard)
        assert emu.count_calls(CHAT_METHODS, chat_id=person, since=mark) >= 1
        assert PERSIAN.search(await hand_text(person)), await hand_text(person)

        # 2. Their row says English again, unheard of: the ingress writes the Persian
        # it remembers at their next card.
        async with sessions.begin() as s:
            await s.execute(text("ALTER TABLE users DISABLE TRIGGER users_language_changed"))
            await s.execute(text("UPDATE users SET language = 'en' WHERE id = :id"), {"id": person})
            await s.execute(text("ALTER TABLE users ENABLE TRIGGER users_language_changed"))
        for _ in range(7):  # the others' cards, then theirs
            mark = emu.mark()
            who, _ = await page_move()
            if who == person:
                break
        assert who == person
        assert emu.count_calls(CHAT_METHODS, chat_id=person, since=mark) >= 1
        assert PERSIAN.search(await hand_text(person)), await hand_text(person)


def _fa_button(message) -> str | None:
    """The callback data of the language picker's Persian button for the person."""
    return next(
        (
            b["callback_data"]
            for b in buttons(message)
            if (b.get("callback_data") or "").endswith("u=fa")
        ),
        None,
    )
