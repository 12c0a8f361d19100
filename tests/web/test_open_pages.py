"""Who has a game's page open, kept in the database (``open_pages``), and what the chat
sends each person because of it, on SQLite and PostgreSQL:

- the rows: a user's streams counted (tabs), a lease pushed forward, a dead process's
  rows gone once their lease has run out, one query per transaction;
- a group table where two of four people have the page open: those two get no hand
  edit while cards are played, the two others every edit they got before; a page
  that closes brings its person's hand message up to date at once, and a page whose
  lease runs out (its process killed) at the next move;
- an online table where three of four people have the page open: their copies of the
  table and their hands are left alone while cards are played, the fourth gets
  everything.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from types import SimpleNamespace

import aiohttp
import pytest
from sqlalchemy import func, select, update

from core import Match, PlayCard
from telegram_bot.platform.live import OpenPages, open_pages
from telegram_bot.platform.storage import migrate, repo
from telegram_bot.platform.storage.db import create_engine, session_factory
from telegram_bot.platform.storage.models import OpenPage, utcnow
from telegram_bot.runtime.cluster import free_port
from testkit.simulation import BotRunner, Table, buttons
from tests.dbutil import BACKENDS, fresh_database_url
from tests.web.pages import (
    CHAT_METHODS,
    WEBAPP_URL,
    Stream,
    play,
    seat_users,
    started_table,
)


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[str]:
    async with fresh_database_url(request.param, tmp_path) as url:  # skips without PG
        yield url


# ------------------------------------------------------------------------ the rows


async def test_open_pages_are_rows_with_a_lease(db_url) -> None:
    await migrate(db_url)
    engine = create_engine(db_url)
    sessions = session_factory(engine)
    ingress = OpenPages(sessions, lease=60, holder="ingress")
    dead = OpenPages(sessions, lease=60, holder="dead")
    try:
        await ingress.opened("g1", 1)
        await ingress.opened("g1", 1)  # a second tab
        await ingress.opened("g1", 2)
        await ingress.opened("g2", 3)
        await dead.opened("g1", 4)
        async with sessions() as s, s.begin():
            assert await open_pages(s, "g1") == {1, 2, 4}
            assert await open_pages(s, "g2") == {3}
            assert await open_pages(s, "nosuch") == frozenset()
        await ingress.closed("g1", 1)  # one tab of two: still open
        async with sessions() as s, s.begin():
            assert 1 in await open_pages(s, "g1")
        await ingress.closed("g1", 1)
        await ingress.closed("g1", 1)  # once too many: nothing
        async with sessions() as s, s.begin():
            assert await open_pages(s, "g1") == {2, 4}
            # One query a transaction: a row written meanwhile is seen by the next one.
            await dead.opened("g1", 5)
            assert 5 not in await open_pages(s, "g1")
        async with sessions() as s, s.begin():
            assert 5 in await open_pages(s, "g1")
            # A lease not renewed runs out: 61 s on, none is open.
            assert await open_pages(s, "g1", now=utcnow() + timedelta(seconds=59)) == {2, 4, 5}
            assert await open_pages(s, "g1", now=utcnow() + timedelta(seconds=61)) == set()
        async with sessions() as s, s.begin():  # the dead process's rows: long expired
            await s.execute(
                update(OpenPage)
                .where(OpenPage.holder == "dead")
                .values(expires_at=utcnow() - timedelta(seconds=120))
            )
        async with sessions() as s, s.begin():
            assert await open_pages(s, "g1") == {2}
        before = utcnow()
        await ingress.renew()  # pushes its own leases forward, drops the dead rows
        async with sessions() as s:
            holders = set(await s.scalars(select(OpenPage.holder)))
            expires = min(await s.scalars(select(OpenPage.expires_at)))
        assert holders == {"ingress"}
        assert expires >= before + timedelta(seconds=59)
        await ingress.close()  # its streams are gone: its rows too
        async with sessions() as s:
            assert await s.scalar(select(func.count()).select_from(OpenPage)) == 0
    finally:
        await engine.dispose()


# ------------------------------------------------------------- a group's table


@pytest.fixture
async def served(emu, db_url) -> AsyncIterator[tuple[BotRunner, str]]:
    port = free_port()
    runner = BotRunner(
        emu, db_url, webapp_url=WEBAPP_URL, webapp_listen="127.0.0.1", webapp_port=port
    )
    await runner.start()
    try:
        yield runner, f"http://127.0.0.1:{port}"
    finally:
        await runner.stop()


async def _hand_is_current(runner, table, user) -> bool:
    """The user's hand message shows what the bot renders for their seat now."""
    game = await table.game()
    match = Match.from_json(game.state)
    seat = next(s for s in range(match.n) if game.seats[match.order[s]].get("user_id") == user.id)
    tr = await runner.service.user_tr(user.id)
    wanted = runner.service.views.private_text(game, match, seat, tr)
    # As Telegram shows HTML: without its tags.
    return table.hand_message(game, user).text == html.unescape(re.sub(r"<[^>]+>", "", wanted))


