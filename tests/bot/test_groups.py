"""End to end: Telegram groups as they are: forum topics with a table each, a group
that becomes a supergroup mid-match, and an admin writing anonymously as the group.

The real bot against the emulator (see conftest), on SQLite and, with HOKM_TEST_PG=1,
on PostgreSQL.
"""

from __future__ import annotations

import re

import pytest

from core import Match
from telegram_bot.platform.storage import repo
from testkit.emulator import GROUP_ANONYMOUS_BOT
from testkit.simulation import BotRunner

from .driver import Table, buttons, lowest_card


async def _people(emu, names):
    users = [emu.add_user(n, language_code="en") for n in names]
    for u in users:
        await emu.send_message(u, u.private_chat_id, "/start")
    return users


class GameTable(Table):
    """A Table that follows one game by its id (a forum holds several at once)."""

    def __init__(self, emu, runner, chat, users, game_id):
        super().__init__(emu, runner, chat, users)
        self.game_id = game_id

    async def game(self):
        async with self.runner.service.sessions() as s:
            return await repo.get_game(s, self.game_id)


async def _open_solo(emu, runner, chat, owner, topic=None, target=1):
    """``owner`` opens a table (in ``topic``), ``target`` points to win, no timer, and starts it
    with the computers in the empty seats; the game."""
    await runner.settle()
    sim = emu.chat(chat)
    async with runner.service.sessions.begin() as s:  # an English-speaking group
        await repo.get_or_create_chat(s, sim.id, sim.type, sim.title, language="en")
    await emu.send_message(owner, chat, "/newgame", topic=topic)
    await runner.settle()
    thread = None if topic is None else topic.thread_id
    async with runner.service.sessions() as s:
        game = await repo.get_active_game(s, emu.chat(chat).id, thread)
    assert game is not None and game.status == "lobby"
    assert game.thread_id == (thread or 0)
    lobby = emu.last_message(chat, topic=topic) if topic is not None else emu.last_message(chat)
    assert lobby is not None and f"j:{game.id}" in [b.get("callback_data") for b in buttons(lobby)]
    for name, value in (("timer", 0), ("target", target)):
        data = f"o:{game.id}::{name}={value}"
        h = await emu.press(owner, emu.chat(chat).id, lobby.message_id, data)
        await runner.settle()
        assert h.answer is not None and not h.answer.show_alert, h.answer
    await emu.press(owner, emu.chat(chat).id, lobby.message_id, f"s:{game.id}")
    await runner.settle()
    async with runner.service.sessions() as s:
        game = await repo.get_game(s, game.id)
    assert game.status == "playing"
    return game


def _game_ids_in(records):
    """The game ids the bot's messages carry in their buttons."""
    ids = set()
    for record in records:
        for button in buttons(record):
            data = button.get("callback_data") or ""
            if ":" in data:
                ids.add(data.split(":")[1])
    return ids - {""}


async def test_two_tables_in_two_topics_of_one_forum(emu, runner):
    bob, carol = await _people(emu, ["Bob", "Carol"])
    alice = emu.add_user("Alice")
    forum = emu.add_group("Club", members=[bob, carol], admins=[alice], forum=True)
    one = await emu.create_topic(forum, "Table one")
    two = await emu.create_topic(forum, "Table two")

    game_one = await _open_solo(emu, runner, forum, bob, topic=one)
    game_two = await _open_solo(emu, runner, forum, carol, topic=two)
    assert game_one.id != game_two.id  # one table per topic, at once
    # A second /newgame in a topic with a table is refused there, not elsewhere.
    await emu.send_message(carol, forum, "/newgame", topic=one)
    await runner.settle()
    assert "already open" in emu.last_message(forum, topic=one).text

    tables = [
        GameTable(emu, runner, forum, [bob], game_one.id),
        GameTable(emu, runner, forum, [carol], game_two.id),
    ]
    for table in tables:
        # Table.step's check reads the whole forum: the other table's played cards
        # are public there but not in this match. Each topic is checked below.
        table.check_hidden = False
    strategies = {bob.id: lowest_card, carol.id: lowest_card}
    going = [True, True]
    for _ in range(200):  # the two matches move in turns, both open at once
        for i, table in enumerate(tables):
            if going[i]:
                going[i] = await table.step(strategies)
        if not any(going):
            break
    assert not any(going), "a match did not end"

    for game_id, topic in ((game_one.id, one), (game_two.id, two)):
        async with runner.service.sessions() as s:
            game = await repo.get_game(s, game_id)
        assert game.status == "finished" and game.thread_id == topic.thread_id
        records = [r for r in emu.topic_log(forum, topic) if r.from_bot]
        texts = "\n".join(r.text for r in records)
        # Lobby, table, hand result and match result: all in the game's own topic.
        assert _game_ids_in(records) == {game_id}, _game_ids_in(records)
        # A hand's result line: "Hand 1: Team 2 won, …", or a kot's "Hand 1: Hakem-kot! …".
        assert re.search(r"^Hand \d+: (Team \d won|(Hakem-)?[Kk]ot!)", texts, re.M), texts
        assert Match.from_json(game.state).is_over
        assert "Match over" in texts, texts
    # Nothing of either game went to the General topic.
    assert [r.text for r in emu.topic_log(forum, None) if r.from_bot] == []
    async with runner.service.sessions() as s:
        assert {m.game_id for m in await repo.recent_matches(s, forum.id)} == {
            game_one.id,
            game_two.id,
        }


