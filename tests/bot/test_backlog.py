"""When the bot is behind: presses are served first, oldest first, and a stale press
is answered without waiting for its game."""

from __future__ import annotations

import asyncio
import os

from telegram import Update

from core import Match
from telegram_bot.runtime.updates import TrackingUpdateProcessor

from .driver import by_level
from .test_game_flow import _people
from .test_resilience import _start_game


def _update(update_id: int, press: bool) -> Update:
    user = {"id": 1, "is_bot": False, "first_name": "A"}
    if press:
        data = {"callback_query": {"id": str(update_id), "from": user, "chat_instance": "1"}}
    else:
        chat = {"id": 1, "type": "private"}
        data = {"message": {"message_id": update_id, "date": 0, "chat": chat, "text": "hi"}}
    return Update.de_json({"update_id": update_id, **data}, None)


async def test_waiting_presses_start_before_other_updates_oldest_first():
    processor = TrackingUpdateProcessor(workers=2)
    started: list[int] = []
    release = asyncio.Event()

    async def handle(update_id: int) -> None:
        started.append(update_id)
        await release.wait()

    kinds = [False, False, False, True, False, True, True, False]  # True: a press
    tasks = [
        asyncio.create_task(processor.process_update(_update(i, press), handle(i)))
        for i, press in enumerate(kinds)
    ]
    while len(started) < 2 or processor.waiting < len(kinds) - 2:
        await asyncio.sleep(0)
    assert started == [0, 1] and processor.in_flight == len(kinds)
    release.set()
    await asyncio.gather(*tasks)
    assert started == [0, 1, 3, 5, 6, 2, 4, 7]
    assert processor.in_flight == 0 and processor.processed == len(kinds)


async def test_the_progress_file_says_what_was_handled_each_time_the_bot_goes_idle(tmp_path):
    path = tmp_path / "progress"
    processor = TrackingUpdateProcessor(workers=2, progress_file=str(path))
    release = asyncio.Event()

    async def handle() -> None:
        await release.wait()

    first = asyncio.create_task(processor.process_update(_update(7, False), handle()))
    second = asyncio.create_task(processor.process_update(_update(9, True), handle()))
    while processor.running < 2:
        await asyncio.sleep(0)
    assert not path.exists()  # busy: nothing written yet
    release.set()
    await asyncio.gather(first, second)
    assert path.read_text().split() == [str(os.getpid()), "9"]
    await processor.process_update(_update(8, False), asyncio.sleep(0))
    assert path.read_text().split() == [str(os.getpid()), "9"]  # the highest id handled


async def test_a_backlog_answers_every_press_before_slower_updates(emu, runner):
    """The bot comes back to a backlog: many commands, then presses (the move that
    counts, then stale ones). With one update at a time, so that the order things
    finish in is the order they started in, every stale press is answered, in the
    order pressed, before any command but the one already running: the order is
    checked, not the time, so a slow machine changes nothing."""
    people = await _people(emu, ["Ada", "Bea"], lang="en")
    group, table = await _start_game(emu, runner, people, target=1)
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(3):
        await table.step(strategies)
    await runner.settle()
    game = await table.game()
    match = Match.from_json(game.state)
    on_turn = next(p for p in people if p.id == game.seats[match.order[match.turn]]["user_id"])
    card = by_level("normal", seed=1)(match.view(match.turn)).card
    hand = table.hand_message(game, on_turn)

    await runner.app.updater.stop()  # the bot is away while people keep going
    runner.app.update_processor.workers = 1
    commands = 20
    for _ in range(commands):
        await emu.send_message(people[0], group.id, "/score")
    play = await emu.press(
        on_turn,
        on_turn.private_chat_id,
        hand.message_id,
        f"p:{game.id}:{match.hand_no}:{card.ascii}",
    )
    stale = []
    for person in people:
        mine = table.hand_message(game, person).message_id
        for move in range(game.move - 3, game.move):
            stale.append(
                await emu.press(person, person.private_chat_id, mine, f"t:{game.id}:{move}:S")
            )
    since = emu.mark()
    await runner.app.updater.start_polling(poll_interval=0.0, timeout=1)
    await runner.settle()

    assert not play.answer.show_alert and "You played" in play.answer.text
    assert (await table.game()).move > game.move
    for h in stale:
        assert h.answer is not None and h.answer.show_alert and "earlier" in h.answer.text
    calls = emu.calls[since:]
    answered = [c.params["callback_query_id"] for c in calls if c.method == "answerCallbackQuery"]
    stale_order = [a for a in answered if a in {h.id for h in stale}]
    assert stale_order == [h.id for h in stale]  # oldest first
    last_stale = max(c.index for c in calls if c.params.get("callback_query_id") == stale[-1].id)
    replies = [c.index for c in calls if c.method == "sendMessage" and c.chat_id == group.id]
    assert len(replies) >= commands
    assert sum(1 for r in replies if r < last_stale) <= 1  # only the one already running


async def test_a_stale_press_is_answered_while_its_game_is_busy(emu, runner):
    people = await _people(emu, ["Cy", "Di"], lang="en")
    _group, table = await _start_game(emu, runner, people, target=1)
    strategies = {p.id: by_level("normal", seed=p.id) for p in people}
    for _ in range(2):
        await table.step(strategies)
    await runner.settle()
    game = await table.game()
    held, release = asyncio.Event(), asyncio.Event()

    async def busy() -> None:  # the game is busy (a computer thinking, a slow database)
        async with runner.service.locks[game.id]:
            held.set()
            await release.wait()

    holder = asyncio.create_task(busy())
    await held.wait()
    try:
        handles = []
        for person in people:
            mine = table.hand_message(game, person).message_id
            handles.append(
                await emu.press(
                    person, person.private_chat_id, mine, f"k:{game.id}:{game.move - 1}:1"
                )
            )
        # Nothing else moves while the lock is held: if a press waited for the game,
        # the bot would stop making progress and this wait would fail.
        await emu.wait_until(lambda: all(h.answered for h in handles), timeout=10)
    finally:
        release.set()
        await holder
    await runner.settle()
    for h in handles:
        assert h.answer.show_alert and "earlier" in h.answer.text
    assert (await table.game()).move == game.move