async def _hand_is_right(runner, table, user) -> bool:
    """The user's hand message shows their cards as they are now, and whether it is
    their turn (what a hand message must never show wrong; its other lines, such as
    the trick, are edited only on their turn and for their own move)."""
    game = await table.game()
    match = Match.from_json(game.state)
    seat = next(s for s in range(match.n) if game.seats[match.order[s]].get("user_id") == user.id)
    message = table.hand_message(game, user)
    shown = {b["callback_data"] for b in buttons(message) if b.get("callback_data")}
    tr = await runner.service.user_tr(user.id)
    keyboard = runner.service.views.hand_keyboard(game, match, seat, tr)
    wanted = {b["callback_data"] for row in keyboard.rows for b in row if b.get("callback_data")}
    return shown == wanted


async def _until(runner, check) -> None:
    """Until ``await check()`` holds: the server sees a closed stream within a second
    (its look at idle connections), then commits the edit and the outbox sends it.
    The cap fails a bot that never does it; it is not a deadline."""
    for _ in range(1200):
        await runner.settle()
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("never happened")


async def _open_rows(runner, game_id: str) -> set[int]:
    async with runner.service.sessions() as s, s.begin():
        return set(await open_pages(s, game_id))


@pytest.mark.slow
async def test_each_person_with_the_page_open_gets_no_hand_edit_a_card(emu, served) -> None:
    runner, base = served
    table, game = await started_table(emu, runner)
    match = Match.from_json(game.state)
    users = seat_users(game, match)
    people = table.users
    async with aiohttp.ClientSession() as http:
        await play(http, base, runner, table, users)  # the trump call, pages closed
        watchers, others = users[:2], users[2:]
        streams = [Stream(http, base, game.id, uid) for uid in watchers]
        for stream in streams:
            await stream.open()
        assert await _open_rows(runner, game.id) == set(watchers)
        private = {uid: 0 for uid in users}
        group = cards = 0
        for _ in range(8):
            mark = emu.mark()
            _, action = await play(http, base, runner, table, users)
            assert isinstance(action, PlayCard)
            cards += 1
            for uid in users:
                private[uid] += emu.count_calls(CHAT_METHODS, chat_id=uid, since=mark)
            group += emu.count_calls(CHAT_METHODS, chat_id=table.chat.id, since=mark)
        # The watchers' hands are left alone; the others' are edited as before (their
        # turn and their own card: two of every four cards); the group's table, which
        # not everyone follows on the page, every card.
        assert [private[uid] for uid in watchers] == [0, 0], private
        assert all(private[uid] >= 3 for uid in others), private
        assert group == cards
        assert not await _hand_is_current(runner, table, people[watchers[0]])
        # A page closes: that hand message is brought up to date at once.
        await streams[0].close()
        await _until(runner, lambda: _hand_is_current(runner, table, people[watchers[0]]))
        assert watchers[0] not in await _open_rows(runner, game.id)
        # The other page's process is killed: its lease runs out (made to, here), and
        # the next move brings that hand up to date.
        assert not await _hand_is_right(runner, table, people[watchers[1]])
        async with runner.service.sessions() as s, s.begin():
            await s.execute(
                update(OpenPage)
                .where(OpenPage.user_id == watchers[1])
                .values(expires_at=utcnow() - timedelta(seconds=1))
            )
        await play(http, base, runner, table, users)
        assert await _hand_is_right(runner, table, people[watchers[1]])
        await streams[1].close()


# ------------------------------------------------------------- an online table


