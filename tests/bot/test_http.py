"""The two lean Bot API clients: telegram_bot.platform.http's own (``LeanRequest``, the
default) and aiohttp's (``AiohttpRequest``, HOKM_HTTP=aiohttp). Each scenario runs on
both: python-telegram-bot's calls and errors over the client, against the emulator and
against a raw server that misbehaves. Connections are counted where they are made: by
the server, or as the client makes them (``_Client.opened``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from telegram import Bot, InputFile
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter

from telegram_bot.platform.aiohttp_request import AiohttpRequest
from telegram_bot.platform.http import LeanRequest
from testkit.emulator import BotApiEmulator
from testkit.simulation import TOKEN


class _Client:
    """One client as the scenarios need it: made with a count of the connections it
    opens, and what differs between the two (their errors' texts, what their pools
    show)."""

    #: Words of the NetworkError when the server hangs up mid-call, answers garbage,
    #: or refuses the connection.
    lost: str
    garbage: str
    refused: str

    def __init__(self) -> None:
        self.opened = 0

    def make(self, **kwargs) -> BaseRequest:
        raise NotImplementedError

    def open_now(self, request) -> int | None:
        """Connections open at this moment, where the client keeps that count."""
        return None

    def waiting(self, request) -> int | None:
        """Calls waiting for a connection, where the client keeps that count."""
        return None

    def idle_alive(self, request) -> bool:
        """Whether an idle connection the client keeps is still connected."""
        raise NotImplementedError


class _Lean(_Client):
    lost, garbage, refused = "disconnected", "Bad response", "Could not connect"

    def make(self, **kwargs) -> LeanRequest:
        request = LeanRequest(**kwargs)
        connect = request._connect

        async def counted(*args, **kw):
            conn = await connect(*args, **kw)
            self.opened += 1
            return conn

        request._connect = counted  # type: ignore[method-assign]
        return request

    def open_now(self, request) -> int | None:
        return request._open

    def waiting(self, request) -> int | None:
        return len(request._waiting)

    def idle_alive(self, request) -> bool:
        return any(not c.closed for o in request._origins.values() for c in o.idle)


class _Aiohttp(_Client):
    lost, garbage, refused = "ServerDisconnected", "aiohttp", "Cannot connect"

    def make(self, **kwargs) -> AiohttpRequest:
        trace = aiohttp.TraceConfig()

        async def opened(session, ctx, params) -> None:
            self.opened += 1

        trace.on_connection_create_end.append(opened)
        return AiohttpRequest(aiohttp_kwargs={"trace_configs": [trace]}, **kwargs)

    def idle_alive(self, request) -> bool:
        # aiohttp keeps its idle connections in the connector (private state, read only).
        connector = request._session.connector
        return any(p.is_connected() for conns in connector._conns.values() for p, _ in conns)


@pytest.fixture(params=[_Lean, _Aiohttp], ids=["lean", "aiohttp"])
def client(request: pytest.FixtureRequest) -> _Client:
    return request.param()


# ------------------------------------------------------------------ with the emulator


@contextlib.asynccontextmanager
async def _bot(emu: BotApiEmulator, client: _Client, **kwargs) -> AsyncIterator[Bot]:
    request = client.make(**kwargs)
    bot = Bot(TOKEN, base_url=emu.base_url, base_file_url=emu.base_file_url, request=request)
    async with bot:
        yield bot


async def test_calls_and_their_errors_through_the_emulator(client: _Client) -> None:
    async with BotApiEmulator(token=TOKEN, bot_username="HttpBot") as emu:
        user = emu.add_user("Ann")
        group = emu.add_group("Lean", members=[user])
        async with _bot(emu, client, connection_pool_size=4) as bot:
            request = bot.request
            assert (await bot.get_me()).username == "HttpBot"
            text = "سلام & a+b=c? 100% ;/"
            message = await bot.send_message(group.id, text)
            assert emu.message(group, message.message_id).text == text
            edited = await bot.edit_message_text("edited", group.id, message.message_id)
            assert edited.text == "edited"
            # Sequential calls use one kept-alive connection.
            assert client.opened == 1
            assert client.open_now(request) in (None, 1)

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
            assert client.opened == 1
            assert client.open_now(request) in (None, 1)
        # Shut down and started again (as python-telegram-bot may): a fresh pool.
        assert client.open_now(request) in (None, 0)
        with pytest.raises(NetworkError, match="not initialized"):
            await bot.get_me()
        await request.initialize()
        try:
            assert (await bot.get_me()).username == "HttpBot"
            assert client.opened == 2
            assert client.open_now(request) in (None, 1)
        finally:
            await request.shutdown()


async def test_concurrent_calls_share_a_bounded_pool(client: _Client) -> None:
    async with BotApiEmulator(token=TOKEN, bot_username="HttpBot") as emu:
        user = emu.add_user("Ann")
        group = emu.add_group("Lean", members=[user])
        async with _bot(emu, client, connection_pool_size=3, pool_timeout=30) as bot:
            sent = await asyncio.gather(*(bot.send_message(group.id, f"m{i}") for i in range(20)))
            assert sorted(m.text for m in sent) == sorted(f"m{i}" for i in range(20))
            assert 1 <= client.opened <= 3


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


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """(head, body) of the next request."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head, await reader.readexactly(length)


