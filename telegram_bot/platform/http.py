"""A lean HTTP/1.1 client for the Bot API: python-telegram-bot's ``BaseRequest`` on
asyncio's own transports.

python-telegram-bot's default, ``HTTPXRequest``, goes through httpx, httpcore, h11
and anyio for each call: request and response objects, header validation, a timeout
scope per read and write, and a walk of the pool with a ``poll()`` of every idle
socket. On a busy bot that was half the CPU of a play, many times the work of the
call itself. Here a call is one ``write`` of a request built as bytes and a response
parsed in ``data_received`` (status line, ``Content-Length`` or chunked body) on a
kept-alive connection:

- connections per origin, at most ``connection_pool_size`` at once; a caller waits
  ``pool_timeout`` for one, then gets ``TimedOut`` (as with httpx's pool timeout);
- ``connect_timeout``, ``write_timeout`` (only when the socket's buffer is full) and
  ``read_timeout`` (the whole answer) raise ``TimedOut``; a timed-out connection is
  closed, never reused;
- a connection closed by the server while idle leaves the pool when asyncio sees it
  close (no polling); one lost mid-call raises ``NetworkError``, like httpx. The
  status codes (429 and its ``retry_after``, 400, 403, ...) are mapped to
  python-telegram-bot's exceptions by ``BaseRequest`` itself, as for every transport;
- the body is the same form-encoded parameters httpx sends; a call that uploads
  files, and every call when a proxy is configured (``HTTPS_PROXY``, ``ALL_PROXY``,
  ...), goes through an ``HTTPXRequest`` kept for that.

``HOKM_HTTP=httpx`` makes the bot use ``HTTPXRequest`` for everything;
``HOKM_HTTP=aiohttp`` the client on aiohttp (:mod:`telegram_bot.platform.aiohttp_request`),
which costs about a fifth more CPU per play (docs/http-client.md).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import ssl
from typing import Any
from urllib.parse import urlencode, urlsplit

from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, HTTPXRequest, RequestData

from telegram_bot.platform.aiohttp_request import AiohttpRequest

__all__ = ["LeanRequest", "make_request", "proxy_configured"]

_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy")
#: Where a response's head ends, and what a chunked body ends with.
_HEAD_END = b"\r\n\r\n"
#: Bytes read from the socket at a time, into each connection's own buffer.
_READ_SIZE = 16384


def proxy_configured(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return any(env.get(v) for v in _PROXY_VARS)


class _Answer(Exception):
    """Internal: how a call ended, when not with a response."""


class _Connection(asyncio.BufferedProtocol):
    """One kept-alive HTTP/1.1 connection; one call at a time.

    A buffered protocol: the transport reads into this connection's own buffer. With
    ``data_received``, asyncio allocates 256 KiB for every read and shrinks it to what
    came; in glibc's heap those blocks, and the small objects placed in the space they
    gave back, made the bot's RSS grow with the calls made (the heap's free space
    growing, Python's own allocations flat: issue 14, ``tests/bot/test_memory.py``)."""

    __slots__ = (
        "_body_left",
        "_buffer",
        "_chunked",
        "_drained",
        "_head",
        "_keep_alive",
        "_read",
        "_status",
        "_waiter",
        "closed",
        "transport",
    )

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._buffer = bytearray()
        self._head = True
        self._status = 0
        self._body_left: int | None = None  # None: until the connection closes
        self._chunked = False
        self._keep_alive = True
        self._read = memoryview(bytearray(_READ_SIZE))

    # ---------------------------------------------------------------- asyncio

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            if not self._head and self._body_left is None and not self._chunked:
                # A body delimited by the end of the connection.
                waiter.set_result((self._status, bytes(self._buffer)))
            else:
                waiter.set_exception(
                    NetworkError(
                        "Server disconnected without sending a response"
                        + (f": {exc}" if exc else "")
                    )
                )
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)  # the writer learns of it from the waiter

    def pause_writing(self) -> None:
        if self._drained is None or self._drained.done():
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._read[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            # Nothing was asked: the connection is out of step; never reuse it.
            self.close()
            return
        self._buffer += data
        try:
            self._parse(waiter)
        except _Answer as exc:
            waiter.set_exception(NetworkError(f"Bad response from the server: {exc}"))
            self.close()

    def eof_received(self) -> bool | None:
        return None  # close the transport (connection_lost follows)

    # ---------------------------------------------------------------- parsing

    def _parse(self, waiter: asyncio.Future[tuple[int, bytes]]) -> None:
        buf = self._buffer
        if self._head:
            end = buf.find(_HEAD_END)
            if end < 0:
                if len(buf) > 65536:
                    raise _Answer("response head too long")
                return
            head = bytes(buf[:end]).decode("latin-1")
            del buf[: end + 4]
            lines = head.split("\r\n")
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
                raise _Answer(f"bad status line {lines[0]!r}")
            try:
                self._status = int(parts[1])
            except ValueError:
                raise _Answer(f"bad status line {lines[0]!r}") from None
            if 100 <= self._status < 200:
                return self._parse(waiter) if buf else None  # an interim answer
            self._keep_alive = parts[0] == "HTTP/1.1"
            self._body_left = None
            self._chunked = False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    try:
                        self._body_left = int(value.strip())
                    except ValueError:
                        raise _Answer(f"bad Content-Length {value!r}") from None
                elif name == "transfer-encoding":
                    self._chunked = "chunked" in value.lower()
                elif name == "connection":
                    token = value.strip().lower()
                    if token == "close":
                        self._keep_alive = False
                    elif token == "keep-alive":
                        self._keep_alive = True
            if self._chunked:
                self._body_left = None
            elif self._body_left is None:
                self._keep_alive = False  # the body ends with the connection
            self._head = False
        if self._chunked:
            body = _dechunk(buf)
            if body is None:
                return
            self._finish(waiter, body)
        elif self._body_left is not None and len(buf) >= self._body_left:
            if len(buf) > self._body_left:
                self._keep_alive = False  # more than was announced: out of step
            self._finish(waiter, bytes(buf[: self._body_left]))

    def _finish(self, waiter: asyncio.Future[tuple[int, bytes]], body: bytes) -> None:
        self._buffer = bytearray()
        self._head = True
        waiter.set_result((self._status, body))
        if not self._keep_alive:
            self.close()

    # ---------------------------------------------------------------- calling

    def reusable(self) -> bool:
        return not self.closed and self._keep_alive and self.transport is not None

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def call(
        self, request: bytes, write_timeout: float | None, read_timeout: float | None
    ) -> tuple[int, bytes]:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        self._waiter = waiter
        self._buffer = bytearray()
        self._head = True
        self.transport.write(request)
        if self._drained is not None and not self._drained.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._drained), write_timeout)
            except TimeoutError:
                self.close()
                raise TimedOut("Timed out writing the request") from None
        timer = (
            loop.call_later(read_timeout, _time_out, waiter) if read_timeout is not None else None
        )
        try:
            return await waiter
        except BaseException:
            # Timed out, cancelled or lost: whatever comes next is not for a new call.
            self.close()
            raise
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _time_out(waiter: asyncio.Future[tuple[int, bytes]]) -> None:
    if not waiter.done():
        waiter.set_exception(TimedOut("Timed out waiting for the response"))


