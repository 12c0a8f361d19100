"""The Bot API emulator, driven by a real telegram.Bot and a real PTB Application."""

from __future__ import annotations

import asyncio
import datetime as dtm
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, InvalidToken, RetryAfter
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChosenInlineResultHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
)

from testkit.emulator import ApiError, BotApiEmulator, SettleTimeout, SimulationError
from testkit.emulator.textparse import command_entities, parse_text

TOKEN = "123456:TEST"
App = Application[Any, Any, Any, Any, Any, Any]


def _seconds(value: int | dtm.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


def _keyboard(*buttons: tuple[str, str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(t, callback_data=d) for t, d in buttons]])


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(token=TOKEN, bot_username="HokmTestBot", bot_name="Hokm") as emu:
        yield emu


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, base_url=emu.base_url, base_file_url=emu.base_file_url) as bot:
        yield bot


async def _run(app: App) -> None:
    await app.initialize()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0, timeout=5)
    await app.start()


async def _shutdown(app: App) -> None:
    assert app.updater is not None
    await app.updater.stop()
    await app.stop()
    await app.shutdown()


def _app(emu: BotApiEmulator) -> App:
    return (
        Application.builder()
        .token(TOKEN)
        .base_url(emu.base_url)
        .base_file_url(emu.base_file_url)
        .build()
    )


# ------------------------------------------------------------------ text parsing


def test_html_is_parsed_like_telegram() -> None:
    parsed = parse_text(
        "  😀 <b>bold <i>both</i></b> &lt;tag&gt; R&D "
        '<a href="https://t.me/x">link</a>\n<pre><code class="language-py">x = 1</code></pre>\n',
        "HTML",
    )
    assert parsed.text == "😀 bold both <tag> R&D link\nx = 1"
    # Offsets count UTF-16 code units: the emoji is two.
    assert parsed.entities == [
        {"type": "bold", "offset": 3, "length": 9},
        {"type": "italic", "offset": 8, "length": 4},
        {"type": "text_link", "offset": 23, "length": 4, "url": "https://t.me/x"},
        {"type": "pre", "offset": 28, "length": 5, "language": "py"},
    ]
    with pytest.raises(ApiError, match='Unmatched end tag at byte offset 7, expected "</i>"'):
        parse_text("<b><i>x</b></i>", "HTML")
    with pytest.raises(ApiError, match='Can\'t find end tag corresponding to start tag "b"'):
        parse_text("<b>x", "HTML")
    with pytest.raises(ApiError, match='Unsupported start tag "" at byte offset 2'):
        parse_text("1 < 2", "HTML")
    assert command_entities("/new@HokmTestBot now") == [
        {"type": "bot_command", "offset": 0, "length": 16}
    ]


# ------------------------------------------------------------------ HTTP shapes


async def test_get_me_tokens_and_unknown_methods(emu: BotApiEmulator, bot: Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.username, me.first_name) == (123456, "HokmTestBot", "Hokm")
    assert me.supports_inline_queries

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
        async with http.post(f"{emu.base_url}999:WRONG/getMe") as r:
            assert r.status == 401
            assert await r.json() == {"ok": False, "error_code": 401, "description": "Unauthorized"}
        async with http.get(f"{emu.base_url}{TOKEN}/noSuchMethod") as r:
            assert r.status == 404
            assert (await r.json())["description"] == "Not Found"
        async with http.get(f"{emu.base_url}{TOKEN}/GETME") as r:  # case-insensitive
            assert (await r.json())["result"]["username"] == "HokmTestBot"

    with pytest.raises(InvalidToken):
        await Bot("999:WRONG", base_url=emu.base_url).initialize()