@pytest.mark.parametrize("how", ["closed", "deleted"])
async def test_a_closed_topic_ends_its_game_and_leaves_the_other(emu, runner, how):
    bob, carol = await _people(emu, ["Bob", "Carol"])
    alice = emu.add_user("Alice")
    forum = emu.add_group("Club", members=[bob, carol], admins=[alice], forum=True)
    one = await emu.create_topic(forum, "Table one")
    two = await emu.create_topic(forum, "Table two")
    # Two hands at least: the first hand's result is not the match's end.
    game_one = await _open_solo(emu, runner, forum, bob, topic=one, target=3)
    game_two = await _open_solo(emu, runner, forum, carol, topic=two)

    if how == "closed":
        await emu.close_topic(forum, one)
    else:
        emu.delete_topic(forum, one)
    await runner.settle()
    table = GameTable(emu, runner, forum, [bob], game_one.id)
    table.check_hidden = False
    # Bob plays on from his private hand: the next message the table sends to its
    # topic (the hand's result) is refused, and the game ends there.
    for _ in range(60):
        if not await table.step({bob.id: lowest_card}):
            break
    async with runner.service.sessions() as s:
        ended = await repo.get_game(s, game_one.id)
        other = await repo.get_game(s, game_two.id)
        assert await repo.get_active_game(s, forum.id, one.thread_id) is None
        assert await repo.recent_matches(s, forum.id) == []  # counted for no one
    assert ended.status == "cancelled"
    assert emu.count_calls("sendMessage", forum.id, ok=False) >= 1
    hand = table.hand_message(ended, bob)
    assert "topic of this table was closed" in hand.text, hand.text
    assert other.status == "playing"  # the other topic's table goes on
    # Bob is free again: a table in the other open topic seats him.
    three = await emu.create_topic(forum, "Table three")
    await emu.send_message(bob, forum, "/newgame", topic=three)
    await runner.settle()
    async with runner.service.sessions() as s:
        fresh = await repo.get_active_game(s, forum.id, three.thread_id)
    assert fresh is not None and fresh.user_ids() == [bob.id]
    lobby = emu.last_message(forum, topic=three)
    assert f"j:{fresh.id}" in [b.get("callback_data") for b in buttons(lobby)]


