"""Real Telegram groups in the emulator: forum topics, group -> supergroup migration and
anonymous admins, driven through HTTP by python-telegram-bot's Bot and Application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from telegram import Bot, Update
from telegram.error import BadRequest, ChatMigrated
from telegram.ext import Application, CommandHandler, ContextTypes

from testkit.emulator import GROUP_ANONYMOUS_BOT, BotApiEmulator, SimulationError

TOKEN = "123456:TEST"
App = Application[Any, Any, Any, Any, Any, Any]


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(token=TOKEN, bot_username="HokmTestBot", bot_name="Hokm") as emu:
        yield emu


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=emu.base_url, base_file_url=emu.base_file_url) as bot:
        yield bot


async def _updates(bot: Bot) -> list[Update]:
    """Every update queued now, confirmed so the next call gets only newer ones."""
    updates = await bot.get_updates(timeout=0)
    if updates:
        await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0)
    return list(updates)


# ------------------------------------------------------------------------ forum topics


async def test_forum_messages_go_to_their_topic(emu: BotApiEmulator, bot: Bot) -> None:
    alice, bob = emu.add_user("Alice"), emu.add_user("Bob")
    forum = emu.add_group("Club", members=[bob], admins=[alice], forum=True)
    assert (await bot.get_chat(forum.id)).is_forum

    table = await emu.create_topic(forum, "Table 1", by=alice)
    created = (await _updates(bot))[0].message
    assert created.forum_topic_created is not None
    assert created.forum_topic_created.name == "Table 1"
    assert created.message_thread_id == table.thread_id == created.message_id

    said = await emu.send_message(bob, forum, "/newgame", topic=table)
    await emu.send_message(bob, forum, "/newgame")  # no topic: the General topic
    in_topic, in_general = (u.message for u in await _updates(bot))
    assert in_topic.is_topic_message and in_topic.message_thread_id == table.thread_id
    # As on Telegram, a message in a topic "replies" to the topic's first message.
    assert in_topic.reply_to_message.message_id == table.thread_id
    assert not in_general.is_topic_message and in_general.message_thread_id is None

    # python-telegram-bot's reply_text answers in the topic it was asked in.
    answer = await in_topic.reply_text("lobby")
    assert answer.message_thread_id == table.thread_id and answer.is_topic_message
    general = await bot.send_message(forum.id, "elsewhere")
    assert general.message_thread_id is None
    assert [r.text for r in emu.topic_log(forum, table)] == ["/newgame", "lobby"]
    assert [r.text for r in emu.topic_log(forum, None)] == ["/newgame", "elsewhere"]
    assert emu.last_message(forum, topic=table).text == "lobby"
    assert emu.last_message(forum, topic=None).text == "elsewhere"
    # A reply with no thread goes to its message's topic; with another thread it
    # finds no message to reply to there.
    reply = await bot.send_message(forum.id, "re", reply_to_message_id=said.message_id)
    assert reply.message_thread_id == table.thread_id
    with pytest.raises(BadRequest, match="Message to be replied not found"):
        await bot.send_message(
            forum.id,
            "re",
            reply_to_message_id=said.message_id + 1,
            message_thread_id=table.thread_id,
        )
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message(forum.id, "x", message_thread_id=said.message_id)


async def test_closed_and_deleted_topics_refuse_the_bot(emu: BotApiEmulator, bot: Bot) -> None:
    alice, bob = emu.add_user("Alice"), emu.add_user("Bob")
    forum = emu.add_group("Club", members=[bob], admins=[alice], forum=True, bot_admin=True)
    table = await emu.create_topic(forum, "Table 1")
    sent = await bot.send_message(forum.id, "table", message_thread_id=table.thread_id)

    await emu.close_topic(forum, table)
    closed = (await _updates(bot))[-1].message
    assert closed.forum_topic_closed is not None and closed.message_thread_id == table.thread_id
    with pytest.raises(BadRequest, match=r"(?i)topic_closed"):
        await bot.send_message(forum.id, "move", message_thread_id=table.thread_id)
    with pytest.raises(SimulationError, match="closed"):
        await emu.send_message(bob, forum, "/play", topic=table)
    await emu.send_message(alice, forum, "admins may", topic=table)
    await emu.reopen_topic(forum, table)
    await bot.send_message(forum.id, "move", message_thread_id=table.thread_id)

    emu.delete_topic(forum, table)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_message(forum.id, "move", message_thread_id=table.thread_id)
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("edited", chat_id=forum.id, message_id=sent.message_id)
    assert all(r.deleted for r in emu.topic_log(forum, table.thread_id, include_service=True))
    assert emu.topics(forum) == []
    assert await bot.send_message(forum.id, "General still works")


async def test_topic_methods_follow_telegrams_rights(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice")
    plain = emu.add_group("Plain", admins=[alice], bot_admin=True)
    forum = emu.add_group("Forum", admins=[alice], forum=True, bot_admin=True)
    managed = emu.add_group(
        "Managed", admins=[alice], forum=True, bot_admin=True, bot_manages_topics=True
    )
    with pytest.raises(BadRequest, match=r"(?i)the chat is not a forum"):
        await bot.create_forum_topic(plain.id, "Table")
    with pytest.raises(BadRequest, match=r"(?i)not enough rights to create a topic"):
        await bot.create_forum_topic(forum.id, "Table")
    member = await bot.get_chat_member(managed.id, emu.bot_id)
    assert (
        member.can_manage_topics
        and not (await bot.get_chat_member(forum.id, emu.bot_id)).can_manage_topics
    )

    topic = await bot.create_forum_topic(managed.id, "Table 1")
    assert emu.topic(managed, topic.message_thread_id).name == "Table 1"
    await bot.close_forum_topic(managed.id, topic.message_thread_id)
    with pytest.raises(BadRequest, match=r"(?i)topic_not_modified"):
        await bot.close_forum_topic(managed.id, topic.message_thread_id)
    # A bot that manages topics still posts in a closed one, as admins do.
    await bot.send_message(managed.id, "still here", message_thread_id=topic.message_thread_id)
    await bot.reopen_forum_topic(managed.id, topic.message_thread_id)
    await bot.edit_forum_topic(managed.id, topic.message_thread_id, name="Table 2")
    assert emu.topic(managed, topic.message_thread_id).name == "Table 2"
    await bot.delete_forum_topic(managed.id, topic.message_thread_id)
    with pytest.raises(BadRequest, match="Message thread not found"):
        await bot.send_chat_action(managed.id, "typing", message_thread_id=topic.message_thread_id)
    services = [
        next(iter(r.service))
        for r in emu.topic_log(managed, topic.message_thread_id, include_service=True)
        if r.service is not None
    ]
    assert services == [
        "forum_topic_created",
        "forum_topic_closed",
        "forum_topic_reopened",
        "forum_topic_edited",
    ]


async def test_two_tables_in_two_topics_answer_where_they_were_asked(
    emu: BotApiEmulator,
) -> None:
    """An Application replying with reply_text: each answer lands in its own topic."""

    async def newgame(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await update.message.reply_text(f"lobby for {update.message.from_user.first_name}")

    app: App = (
        Application.builder()
        .token(TOKEN)
        .base_url(emu.base_url)
        .base_file_url(emu.base_file_url)
        .build()
    )
    app.add_handler(CommandHandler("newgame", newgame))
    emu.watch(app)
    alice, bob, carol = emu.add_user("Alice"), emu.add_user("Bob"), emu.add_user("Carol")
    forum = emu.add_group("Club", members=[bob, carol], admins=[alice], forum=True)
    one, two = await emu.create_topic(forum, "One"), await emu.create_topic(forum, "Two")
    await app.initialize()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0, timeout=5)
    await app.start()
    try:
        await emu.send_message(bob, forum, "/newgame", topic=one)
        await emu.send_message(carol, forum, "/newgame", topic=two)
        await emu.settle()
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()
    assert [r.text for r in emu.topic_log(forum, one)] == ["/newgame", "lobby for Bob"]
    assert [r.text for r in emu.topic_log(forum, two)] == ["/newgame", "lobby for Carol"]
    assert emu.topic_log(forum, None) == []


# --------------------------------------------------------------------------- migration


@pytest.mark.parametrize("from_first", [False, True])
async def test_migrating_a_group_moves_it_to_a_new_id(
    emu: BotApiEmulator, bot: Bot, from_first: bool
) -> None:
    alice, bob = emu.add_user("Alice"), emu.add_user("Bob")
    group = emu.add_group("Club", members=[bob], admins=[alice], chat_type="group")
    old_id = group.id
    table = await bot.send_message(old_id, "table")
    assert (await bot.get_chat(old_id)).type == "group"

    supergroup = await emu.migrate(group, from_first=from_first)
    assert str(supergroup.id).startswith("-100") and supergroup.id != old_id
    messages = [u.message for u in await _updates(bot)]
    if from_first:
        messages.reverse()
    to_msg, from_msg = messages
    assert to_msg.chat.id == old_id and to_msg.migrate_to_chat_id == supergroup.id
    assert to_msg.from_user.id == alice.id
    assert from_msg.chat.id == supergroup.id and from_msg.migrate_from_chat_id == old_id
    assert from_msg.from_user.id == GROUP_ANONYMOUS_BOT["id"]
    assert from_msg.sender_chat.id == supergroup.id

    # Every call naming the old id: ChatMigrated with the new id.
    with pytest.raises(ChatMigrated) as caught:
        await bot.send_message(old_id, "move")
    assert caught.value.new_chat_id == supergroup.id
    with pytest.raises(ChatMigrated):
        await bot.edit_message_text("edited", chat_id=old_id, message_id=table.message_id)
    with pytest.raises(ChatMigrated):
        await bot.get_chat_member(old_id, bob.id)
    assert emu.calls_to("sendMessage", old_id)[-1].description == (
        "Bad Request: group chat was upgraded to a supergroup chat"
    )

    # The supergroup has the members and the bot; the old group takes no new messages.
    assert (await bot.get_chat(supergroup.id)).type == "supergroup"
    assert (await bot.get_chat_member(supergroup.id, bob.id)).status == "member"
    assert (await bot.get_chat_member(supergroup.id, alice.id)).status == "creator"
    await bot.send_message(supergroup.id, "table again")
    await emu.send_message(bob, supergroup, "/play")
    assert (await _updates(bot))[0].message.chat.id == supergroup.id
    with pytest.raises(SimulationError, match="supergroup"):
        await emu.send_message(bob, group, "/play")
    with pytest.raises(SimulationError):
        await emu.migrate(supergroup)


# --------------------------------------------------------------------- anonymous admins


async def test_an_anonymous_admin_writes_as_the_group(emu: BotApiEmulator, bot: Bot) -> None:
    alice, bob, carol = emu.add_user("Alice"), emu.add_user("Bob"), emu.add_user("Carol")
    group = emu.add_group("Club", members=[bob], admins=[alice, carol], anonymous_admins=[carol])
    await emu.send_as_anonymous_admin(alice, group, "/cancel")  # privacy mode: a command
    await emu.send_message(carol, group, "/cancel", anonymous=True)
    await emu.send_message(carol, group, "/cancel")  # as herself
    first, second, third = (u.message for u in await _updates(bot))
    for message in (first, second):
        assert message.from_user.to_dict() == GROUP_ANONYMOUS_BOT
        assert message.sender_chat.id == group.id and message.sender_chat.type == "supergroup"
        assert message.text == "/cancel"
    assert third.from_user.id == carol.id and third.sender_chat is None

    member = await bot.get_chat_member(group.id, alice.id)
    assert member.status == "creator" and member.is_anonymous
    carol_member = await bot.get_chat_member(group.id, carol.id)
    assert carol_member.status == "administrator" and carol_member.is_anonymous
    assert (await bot.get_chat_member(group.id, bob.id)).status == "member"
    admins = {a.user.id: a.is_anonymous for a in await bot.get_chat_administrators(group.id)}
    assert admins == {alice.id: True, carol.id: True}
    # Telegram's answer about GroupAnonymousBot itself is not something to rely on.
    with pytest.raises(BadRequest, match="User not found"):
        await bot.get_chat_member(group.id, GROUP_ANONYMOUS_BOT["id"])
    with pytest.raises(SimulationError, match="not an admin"):
        await emu.send_as_anonymous_admin(bob, group, "/cancel")
    with pytest.raises(SimulationError, match="anonymous admin"):
        await emu.send_message(bob, group, "/cancel", anonymous=True)


async def test_an_anonymous_admins_topic_message_keeps_its_thread(
    emu: BotApiEmulator, bot: Bot
) -> None:
    alice = emu.add_user("Alice")
    forum = emu.add_group("Club", admins=[alice], forum=True)
    table = await emu.create_topic(forum, "Table")
    await _updates(bot)
    await emu.send_as_anonymous_admin(alice, forum, "/cancel", topic=table)
    message = (await _updates(bot))[0].message
    assert message.sender_chat.id == forum.id and message.message_thread_id == table.thread_id