def _dechunk(buf: bytearray) -> bytes | None:
    """The whole body of a chunked response in ``buf``, or None if it is not all there."""
    body = bytearray()
    pos = 0
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        size_text = bytes(buf[pos:eol]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _Answer(f"bad chunk size {size_text!r}") from None
        start = eol + 2
        if size == 0:
            # Trailers (ignored) up to an empty line.
            end = buf.find(b"\r\n", start)
            while end >= 0 and end != start:
                start = end + 2
                end = buf.find(b"\r\n", start)
            if end < 0:
                return None
            del buf[: end + 2]
            return bytes(body)
        if len(buf) < start + size + 2:
            return None
        body += buf[start : start + size]
        pos = start + size + 2


class _Origin:
    """The connections to one scheme://host:port."""

    def __init__(self, scheme: str, host: str, port: int) -> None:
        self.scheme, self.host, self.port = scheme, host, port
        self.host_header = host if port == (443 if scheme == "https" else 80) else f"{host}:{port}"
        self.idle: list[_Connection] = []


class LeanRequest(BaseRequest):
    """See the module's documentation. The parameters mean what they mean for
    :class:`telegram.request.HTTPXRequest`."""

    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
    ) -> None:
        self._size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._origins: dict[str, _Origin] = {}
        self._open = 0  # connections open or opening
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._ssl: ssl.SSLContext | None = None
        self._closed = True
        # Uploads (multipart) go through httpx.
        self._fallback = HTTPXRequest(
            connection_pool_size=4,
            read_timeout=read_timeout,
            write_timeout=write_timeout,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            media_write_timeout=media_write_timeout,
        )
        self._headers_tail = (
            f"User-Agent: {self.USER_AGENT}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            "Content-Length: "
        )

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._closed = False
        await self._fallback.initialize()

    async def shutdown(self) -> None:
        self._closed = True
        for origin in self._origins.values():
            for conn in origin.idle:
                conn.close()
            self._open -= len(origin.idle)  # (those in use are counted out when released)
            origin.idle.clear()
        self._origins.clear()
        await self._fallback.shutdown()

    # ---------------------------------------------------------------- pool

    def _origin(self, url: str) -> tuple[_Origin, str]:
        parts = urlsplit(url)
        key = f"{parts.scheme}://{parts.netloc}"
        origin = self._origins.get(key)
        if origin is None:
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise NetworkError(f"Unsupported URL {url!r}")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            origin = self._origins[key] = _Origin(parts.scheme, parts.hostname, port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        return origin, target

    async def _acquire(
        self, origin: _Origin, pool_timeout: float | None, connect_timeout: float | None
    ) -> _Connection:
        """An idle connection to ``origin``, or a new one if the pool has room; else
        wait up to ``pool_timeout`` for one to come back or close."""
        loop = asyncio.get_running_loop()
        deadline = None if pool_timeout is None else loop.time() + pool_timeout
        while True:
            while origin.idle:
                conn = origin.idle.pop()
                if conn.reusable():
                    return conn
                self._open -= 1  # closed while idle
            if self._open >= self._size:
                self._close_idle_elsewhere(origin)
            if self._open < self._size:
                self._open += 1
                try:
                    return await self._connect(origin, connect_timeout)
                except BaseException:
                    self._gone()
                    raise
            turn: asyncio.Future[None] = loop.create_future()
            self._waiting.append(turn)
            try:
                timeout = None if deadline is None else max(0.0, deadline - loop.time())
                await asyncio.wait_for(turn, timeout)
            except TimeoutError:
                raise TimedOut(
                    "Pool timeout: All connections in the connection pool are occupied. "
                    "Request was *not* sent to Telegram. Consider adjusting the connection "
                    "pool size or the pool timeout."
                ) from None
            except BaseException:
                if turn.done() and not turn.cancelled():
                    self._wake()  # a turn given to a caller that left: pass it on
                raise
            finally:
                if not turn.done() or turn.cancelled():
                    with contextlib.suppress(ValueError):
                        self._waiting.remove(turn)

    def _close_idle_elsewhere(self, origin: _Origin) -> None:
        """Make room in a full pool by closing an idle connection to another origin."""
        for other in self._origins.values():
            if other is not origin and other.idle:
                other.idle.pop().close()
                self._open -= 1
                return

    async def _connect(self, origin: _Origin, connect_timeout: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        kwargs: dict[str, Any] = {}
        if origin.scheme == "https":
            kwargs = {"ssl": self._ssl_context(), "server_hostname": origin.host}
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(_Connection, origin.host, origin.port, **kwargs),
                connect_timeout,
            )
        except TimeoutError:
            raise TimedOut("Timed out connecting to the server") from None
        except OSError as exc:
            raise NetworkError(f"Could not connect to {origin.host}:{origin.port}: {exc}") from exc
        return conn

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            try:
                import certifi

                self._ssl = ssl.create_default_context(cafile=certifi.where())
            except ImportError:
                self._ssl = ssl.create_default_context()
        return self._ssl

    def _release(self, origin: _Origin, conn: _Connection) -> None:
        if conn.reusable() and not self._closed:
            origin.idle.append(conn)
            self._wake()
        else:
            conn.close()
            self._gone()

    def _gone(self) -> None:
        self._open -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return

    # ---------------------------------------------------------------- calls

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._closed:
            raise RuntimeError("This LeanRequest is not initialized!")
        if request_data is not None and request_data.contains_files:
            return await self._fallback.do_request(
                url,
                method,
                request_data,
                read_timeout,
                write_timeout,
                connect_timeout,
                pool_timeout,
            )
        if read_timeout is BaseRequest.DEFAULT_NONE:
            read_timeout = self._read_timeout
        if write_timeout is BaseRequest.DEFAULT_NONE:
            write_timeout = self._write_timeout
        if connect_timeout is BaseRequest.DEFAULT_NONE:
            connect_timeout = self._connect_timeout
        if pool_timeout is BaseRequest.DEFAULT_NONE:
            pool_timeout = self._pool_timeout
        origin, target = self._origin(url)
        body = (
            urlencode(request_data.json_parameters).encode()
            if request_data is not None and request_data.json_parameters
            else b""
        )
        request = (
            f"{method} {target} HTTP/1.1\r\nHost: {origin.host_header}\r\n"
            f"{self._headers_tail}{len(body)}\r\n\r\n"
        ).encode() + body
        conn = await self._acquire(origin, pool_timeout, connect_timeout)
        try:
            return await conn.call(request, write_timeout, read_timeout)
        finally:
            self._release(origin, conn)


def lighten_updates(data: Any) -> Any:
    """getUpdates' answer without what the bot never reads of a pressed button's
    message: its keyboard and its text's entities. python-telegram-bot builds an
    object for each of them on every press (a hand's keyboard is a dozen buttons),
    about 2% of the bot's CPU per play."""
    if isinstance(data, dict) and isinstance(data.get("result"), list):
        for update in data["result"]:
            query = update.get("callback_query") if isinstance(update, dict) else None
            message = query.get("message") if isinstance(query, dict) else None
            if isinstance(message, dict):
                message.pop("reply_markup", None)
                message.pop("entities", None)
    return data


class _LeanUpdates(LeanRequest):
    def parse_json_payload(self, payload: bytes) -> Any:  # type: ignore[override]
        return lighten_updates(BaseRequest.parse_json_payload(payload))


class _AiohttpUpdates(AiohttpRequest):
    def parse_json_payload(self, payload: bytes) -> Any:  # type: ignore[override]
        return lighten_updates(BaseRequest.parse_json_payload(payload))


class _HttpxUpdates(HTTPXRequest):
    def parse_json_payload(self, payload: bytes) -> Any:  # type: ignore[override]
        return lighten_updates(BaseRequest.parse_json_payload(payload))


#: The Bot API clients ``HOKM_HTTP`` may name.
KINDS = ("aiohttp", "lean", "httpx")


def make_request(kind: str, *, updates: bool = False, **kwargs: Any) -> BaseRequest:
    """The transport named by ``kind`` (see :data:`KINDS`), with HTTPXRequest's
    parameters; any of them is ``httpx`` when a proxy is configured in the environment
    (httpx reads every kind of proxy variable, SOCKS included).
    ``updates``: the transport of getUpdates (see :func:`lighten_updates`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown HTTP transport {kind!r} ({', '.join(KINDS)})")
    if kind == "httpx" or proxy_configured():
        return _HttpxUpdates(**kwargs) if updates else HTTPXRequest(**kwargs)
    if kind == "aiohttp":
        return _AiohttpUpdates(**kwargs) if updates else AiohttpRequest(**kwargs)
    return _LeanUpdates(**kwargs) if updates else LeanRequest(**kwargs)
