"""The Mini App across the processes of :mod:`telegram_bot.runtime.cluster`: the
webhook ingress serves the pages, two workers handle the chat's presses, all on one
PostgreSQL database (skipped without it, except in CI, where HOKM_TEST_PG=1 makes it
a failure).

- a move posted by a page to the ingress's web server is played (stored, and the
  group's table follows), and every page gets it;
- a card pressed in the chat, handled by a worker, reaches every page on the ingress
  (LISTEN/NOTIFY);
- with every page open the workers send fewer chat messages (they read who has a
  page open from the database, written by the ingress): the group's table at a
  trick's end only and no hand edit, against the table and hands every card once
  the pages are closed.

It waits on progress (the stored move, the outbox emptied, the streams), never on
the clock; the caps only fail a cluster that stops making any.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy import func, select

from core import ChooseTrump, Match
from core.actions import action_to_dict
from telegram_bot.platform.live import open_pages
from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import OutboxMessage
from telegram_bot.runtime.cluster import free_port
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN, buttons
from tests.clusterutil import running_cluster
from tests.dbutil import fresh_database_url
from tests.web.pages import CHAT_METHODS, WEBAPP_URL, Stream, auth, seat_users

WORKERS = 2


@pytest.mark.slow
async def test_pages_on_the_ingress_and_moves_on_the_workers(tmp_path: Path) -> None:
    async with fresh_database_url("postgresql", tmp_path) as db_url:  # skips without PG
        async with BotApiEmulator(token=TOKEN, bot_username="HokmPagesBot", bot_name="H") as emu:
            await _run(emu, db_url, tmp_path)


async def _until(check, what: str) -> None:
    for _ in range(2400):  # a cap for a cluster that stops making progress
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def _run(emu: BotApiEmulator, db_url: str, log_dir: Path) -> None:
    web_port = free_port()
    env = {
        "HOKM_WEBAPP_URL": WEBAPP_URL,
        "HOKM_WEBAPP_LISTEN": "127.0.0.1",
        "HOKM_WEBAPP_PORT": str(web_port),
    }
    async with running_cluster(emu, db_url, log_dir, WORKERS, env) as sessions:
        await _pages(emu, sessions, f"http://127.0.0.1:{web_port}")


async def _pages(emu: BotApiEmulator, sessions, base: str) -> None:
    async def stored(game_id: str):
        async with sessions() as s:
            return await repo.get_game(s, game_id)

    async def delivered() -> bool:
        async with sessions() as s:
            return await s.scalar(select(func.count()).select_from(OutboxMessage)) == 0

    people = [emu.add_user(f"P{i}", language_code="en") for i in range(4)]
    for p in people:
        await emu.send_message(p, p.private_chat_id, "/start")
    await emu.wait_until(
        lambda: all(any(m.from_bot for m in emu.chat_log(p.private_chat_id)) for p in people),
        timeout=60,
    )
    group = emu.add_group("Pages", members=people, admins=[people[0]])
    await emu.send_message(people[0], group.id, "/newgame")

    def lobby():
        return next((m for m in emu.chat_log(group.id) if m.from_bot and buttons(m)), None)

    await emu.wait_until(lambda: lobby() is not None, timeout=60)
    data = [b["callback_data"] for b in buttons(lobby()) if b.get("callback_data")]
    game_id = next(d for d in data if d.startswith("j:")).split(":")[1]
    mid = lobby().message_id
    for handle in [await emu.press(people[0], group.id, mid, f"o:{game_id}::timer=0")]:
        await handle.wait_answer(timeout=60)
    for p in people[1:]:
        await (await emu.press(p, group.id, mid, f"j:{game_id}")).wait_answer(timeout=60)
    await (await emu.press(people[0], group.id, mid, f"s:{game_id}")).wait_answer(timeout=60)

    async def dealt() -> bool:
        game = await stored(game_id)
        return (
            game.status == "playing" and len(game.private_messages or {}) == 4 and await delivered()
        )

    try:
        await _until(dealt, "the match started and dealt")
    except AssertionError:
        game = await stored(game_id)
        raise AssertionError((game.status, game.private_messages, game.seats)) from None
    game = await stored(game_id)
    match = Match.from_json(game.state)
    users = seat_users(game, match)
    by_id = {p.id: p for p in people}

    async with aiohttp.ClientSession() as http:
        streams = [Stream(http, base, game_id, uid) for uid in users]
        for stream in streams:
            await stream.open()

        async def rows() -> set[int]:
            async with sessions() as s, s.begin():
                return set(await open_pages(s, game_id))

        assert await rows() == set(users)

        # 1. The hakem's page names trump on the ingress: played, stored, on every
        # page, and the group's table follows.
        action = match.legal_actions(match.turn)[0]
        assert isinstance(action, ChooseTrump)
        mark = emu.mark()
        body = {"move": game.move, "action": action_to_dict(action)}
        async with http.post(
            f"{base}/api/game/{game_id}/play", headers=auth(users[match.turn]), json=body
        ) as r:
            assert r.status == 200, await r.text()
        moved = game.move + 1
        for stream in streams:
            assert (await stream.at(moved))["move"] == moved
        await _until(delivered, "the trump call's messages sent")
        assert emu.count_calls(CHAT_METHODS, chat_id=group.id, since=mark) >= 1

        async def press_card(pages: bool) -> tuple[int, dict[int, int]]:
            """The seat on turn presses its lowest legal card in the chat (a
            worker handles it); every page gets the move. Returns the group's
            chat calls and each person's."""
            game = await stored(game_id)
            match = Match.from_json(game.state)
            uid = users[match.turn]
            card = match.legal_actions(match.turn)[0].card
            hand = next(
                m for m in emu.chat_log(uid) if m.message_id == game.private_messages[str(uid)]
            )
            mark = emu.mark()
            data = f"p:{game_id}:{match.hand_no}:{card.ascii}"
            handle = await emu.press(by_id[uid], uid, hand.message_id, data)
            await handle.wait_answer(timeout=60)
            if pages:
                for stream in streams:
                    await stream.at(game.move + 1)

            async def moved() -> bool:
                return (await stored(game_id)).move == game.move + 1

            await _until(moved, "the card stored")
            await _until(delivered, "the card's messages sent")
            group_calls = emu.count_calls(CHAT_METHODS, chat_id=group.id, since=mark)
            mine = {u: emu.count_calls(CHAT_METHODS, chat_id=u, since=mark) for u in users}
            return group_calls, mine

        # 2. Eight cards pressed in the chat with every page open.
        quiet_group = 0
        quiet_hands = {u: 0 for u in users}
        for _ in range(8):
            g, mine = await press_card(pages=True)
            quiet_group += g
            for u in users:
                quiet_hands[u] += mine[u]
        assert quiet_group == 2, quiet_group  # two tricks' ends
        assert quiet_hands == {u: 0 for u in users}, quiet_hands

        # 3. The pages close: the ingress removes its rows; four more cards.
        for stream in streams:
            await stream.close()

        async def closed() -> bool:
            return not await rows()

        await _until(closed, "the pages' rows removed")
        await _until(delivered, "the closed pages' hands brought up to date")
        loud_group = 0
        loud_hands = 0
        for _ in range(4):
            g, mine = await press_card(pages=False)
            loud_group += g
            loud_hands += sum(mine.values())
        assert loud_group == 4, loud_group  # every card
        assert loud_hands >= 4, loud_hands  # the player's hand and the next one's
        quiet = (quiet_group + sum(quiet_hands.values())) / 8
        loud = (loud_group + loud_hands) / 4
        print(f"cluster: chat calls per card with every page open {quiet}, without {loud}")
        assert quiet < loud / 3
