"""The lean Bot API client (telegram_bot.platform.http): python-telegram-bot's calls and
errors over it, against the emulator and against a raw server that misbehaves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut
from telegram.request import RequestData

from telegram_bot.platform.http import LeanRequest
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN

# ------------------------------------------------------------------ with the emulator


@contextlib.asynccontextmanager
async def _bot(emu: BotApiEmulator, **kwargs) -> AsyncIterator[tuple[Bot, LeanRequest]]:
    request = LeanRequest(**kwargs)
    bot = Bot(TOKEN, base_url=emu.base_url, base_file_url=emu.base_file_url, request=request)
    async with bot:
        yield bot, request


async def test_calls_and_their_errors_through_the_emulator() -> None:
    async with BotApiEmulator(token=TOKEN, bot_username="HttpBot") as emu:
        user = emu.add_user("Ann")
        group = emu.add_group("Lean", members=[user])
        async with _bot(emu, connection_pool_size=4) as (bot, request):
            assert (await bot.get_me()).username == "HttpBot"
            text = "سلام & a+b=c? 100% ;/"
            message = await bot.send_message(group.id, text)
            assert emu.message(group, message.message_id).text == text
            edited = await bot.edit_message_text("edited", group.id, message.message_id)
            assert edited.text == "edited"
            # Sequential calls use one kept-alive connection.
            assert request._open == 1

            emu.inject_error("sendMessage", code=429, retry_after=7)
            with pytest.raises(RetryAfter) as flood:
                await bot.send_message(group.id, "flood")
            wait = flood.value.retry_after
            assert (wait.total_seconds() if hasattr(wait, "total_seconds") else wait) == 7
            emu.inject_error("sendMessage", code=403)
            with pytest.raises(Forbidden):
                await bot.send_message(group.id, "blocked")
            with pytest.raises(BadRequest, match="not modified"):
                await bot.edit_message_text("edited", group.id, message.message_id)
            # Errors leave the connection usable.
            assert (await bot.send_message(group.id, "after")).text == "after"
            assert request._open == 1
        # Shut down and started again (as python-telegram-bot may): a fresh pool.
        await request.shutdown()
        assert request._open == 0
        await request.initialize()
        try:
            assert (await bot.get_me()).username == "HttpBot"
            assert request._open == 1
        finally:
            await request.shutdown()


async def test_concurrent_calls_share_a_bounded_pool() -> None:
    async with BotApiEmulator(token=TOKEN, bot_username="HttpBot") as emu:
        user = emu.add_user("Ann")
        group = emu.add_group("Lean", members=[user])
        async with _bot(emu, connection_pool_size=3, pool_timeout=30) as (bot, request):
            sent = await asyncio.gather(*(bot.send_message(group.id, f"m{i}") for i in range(20)))
            assert sorted(m.text for m in sent) == sorted(f"m{i}" for i in range(20))
            assert request._open <= 3


# ------------------------------------------------------------------ with a raw server

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def _server(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A server on loopback running ``handler`` per connection; yields its URL and a
    list that counts connections."""
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/bot{TOKEN}/", connections
    finally:
        server.close()


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return await reader.readexactly(length)


def _ok(body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


@contextlib.asynccontextmanager
async def _lean(**kwargs) -> AsyncIterator[LeanRequest]:
    request = LeanRequest(**kwargs)
    await request.initialize()
    try:
        yield request
    finally:
        await request.shutdown()


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait (on progress, not a clock) until ``condition()``; the bound only turns a
    hang into a failure, as the end-to-end tests' settle() does."""
    give_up = asyncio.get_running_loop().time() + 120
    while not condition():
        assert asyncio.get_running_loop().time() < give_up, f"never: {what}"
        await asyncio.sleep(0.001)


async def _post(request: LeanRequest, url: str, **kwargs) -> bytes:
    return await request.post(url + "getMe", RequestData(), **kwargs)


async def test_chunked_and_interim_answers() -> None:
    async def handler(reader, writer):
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'7\r\n{"ok": \r\n'
            b"4;ext=1\r\ntrue\r\n"
        )
        await writer.drain()
        await asyncio.sleep(0.01)
        writer.write(b'f\r\n, "result": 42}\r\n0\r\nX-Trailer: 1\r\n\r\n')
        await writer.drain()
        await _read_request(reader)
        writer.write(_ok(b'{"ok": true, "result": 43}'))
        await writer.drain()
        await reader.read()

    async with _server(handler) as (url, connections):
        async with _lean() as request:
            assert await _post(request, url) == 42
            assert await _post(request, url) == 43  # same connection after a chunked body
            assert len(connections) == 1


async def test_a_connection_closed_while_idle_is_replaced() -> None:
    async def handler(reader, writer):
        await _read_request(reader)
        writer.write(_ok(b'{"ok": true, "result": 1}'))
        await writer.drain()
        # ... and the server drops the idle connection.

    async with _server(handler) as (url, connections):
        async with _lean() as request:
            assert await _post(request, url) == 1
            # Wait (on progress, not a clock) until the client has seen the close.
            idle = [c for o in request._origins.values() for c in o.idle]
            assert idle
            await _until(lambda: all(c.closed for c in idle), "the close seen")
            assert await _post(request, url) == 1
            assert len(connections) == 2
            assert request._open == 1


