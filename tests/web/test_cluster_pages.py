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

from pathlib import Path

import aiohttp
import pytest

from core import ChooseTrump, Match
from telegram_bot.platform.live import open_pages
from telegram_bot.runtime.cluster import free_port
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN
from tests import clusterutil
from tests.clusterutil import group_match, running_cluster, until
from tests.dbutil import fresh_database_url
from tests.web.pages import CHAT_METHODS, Stream, post_move, seat_users, webapp_env

WORKERS = 2


@pytest.mark.slow
async def test_pages_on_the_ingress_and_moves_on_the_workers(tmp_path: Path) -> None:
    async with fresh_database_url("postgresql", tmp_path) as db_url:  # skips without PG
        async with BotApiEmulator(token=TOKEN, bot_username="HokmPagesBot", bot_name="H") as emu:
            await _run(emu, db_url, tmp_path)


async def _run(emu: BotApiEmulator, db_url: str, log_dir: Path) -> None:
    web_port = free_port()
    async with running_cluster(emu, db_url, log_dir, WORKERS, webapp_env(web_port)) as sessions:
        await _pages(emu, sessions, f"http://127.0.0.1:{web_port}")


async def _pages(emu: BotApiEmulator, sessions, base: str) -> None:
    async def stored(game_id: str):
        return await clusterutil.stored(sessions, game_id)

    async def delivered() -> bool:
        return await clusterutil.delivered(sessions)

    people = [emu.add_user(f"P{i}", language_code="en") for i in range(4)]
    group, game_id = await group_match(emu, sessions, people)
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
        mark = emu.mark()
        _, action = await post_move(http, base, game, users)
        assert isinstance(action, ChooseTrump)
        moved = game.move + 1
        for stream in streams:
            assert (await stream.at(moved))["move"] == moved
        await until(delivered, "the trump call's messages sent")
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

            await until(moved, "the card stored")
            await until(delivered, "the card's messages sent")
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

        # 3. The pages close: the ingress removes its rows and brings each hand up to
        # date (each is behind: none was edited while its page was open); four more
        # cards.
        closing = emu.mark()
        for stream in streams:
            await stream.close()

        async def closed() -> bool:
            return not await rows()

        async def caught_up() -> bool:
            edited = all(
                emu.count_calls(("editMessageText",), chat_id=u, since=closing) >= 1 for u in users
            )
            return edited and await delivered()

        await until(closed, "the pages' rows removed")
        await until(caught_up, "the closed pages' hands brought up to date")
        loud_group = 0
        loud_hands = 0
        for _ in range(4):
            g, mine = await press_card(pages=False)
            loud_group += g
            loud_hands += sum(mine.values())
        assert loud_group == 4, loud_group  # every card
        # The player's hand and the next one's, whichever worker handled the card
        # before (no worker remembers what a hand shows: one process's count).
        assert 4 <= loud_hands <= 8, loud_hands
        quiet = (quiet_group + sum(quiet_hands.values())) / 8
        loud = (loud_group + loud_hands) / 4
        print(f"cluster: chat calls per card with every page open {quiet}, without {loud}")
        assert quiet < loud / 3