async def test_json_form_and_query_bodies(emu: BotApiEmulator) -> None:
    alice = emu.add_user("Alice", started=True)
    markup = {"inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]}
    url = f"{emu.base_url}{TOKEN}/sendMessage"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
        async with http.post(
            url, json={"chat_id": alice.id, "text": "1", "reply_markup": markup}
        ) as r:
            body = await r.json()
            assert body["ok"] and body["result"]["reply_markup"] == markup
        form = {"chat_id": str(alice.id), "text": "2", "reply_markup": '{"inline_keyboard": []}'}
        async with http.post(url, data=form) as r:
            assert (await r.json())["result"]["text"] == "2"
        async with http.get(url, params={"chat_id": str(alice.id), "text": "3"}) as r:
            assert (await r.json())["result"]["message_id"] == 3
    log = emu.chat_log(alice)
    assert [m.text for m in log] == ["1", "2", "3"]
    assert log[0].reply_markup == markup and log[0].from_bot


# ------------------------------------------------------------------ a real Application


async def test_application_answers_start_and_a_button(emu: BotApiEmulator) -> None:
    alice = emu.add_user("Alice", language_code="fa")

    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await update.effective_message.reply_text(
            f"Welcome! payload={context.args}", reply_markup=_keyboard(("Play ▶", "play:1"))
        )

    async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.message is not None
        await query.answer(f"pressed {query.data}", show_alert=True)
        await query.edit_message_text("Playing", reply_markup=_keyboard(("Stop", "stop")))

    events: list[str] = []
    emu.add_listener(lambda kind, subject: events.append(kind))
    app = _app(emu)
    app.add_handler(CommandHandler("start", start))
    app.add_handler(CallbackQueryHandler(button))
    await _run(app)
    try:
        await emu.send_message(alice, alice, "/start join_42")
        await emu.settle()
        welcome = emu.last_message(alice)
        assert welcome is not None
        assert welcome.text == "Welcome! payload=['join_42']"
        assert welcome.button_labels == ["Play ▶"]

        handle = await emu.press_button(alice, alice, welcome.message_id, "Play")
        await emu.settle()
        assert handle.answer is not None
        assert (handle.answer.text, handle.answer.show_alert) == ("pressed play:1", True)
        assert emu.callback_answer(handle.id) == handle.answer
        assert welcome.text == "Playing" and len(welcome.edits) == 1
        assert "Play ▶" in emu.visible_text(alice) and "Stop" in emu.visible_text(alice)
        assert emu.count_calls(("sendMessage", "editMessageText"), alice) == 2

        with pytest.raises(SimulationError):
            await emu.press_button(alice, alice, welcome.message_id, "absent")
    finally:
        await _shutdown(app)
    assert events == ["message", "message", "callback_answer", "edit"]
    assert emu.pending_updates == 0  # the final getUpdates confirmed everything
    assert not emu.server.internal_errors


async def test_privacy_mode_in_groups(emu: BotApiEmulator) -> None:
    alice, bob = emu.add_user("Alice"), emu.add_user("Bob")
    group = emu.add_group("Hokm club", members=[bob], admins=[alice])
    seen: list[str] = []

    async def record(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        seen.append(update.effective_message.text or "")

    app = _app(emu)
    app.add_handler(CommandHandler("new", record))
    await _run(app)
    try:
        await emu.send_message(alice, group, "hello everyone")  # privacy mode: not delivered
        await emu.send_message(alice, group, "/new@OtherBot")  # another bot's command
        await emu.send_message(bob, group, "/new@HokmTestBot")
        await emu.send_message(alice, group, "/new")
        await emu.settle()
    finally:
        await _shutdown(app)
    assert seen == ["/new@HokmTestBot", "/new"]
    assert group.id < 0 and group.type == "supergroup"
    with pytest.raises(SimulationError):
        await emu.send_message(emu.add_user("Eve"), group, "/new")


# ------------------------------------------------------------------ Telegram's errors


async def test_forbidden_until_start_blocked_and_kicked(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice")
    group = emu.add_group("Hokm club", members=[alice])
    with pytest.raises(Forbidden, match="bot can't initiate conversation with a user"):
        await bot.send_message(alice.id, "hi")

    await emu.send_message(alice, alice, "/start")
    assert (await bot.send_message(alice.private_chat_id, "hi")).message_id == 2

    alice.block_bot()
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(alice.id, "hi")
    await emu.send_message(alice, alice, "/start")  # restart unblocks
    await bot.send_message(alice.id, "welcome back")

    await bot.send_message(group.id, "in the group")
    group.remove_bot()
    with pytest.raises(Forbidden, match="bot was kicked from the supergroup chat"):
        await bot.send_message(group.id, "still here?")
    updates = await bot.get_updates()
    kinds = [u.my_chat_member.new_chat_member.status for u in updates if u.my_chat_member]
    assert kinds == ["kicked", "member", "kicked"]

    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.send_message(-42, "nobody")


async def test_message_not_modified_and_edit_errors(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    sent = await bot.send_message(alice.id, "<b>Score</b> 0", parse_mode=ParseMode.HTML)
    assert sent.text == "Score 0" and sent.entities[0].type == "bold"
    await bot.edit_message_text("<b>Score</b> 1", alice.id, sent.message_id, parse_mode="HTML")
    with pytest.raises(BadRequest, match="Message is not modified: specified new message"):
        await bot.edit_message_text("<b>Score</b> 1", alice.id, sent.message_id, parse_mode="HTML")
    # Only the formatting differs: that is a modification.
    await bot.edit_message_text("Score 1", alice.id, sent.message_id)
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("x", alice.id, 999)
    with pytest.raises(BadRequest, match="Message text is empty"):
        await bot.send_message(alice.id, "<b> </b>", parse_mode="HTML")
    with pytest.raises(BadRequest, match='unsupported start tag "foo"'):
        await bot.send_message(alice.id, "<foo>x</foo>", parse_mode="HTML")

    markup = _keyboard(("A", "a"))
    await bot.edit_message_reply_markup(alice.id, sent.message_id, reply_markup=markup)
    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_reply_markup(alice.id, sent.message_id, reply_markup=markup)
    record = emu.message(alice, sent.message_id)
    assert [v.text for v in record.edit_history] == ["Score 0", "Score 1", "Score 1", "Score 1"]

    await bot.delete_message(alice.id, sent.message_id)
    assert record.deleted and emu.last_message(alice) is None
    with pytest.raises(BadRequest, match="Message to delete not found"):
        await bot.delete_message(alice.id, sent.message_id)


async def test_callback_data_limit_is_64_bytes(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    await bot.send_message(alice.id, "ok", reply_markup=_keyboard(("x", "ح" * 32)))  # 64 bytes
    with pytest.raises(BadRequest, match="Button_data_invalid"):
        await bot.send_message(alice.id, "no", reply_markup=_keyboard(("x", "ح" * 32 + "a")))


async def test_text_limit_is_4096_utf16_units(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    await bot.send_message(alice.id, "a" * 4096)
    await bot.send_message(alice.id, f"<b>{'a' * 4090}</b>&lt;&gt;", parse_mode="HTML")
    await bot.send_message(alice.id, "😀" * 2048)
    for text in ("a" * 4097, "😀" * 2049):
        with pytest.raises(BadRequest, match="Message is too long"):
            await bot.send_message(alice.id, text)
    with pytest.raises(BadRequest, match="Message is too long"):
        await bot.send_message(alice.id, f"<i>{'a' * 4096}</i>!", parse_mode="HTML")


async def test_injected_429_becomes_retry_after(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    sent = await bot.send_message(alice.id, "v1")
    emu.inject_error(method="editMessageText", chat_id=alice.id, code=429, retry_after=3)
    with pytest.raises(RetryAfter) as caught:
        await bot.edit_message_text("v2", alice.id, sent.message_id)
    assert _seconds(caught.value.retry_after) == 3
    await bot.edit_message_text("v2", alice.id, sent.message_id)  # times=1: used up

    emu.inject_error("sendMessage", code=403, description="Forbidden: user is deactivated")
    with pytest.raises(Forbidden, match="user is deactivated"):
        await bot.send_message(alice.id, "x")
    failed = emu.calls_to("editMessageText", alice, ok=False)
    assert [c.error_code for c in failed] == [429]


async def test_strict_rate_limits(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    group = emu.add_group("Hokm club", members=[alice])
    emu.enforce_limits(per_group_per_minute=3, per_second=30)
    for i in range(3):
        await bot.send_message(group.id, f"m{i}")
    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(group.id, "one too many")
    assert 1 <= _seconds(caught.value.retry_after) <= 60
    await bot.send_message(alice.id, "private chats are not limited per minute")
    assert emu.rate_violations == 1
    assert emu.rate_violation_log[0].kind == "group"


# ------------------------------------------------------------------ updates


async def test_long_polling_returns_as_soon_as_an_update_arrives(
    emu: BotApiEmulator, bot: Bot
) -> None:
    alice = emu.add_user("Alice")
    poll = asyncio.create_task(bot.get_updates(timeout=120, read_timeout=180))
    await asyncio.sleep(0.1)
    assert not poll.done()
    started = time.monotonic()
    await emu.send_message(alice, alice, "/start")
    updates = await poll
    # Woken by the update, not by its 120 s timeout (a wide margin for a busy machine).
    assert time.monotonic() - started < 60
    assert [u.message.text for u in updates if u.message] == ["/start"]
    first = updates[0].message
    assert first is not None and first.entities[0].type == "bot_command"

    # Not confirmed yet: fetched again; then confirmed by the offset.
    assert len(await bot.get_updates()) == 1
    assert await bot.get_updates(offset=updates[-1].update_id + 1) == ()
    assert emu.pending_updates == 0

    started = time.monotonic()
    assert await bot.get_updates(timeout=dtm.timedelta(seconds=0.3)) == ()
    assert time.monotonic() - started >= 0.25


async def test_allowed_updates_filter(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    await bot.get_updates(allowed_updates=["callback_query"])
    await emu.send_message(alice, alice, "ignored")
    sent = await bot.send_message(alice.id, "pick", reply_markup=_keyboard(("A", "a")))
    await emu.press(alice, alice, sent.message_id, "a")
    updates = await bot.get_updates()
    assert [u.callback_query.data for u in updates if u.callback_query] == ["a"]
    assert len(updates) == 1

    query_id = updates[0].callback_query.id if updates[0].callback_query else ""
    await bot.answer_callback_query(query_id, "seen")
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query(query_id, "twice")
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query("12345")


async def test_inline_query_round_trip(emu: BotApiEmulator) -> None:
    alice = emu.add_user("Alice")
    group = emu.add_group("Hokm club", members=[alice])
    chosen: list[str] = []

    async def inline(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.inline_query is not None
        await update.inline_query.answer(
            [
                InlineQueryResultArticle(
                    id="invite",
                    title=f"Invite ({update.inline_query.chat_type})",
                    input_message_content=InputTextMessageContent(
                        "<b>Join</b> my table", parse_mode="HTML"
                    ),
                    reply_markup=_keyboard(("Join", "join")),
                )
            ],
            cache_time=0,
        )

    async def on_chosen(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.chosen_inline_result is not None
        chosen.append(update.chosen_inline_result.inline_message_id or "")

    async def join(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.inline_message_id
        await query.answer()
        await query.edit_message_text(f"{query.from_user.first_name} joined")

    app = _app(emu)
    app.add_handler(InlineQueryHandler(inline))
    app.add_handler(ChosenInlineResultHandler(on_chosen))
    app.add_handler(CallbackQueryHandler(join))
    await _run(app)
    try:
        results = await emu.inline_query(alice, group, query="")
        assert [r["title"] for r in results] == ["Invite (supergroup)"]
        posted = await emu.choose_inline_result(alice, group, results[0])
        assert posted.via_bot and posted.sender is alice and posted.text == "Join my table"
        await emu.press_button(alice, group, posted.message_id, "Join")
        await emu.settle()
    finally:
        await _shutdown(app)
    assert chosen == [posted.inline_message_id]
    assert posted.text == "Alice joined"


async def test_switch_inline_button(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.add_user("Alice", started=True)
    button = InlineKeyboardButton("Search", switch_inline_query_current_chat="tables")
    sent = await bot.send_message(alice.id, "x", reply_markup=InlineKeyboardMarkup([[button]]))
    search = asyncio.create_task(emu.press_switch_inline(alice, alice, sent.message_id, "Search"))
    updates = await bot.get_updates(timeout=2)
    query = updates[0].inline_query
    assert query is not None and (query.query, query.chat_type) == ("tables", "sender")
    await bot.answer_inline_query(query.id, [], cache_time=0)
    assert list(await search) == []
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_inline_query(query.id, [])


async def test_settle_waits_for_the_bot(emu: BotApiEmulator) -> None:
    alice = emu.add_user("Alice")

    async def slow(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await asyncio.sleep(0.05)
        await update.effective_message.reply_text("first")
        await asyncio.sleep(0.05)
        await update.effective_message.reply_text("second")

    with pytest.raises(SettleTimeout, match="never fetched"):
        await emu.send_message(alice, alice, "/slow")
        await emu.settle(quiet=0.05, timeout=0.2)  # no bot is polling yet

    app = _app(emu)
    app.add_handler(CommandHandler("slow", slow))
    await _run(app)
    try:
        # Unwatched, only the quiet period covers the handler's pauses: a wide one,
        # as a busy machine stretches them.
        await emu.settle(quiet=2.0)
        assert [m.text for m in emu.chat_log(alice) if m.from_bot] == ["first", "second"]
        user_message = emu.last_message(alice, from_bot=False)
        assert user_message is not None and user_message.text == "/slow"

        # Watching the application, a short quiet period is enough: the handler's
        # silent work counts as busy.
        emu.watch(app)
        await emu.send_message(alice, alice, "/slow")
        await emu.settle(quiet=0.02)
        assert [m.text for m in emu.chat_log(alice) if m.from_bot][2:] == ["first", "second"]
    finally:
        await _shutdown(app)


async def test_chat_members_and_commands(emu: BotApiEmulator, bot: Bot) -> None:
    alice, bob, carol = emu.add_user("Alice"), emu.add_user("Bob"), emu.add_user("Carol")
    group = emu.add_group("Hokm club", members=[bob], admins=[alice], bot_admin=True)
    statuses = {
        u.first_name: (await bot.get_chat_member(group.id, u.id)).status
        for u in (alice, bob, carol)
    }
    assert statuses == {"Alice": "creator", "Bob": "member", "Carol": "left"}
    admins = await bot.get_chat_administrators(group.id)
    assert {a.user.id for a in admins} == {alice.id, emu.bot_id}
    chat = await bot.get_chat(group.id)
    assert (chat.title, chat.type) == ("Hokm club", "supergroup")
    await bot.send_chat_action(group.id, "typing")
    sent = await bot.send_message(group.id, "pin me")
    await bot.pin_chat_message(group.id, sent.message_id)
    assert emu.message(group, sent.message_id).pinned
    reply = await bot.send_message(group.id, "re", reply_to_message_id=sent.message_id)
    assert reply.reply_to_message is not None
    assert reply.reply_to_message.message_id == sent.message_id
    with pytest.raises(BadRequest, match="Message to be replied not found"):
        await bot.send_message(group.id, "re", reply_to_message_id=999)

    await bot.set_my_commands([("new", "New game"), ("help", "Help")], language_code="fa")
    assert [c.command for c in await bot.get_my_commands(language_code="fa")] == ["new", "help"]
    assert await bot.get_my_commands() == ()
    assert emu.commands(language_code="fa")[0]["description"] == "New game"
    await bot.leave_chat(group.id)
    with pytest.raises(Forbidden, match="bot is not a member"):
        await bot.send_message(group.id, "bye")


async def test_webhook_delivery(emu: BotApiEmulator, bot: Bot) -> None:
    from aiohttp import web

    received: list[dict[str, object]] = []

    async def hook(request: web.Request) -> web.Response:
        assert request.headers["X-Telegram-Bot-Api-Secret-Token"] == "s3cret"
        received.append(await request.json())
        return web.Response()

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        await bot.set_webhook(f"http://127.0.0.1:{port}/hook", secret_token="s3cret")
        with pytest.raises(Exception, match="webhook is active"):
            await bot.get_updates()
        alice = emu.add_user("Alice")
        await emu.send_message(alice, alice, "/start")
        await emu.settle(quiet=0.05)
        assert [u["message"]["text"] for u in received] == ["/start"]  # type: ignore[index]
        info = await bot.get_webhook_info()
        assert info.pending_update_count == 0 and info.url.endswith("/hook")
        await bot.delete_webhook()
    finally:
        await runner.cleanup()


async def test_edits_stickers_and_members_reach_the_bot(emu: BotApiEmulator, bot: Bot) -> None:
    alice, bob = emu.add_user("Alice", started=True), emu.add_user("Bob")
    group = emu.add_group("Club", members=[alice], admins=[alice])
    await bot.get_updates(allowed_updates=list(Update.ALL_TYPES))
    said = await emu.send_message(alice, alice, "hello")
    await emu.edit_message(alice, alice, said.message_id, "hello again")
    await emu.send_sticker(alice, alice, "🃏")
    await emu.send_sticker(alice, group)  # privacy mode: the bot does not see it
    await emu.join_chat(bob, group)
    await emu.leave_chat(bob, group)
    updates = await bot.get_updates()
    assert updates[1].edited_message is not None
    assert updates[1].edited_message.text == "hello again"
    assert updates[2].message.sticker is not None and updates[2].message.sticker.emoji == "🃏"
    joined, member_joined, left, member_left = updates[3:]
    assert [u.id for u in joined.message.new_chat_members] == [bob.id]
    assert member_joined.chat_member.new_chat_member.status == "member"
    assert left.message.left_chat_member.id == bob.id
    assert member_left.chat_member.old_chat_member.status == "member"
    assert member_left.chat_member.new_chat_member.status == "left"
    assert len(updates) == 7 and not group.is_member(bob)
    with pytest.raises(SimulationError):
        await emu.edit_message(bob, alice, said.message_id, "not mine")