@pytest.mark.slow
async def test_an_online_table_with_three_pages_open_of_four(emu, db_url) -> None:
    port = free_port()
    runner = BotRunner(
        emu,
        db_url,
        webapp_url=WEBAPP_URL,
        webapp_listen="127.0.0.1",
        webapp_port=port,
        online_interval=0.0,
        online_wait=600.0,
    )
    await runner.start()
    base = f"http://127.0.0.1:{port}"
    try:
        people = [emu.add_user(f"P{i}", language_code="en", started=True) for i in range(4)]
        for p in people:
            await emu.send_message(p, p.private_chat_id, "/online")
            await runner.settle()
            ask = emu.chat_log(p.private_chat_id)[-1]
            await emu.press(p, p.private_chat_id, ask.message_id, "q:::4")
            await runner.settle()
        await runner.service.online.round()
        await runner.settle()
        async with runner.service.sessions() as s:
            game = await repo.find_active_game_for_user(s, people[0].id)
        assert game is not None and game.status == "playing"
        table = Table(emu, runner, SimpleNamespace(id=game.chat_id), people)
        table.check_hidden = False
        match = Match.from_json(game.state)
        users = seat_users(game, match)
        async with aiohttp.ClientSession() as http:
            await play(http, base, runner, table, users)  # the trump call
            watchers, alone = users[:3], users[3]
            streams = [Stream(http, base, game.id, uid) for uid in watchers]
            for stream in streams:
                await stream.open()
            calls = cards = 0
            private = {uid: 0 for uid in users}
            for _ in range(12):
                mark = emu.mark()
                _, action = await play(http, base, runner, table, users)
                assert isinstance(action, PlayCard)
                cards += 1
                calls += emu.count_calls(CHAT_METHODS, since=mark)
                for uid in users:
                    private[uid] += emu.count_calls(CHAT_METHODS, chat_id=uid, since=mark)
            # The three watchers: nothing while cards are played (the trick's end
            # included). The fourth: its copy of the table once a trick, and its hand
            # (which shows the trick) on its turn and after its card: at most a call
            # a card for the table.
            assert [private[uid] for uid in watchers] == [0, 0, 0], private
            assert private[alone] == calls
            assert private[alone] >= 3 * (cards // 4)
            assert calls <= cards, (calls, cards)
            print("online table, 3 of 4 pages open: calls per card", calls, cards)
            # A watcher closes the page: their copy of the table and their hand are
            # brought up to date.
            await streams[0].close()
            person = next(p for p in people if p.id == watchers[0])
            # (Both are waited for: the two edits are sent one after the other, and
            # the hand's may be seen before the table's is sent.)

            async def up_to_date() -> bool:
                return await _hand_is_current(runner, table, person) and (
                    _table_copy(emu, watchers[0]).text == _table_copy(emu, alone).text
                )

            await _until(runner, up_to_date)
            for stream in streams[1:]:
                await stream.close()
    finally:
        await runner.stop()


def _table_copy(emu, user_id: int):
    """A person's copy of an online table: their message with the reactions."""
    return next(
        m
        for m in reversed(emu.chat_log(user_id))
        if m.from_bot and any((b.get("callback_data") or "").startswith("z:") for b in buttons(m))
    )


# ------------------------------------------------------------- away and back


async def test_a_player_back_from_away_reaches_the_open_pages(emu, served) -> None:
    """ "I'm back" (``set_away``) is a move of its own: announced like any move, so an
    open page shows the seat as played by its person again, without reloading."""
    runner, base = served
    table, game = await started_table(emu, runner)
    match = Match.from_json(game.state)
    users = seat_users(game, match)
    away = table.users[users[1]]
    async with runner.service.sessions() as s, s.begin():  # away (two turns timed out)
        stored = await repo.get_game(s, game.id)
        seats = [dict(x) for x in stored.seats]
        seats[match.order[1]]["away"] = True
        stored.seats = seats
        await repo.save_game(s, stored, stored.move)
    async with aiohttp.ClientSession() as http:
        page = Stream(http, base, game.id, users[0])
        await page.open()
        first = page.views[-1]
        assert first["seats"][1]["away"] is True
        await emu.send_message(away, away.private_chat_id, "/back")
        view = await page.at(first["move"] + 1)
        assert view["seats"][1]["away"] is False
        await page.close()
    stored = await table.game()
    assert stored.move == first["move"] + 1
    assert not stored.seats[match.order[1]].get("away")