async def test_connection_close_is_not_reused() -> None:
    async def handler(reader, writer):
        await _read_request(reader)
        writer.write(_ok(b'{"ok": true, "result": 1}', "Connection: close\r\n"))
        await writer.drain()
        await reader.read()

    async with _server(handler) as (url, connections):
        async with _lean() as request:
            assert await _post(request, url) == 1
            assert await _post(request, url) == 1
            assert len(connections) == 2


async def test_read_timeout_and_a_late_answer_is_not_taken_for_the_next() -> None:
    calls = 0
    gave_up, late_sent = asyncio.Event(), asyncio.Event()

    async def handler(reader, writer):
        nonlocal calls
        while True:
            await _read_request(reader)
            calls += 1
            n = calls
            if n == 1:
                await gave_up.wait()  # answers after the client gave up
            writer.write(_ok(f'{{"ok": true, "result": {n}}}'.encode()))
            if n == 1:
                late_sent.set()
            await writer.drain()

    async with _server(handler) as (url, connections):
        async with _lean() as request:
            with pytest.raises(TimedOut):
                await _post(request, url, read_timeout=0.1)
            gave_up.set()
            await late_sent.wait()
            assert await _post(request, url) == 2  # not the late answer to call 1
            assert len(connections) == 2
            assert request._open == 1


async def test_lost_mid_call_and_garbage_are_network_errors() -> None:
    async def handler(reader, writer):
        body = await _read_request(reader)
        if b"garbage" in body:
            writer.write(b"SPDY/9 what\r\n\r\n")
            await writer.drain()
            await reader.read()
        # else: hang up without answering

    async with _server(handler) as (url, _):
        async with _lean() as request:
            with pytest.raises(NetworkError, match="disconnected"):
                await _post(request, url)
            with pytest.raises(NetworkError, match="Bad response"):
                await request.post(url + "getMe", _data("garbage"))
            assert request._open == 0


def _data(value: str) -> RequestData:
    from telegram.request._requestparameter import RequestParameter

    return RequestData([RequestParameter("text", value, None)])


async def test_pool_timeout_and_refused_connections() -> None:
    release = asyncio.Event()
    received = 0

    async def handler(reader, writer):
        nonlocal received
        while True:
            await _read_request(reader)
            received += 1
            await release.wait()
            writer.write(_ok(b'{"ok": true, "result": 1}'))
            await writer.drain()

    async with _server(handler) as (url, _):
        async with _lean(connection_pool_size=1) as request:
            first = asyncio.create_task(_post(request, url))
            await _until(lambda: received == 1, "the first call holds the only connection")
            with pytest.raises(TimedOut, match="Pool timeout"):
                await _post(request, url, pool_timeout=0.05)
            # A long pool time-out: only the release below should end its wait.
            waiting = asyncio.create_task(_post(request, url, pool_timeout=120))
            await _until(lambda: len(request._waiting) == 1, "the second call waits")
            release.set()
            assert await first == 1
            assert await waiting == 1  # got the connection when it came back
            assert request._open == 1

    async with _lean() as refused:
        with pytest.raises(NetworkError, match="Could not connect"):
            await _post(refused, url)
        assert refused._open == 0


# ------------------------------------------------------------------ choosing it


def test_the_client_is_chosen_by_configuration(monkeypatch) -> None:
    from telegram.request import HTTPXRequest

    from telegram_bot.platform.http import _PROXY_VARS
    from telegram_bot.runtime.app import build_application
    from telegram_bot.runtime.config import Settings

    for var in _PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    url = "sqlite+aiosqlite:///unused.sqlite3"
    assert Settings.from_env({"HOKM_HTTP": "httpx"}).http == "httpx"
    assert Settings.from_env({}).http == "lean"
    lean = build_application(Settings(token="1:A", database_url=url)).bot
    assert isinstance(lean.request, LeanRequest)
    assert isinstance(lean._request[0], LeanRequest)  # long polling
    httpx = build_application(Settings(token="1:A", database_url=url, http="httpx")).bot
    assert isinstance(httpx.request, HTTPXRequest)
    assert isinstance(httpx._request[0], HTTPXRequest)
    # httpx reads the proxy settings: with one, the lean client is not used.
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    proxied = build_application(Settings(token="1:A", database_url=url)).bot
    assert isinstance(proxied.request, HTTPXRequest)


def test_updates_lose_only_the_pressed_messages_keyboard_and_entities() -> None:
    from telegram_bot.platform.http import lighten_updates, make_request

    message = {
        "message_id": 5,
        "chat": {"id": 1, "type": "private"},
        "date": 0,
        "text": "Your turn",
        "entities": [{"type": "bold", "offset": 0, "length": 4}],
        "reply_markup": {"inline_keyboard": [[{"text": "A♠", "callback_data": "p:x:1:AS"}]]},
    }
    sent = {**message, "message_id": 6}
    data = {
        "ok": True,
        "result": [
            {"update_id": 1, "callback_query": {"id": "q", "data": "d", "message": message}},
            {"update_id": 2, "message": sent},
        ],
    }
    lightened = lighten_updates(data)
    pressed = lightened["result"][0]["callback_query"]["message"]
    assert "reply_markup" not in pressed and "entities" not in pressed
    assert pressed["text"] == "Your turn" and pressed["chat"] == {"id": 1, "type": "private"}
    assert "reply_markup" in lightened["result"][1]["message"]  # other updates as they are
    assert lighten_updates({"ok": True, "result": True}) == {"ok": True, "result": True}
    request = make_request("lean", updates=True)
    assert request.parse_json_payload(b'{"ok": true, "result": []}') == {"ok": True, "result": []}