def _ok(body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


@contextlib.asynccontextmanager
async def _started(client: _Client, **kwargs) -> AsyncIterator[BaseRequest]:
    request = client.make(**kwargs)
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


async def _post(request: BaseRequest, url: str, **kwargs) -> bytes:
    return await request.post(url + "getMe", RequestData(), **kwargs)


def _data(value: str) -> RequestData:
    return RequestData([RequestParameter("text", value, None)])


async def test_chunked_and_interim_answers(client: _Client) -> None:
    async def handler(reader, writer):
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'7\r\n{"ok": \r\n'
            b"4;ext=1\r\ntrue\r\n"
        )
        await writer.drain()
        await asyncio.sleep(0.01)  # the rest in another segment
        writer.write(b'f\r\n, "result": 42}\r\n0\r\nX-Trailer: 1\r\n\r\n')
        await writer.drain()
        await _read_request(reader)
        writer.write(_ok(b'{"ok": true, "result": 43}'))
        await writer.drain()
        await reader.read()

    async with _server(handler) as (url, connections):
        async with _started(client) as request:
            assert await _post(request, url) == 42
            assert await _post(request, url) == 43  # same connection after a chunked body
            assert len(connections) == 1


async def test_the_form_sent_is_what_httpx_sends(client: _Client) -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def handler(reader, writer):
        while True:
            seen.append(await _read_request(reader))
            writer.write(_ok(b'{"ok": true, "result": 1}'))
            await writer.drain()

    async with _server(handler) as (url, _):
        async with _started(client) as request:
            await request.post(url + "sendMessage", _data("a+b=c & سلام"))
    head, body = seen[0]
    assert head.startswith(b"POST /bot") and b"/sendMessage HTTP/1.1\r\n" in head
    assert b"content-type: application/x-www-form-urlencoded" in head.lower()
    assert b"user-agent: python-telegram-bot" in head.lower()
    assert body == b"text=a%2Bb%3Dc+%26+%D8%B3%D9%84%D8%A7%D9%85"


async def test_an_upload_is_a_multipart_form(client: _Client) -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def handler(reader, writer):
        seen.append(await _read_request(reader))
        writer.write(_ok(b'{"ok": true, "result": 1}'))
        await writer.drain()
        await reader.read()

    upload = RequestData(
        [
            RequestParameter("chat_id", -100, None),
            RequestParameter("caption", "سلام", None),
            RequestParameter(
                "document",
                "attach://sheet",
                [InputFile(b"hokm score sheet", filename="score.txt", attach=True)],
            ),
        ]
    )
    assert upload.contains_files
    async with _server(handler) as (url, _):
        async with _started(client) as request:
            assert await request.post(url + "sendDocument", upload) == 1
    head, body = seen[0]
    assert b"content-type: multipart/form-data; boundary=" in head.lower()
    assert b'name="chat_id"\r\n' in body and b"\r\n\r\n-100\r\n" in body
    assert "سلام".encode() in body
    assert b'filename="score.txt"' in body and b"\r\n\r\nhokm score sheet\r\n" in body


async def test_a_connection_closed_while_idle_is_replaced(client: _Client) -> None:
    closed: list[asyncio.StreamWriter] = []

    async def handler(reader, writer):
        await _read_request(reader)
        writer.write(_ok(b'{"ok": true, "result": 1}'))
        await writer.drain()
        closed.append(writer)
        # ... and the server drops the idle connection (the finally in _server).

    async with _server(handler) as (url, connections):
        async with _started(client) as request:
            assert await _post(request, url) == 1
            await _until(lambda: len(closed) == 1, "the server closed it")
            # Wait (on progress) until the client has seen the close.
            await _until(lambda: not client.idle_alive(request), "the close seen")
            # The dead connection is dropped, not used: a new one serves the call.
            assert await _post(request, url) == 1
            assert len(connections) == 2
            assert client.opened == 2
            assert client.open_now(request) in (None, 1)