async def _migrated_match(emu, runner, db_url, *, updates: bool):
    bob = (await _people(emu, ["Bob"]))[0]
    alice = emu.add_user("Alice")
    group = emu.add_group("Old club", members=[bob], admins=[alice], chat_type="group")
    # A finished match first: the group's results and tallies must move too.
    first = await _open_solo(emu, runner, group, bob)
    await GameTable(emu, runner, group, [bob], first.id).play_out({bob.id: lowest_card})
    game = await _open_solo(emu, runner, group, bob)
    table = GameTable(emu, runner, group, [bob], game.id)
    table.check_hidden = False  # the first match's messages show its own cards
    for _ in range(3):  # mid-hand
        assert await table.step({bob.id: lowest_card})
    async with runner.service.sessions() as s:
        before = Match.from_json((await repo.get_game(s, game.id)).state)
    played_before = sum(len(t.plays) for t in before.tricks) + len(before.trick)
    assert played_before > 0

    mark = emu.mark()
    if updates:
        supergroup = await emu.migrate(group)
        await runner.settle()
    else:
        # The service messages are lost (the bot was down): the next call naming the
        # old group meets ChatMigrated, in the outbox, and that moves the chat.
        await runner.stop()
        supergroup = await emu.migrate(group)
        emu.world.updates.drop_all()
        runner = BotRunner(emu, db_url)
        await runner.start()
        table.runner = runner
        # Bob plays on from his private hand: the table's edit names the old group.
        assert await table.step({bob.id: lowest_card})
        await runner.settle()
        assert emu.calls_to("editMessageText", group.id, since=mark, ok=False)
    async with runner.service.sessions() as s:
        moved = await repo.get_game(s, game.id)
        assert moved.chat_id == supergroup.id and moved.status == "playing"
        assert await repo.get_chat(s, group.id) is None
        assert [m.game_id for m in await repo.recent_matches(s, supergroup.id)] == [first.id]
    table = GameTable(emu, runner, supergroup, [bob], game.id)
    await table.play_out({bob.id: lowest_card})
    async with runner.service.sessions() as s:
        done = await repo.get_game(s, game.id)
        results = await repo.recent_matches(s, supergroup.id)
        tally = await repo.get_tally(s, supergroup.id, bob.id)
        assert await repo.recent_matches(s, group.id) == []
    assert done.status == "finished" and done.chat_id == supergroup.id
    match = Match.from_json(done.state)
    # The same match went on: the cards played before the move are in its history.
    assert match.hand_no >= before.hand_no
    assert [r.game_id for r in results] == [game.id, first.id]
    assert results[0].scores == list(match.scores)
    assert tally is not None and tally.matches_played == 2
    # The table went up anew in the supergroup and the match ended there.
    assert done.table_message_id is not None
    assert emu.message(supergroup, done.table_message_id).from_bot
    new_texts = [r.text for r in emu.chat_log(supergroup) if r.from_bot]
    # A hand's result ("Hand 1: Team 2 won, …", or a kot: "Hand 1: Kot! …"); the
    # table's head is "Hokm · Hand 1" on a line of its own.
    assert any(re.search(r"Hand \d+: ", t) for t in new_texts), new_texts
    # Nothing was accepted in the old group after the migration.
    assert emu.calls_to(None, group.id, since=mark, ok=True) == []
    await emu.send_message(bob, supergroup, "/score")
    await runner.settle()
    score = emu.last_message(supergroup).text
    assert "Recent matches" in score, score
    return runner


async def test_a_group_migrated_mid_match_finishes_it_in_the_supergroup(emu, runner, db_url):
    await _migrated_match(emu, runner, db_url, updates=True)


async def test_a_migration_met_as_chat_migrated_moves_the_chat(emu, db_url):
    runner = BotRunner(emu, db_url)
    await runner.start()
    try:
        runner = await _migrated_match(emu, runner, db_url, updates=False)
    finally:
        await runner.stop()


async def test_cancel_by_an_anonymous_admin_and_not_by_a_member(emu, runner):
    bob = (await _people(emu, ["Bob"]))[0]
    alice, carol = emu.add_user("Alice"), emu.add_user("Carol")
    group = emu.add_group("Club", members=[bob, carol], admins=[alice])
    game = await _open_solo(emu, runner, group, bob)

    await emu.send_message(carol, group, "/cancel")
    await runner.settle()
    assert "Only the player who opened the game" in emu.last_message(group).text

    mark = emu.mark()
    said = await emu.send_as_anonymous_admin(alice, group, "/cancel")
    assert said.to_api(emu.world.bot_user())["from"]["id"] == GROUP_ANONYMOUS_BOT["id"]
    await runner.settle()
    question = emu.last_message(group)
    assert "End this match?" in question.text, question.text
    # Told by the message itself, not by asking Telegram about GroupAnonymousBot.
    assert emu.calls_to("getChatMember", group.id, since=mark) == []
    yes = f"e:{game.id}::1"
    assert yes in [b.get("callback_data") for b in buttons(question)]
    h = await emu.press(alice, group.id, question.message_id, yes)
    await runner.settle()
    assert h.answer is not None and not h.answer.show_alert, h.answer
    async with runner.service.sessions() as s:
        assert (await repo.get_game(s, game.id)).status == "cancelled"