async def test_connection_close_is_not_reused(client: _Client) -> None:
    async def handler(reader, writer):
        await _read_request(reader)
        writer.write(_ok(b'{"ok": true, "result": 1}', "Connection: close\r\n"))
        await writer.drain()
        await reader.read()

    async with _server(handler) as (url, connections):
        async with _started(client) as request:
            assert await _post(request, url) == 1
            assert await _post(request, url) == 1
            assert len(connections) == 2


async def test_read_timeout_and_a_late_answer_is_not_taken_for_the_next(client: _Client) -> None:
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
        async with _started(client) as request:
            with pytest.raises(TimedOut):
                await _post(request, url, read_timeout=0.1)
            gave_up.set()
            await late_sent.wait()
            assert await _post(request, url) == 2  # not the late answer to call 1
            assert len(connections) == 2
            assert client.open_now(request) in (None, 1)


async def test_lost_mid_call_and_garbage_are_network_errors(client: _Client) -> None:
    async def handler(reader, writer):
        _, body = await _read_request(reader)
        if b"garbage" in body:
            writer.write(b"SPDY/9 what\r\n\r\n")
            await writer.drain()
            await reader.read()
        # else: hang up without answering

    async with _server(handler) as (url, connections):
        async with _started(client) as request:
            with pytest.raises(NetworkError, match=client.lost) as lost:
                await _post(request, url)
            assert not isinstance(lost.value, TimedOut)
            with pytest.raises(NetworkError, match=client.garbage) as bad:
                await request.post(url + "getMe", _data("garbage"))
            assert not isinstance(bad.value, TimedOut)
            with pytest.raises(NetworkError):  # and the next call is a new connection
                await _post(request, url)
            assert len(connections) == 3
            assert client.open_now(request) in (None, 0)


async def test_pool_timeout_and_refused_connections(client: _Client) -> None:
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

    async with _server(handler) as (url, connections):
        async with _started(client, connection_pool_size=1) as request:
            first = asyncio.create_task(_post(request, url))
            await _until(lambda: received == 1, "the first call holds the only connection")
            with pytest.raises(TimedOut, match="Pool timeout"):
                await _post(request, url, pool_timeout=0.05)
            # A long pool time-out: only the release below should end its wait.
            waiting = asyncio.create_task(_post(request, url, pool_timeout=120))
            for _ in range(20):
                await asyncio.sleep(0)  # let it run as far as it can
            assert not waiting.done() and received == 1  # it waits; nothing sent
            assert client.waiting(request) in (None, 1)
            release.set()
            assert await first == 1
            assert await waiting == 1  # got the connection when it came back
            assert received == 2 and len(connections) == 1
            assert client.open_now(request) in (None, 1)

    async with _started(client) as refused:
        with pytest.raises(NetworkError, match=client.refused) as error:
            await _post(refused, url)
        assert not isinstance(error.value, TimedOut)
        assert client.open_now(refused) in (None, 0)


async def test_connect_timeout_is_timed_out(client: _Client) -> None:
    # A listening socket whose backlog is full does not complete new handshakes.
    import socket

    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        fillers = []
        try:
            for _ in range(8):  # fill the accept queue (never accepted)
                s = socket.socket()
                s.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    s.connect(("127.0.0.1", port))
                fillers.append(s)
            async with _started(client) as request:
                url = f"http://127.0.0.1:{port}/bot{TOKEN}/"
                try:
                    await _post(request, url, connect_timeout=0.2)
                except TimedOut:
                    pass
                else:  # pragma: no cover - a kernel that completes them anyway
                    pytest.skip("this kernel completes handshakes beyond the backlog")
        finally:
            for s in fillers:
                s.close()


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


def test_hokm_http_aiohttp_picks_it(monkeypatch) -> None:
    from telegram_bot.platform.http import _PROXY_VARS, make_request
    from telegram_bot.runtime.app import build_application
    from telegram_bot.runtime.config import Settings

    for var in _PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    assert Settings.from_env({"HOKM_HTTP": "aiohttp"}).http == "aiohttp"
    url = "sqlite+aiosqlite:///unused.sqlite3"
    bot = build_application(Settings(token="1:A", database_url=url, http="aiohttp")).bot
    assert isinstance(bot.request, AiohttpRequest)
    assert isinstance(bot._request[0], AiohttpRequest)  # long polling
    updates = make_request("aiohttp", updates=True)
    assert updates.parse_json_payload(b'{"ok": true, "result": []}') == {"ok": True, "result": []}
    with pytest.raises(ValueError, match="unknown HTTP transport"):
        make_request("curl")
