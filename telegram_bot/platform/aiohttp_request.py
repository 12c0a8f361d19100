"""The Bot API client on aiohttp: python-telegram-bot's ``BaseRequest`` over one
``aiohttp.ClientSession`` (a kept-alive connection pool, aiohttp's C parser).

The parameters mean what they mean for :class:`telegram.request.HTTPXRequest`, and
the failures end as they do there:

- ``connection_pool_size`` connections at most; a call waits ``pool_timeout`` for
  one, then gets ``TimedOut("Pool timeout: ...")`` and nothing was sent. The pool's
  bound is kept here (aiohttp's own wait for a connection is part of its
  ``connect`` timeout and could not be told apart from a slow connect);
- ``connect_timeout`` (aiohttp's ``sock_connect``) and ``read_timeout`` (its
  ``sock_read``: the longest wait for the next piece of the answer) raise
  ``TimedOut``; a timed-out connection is closed by aiohttp, never reused. aiohttp
  has no write timeout of its own: an upload is bounded as a whole by connect +
  ``media_write_timeout`` + read. A plain call's few hundred bytes go to the socket's
  buffer in one write, on a connection that has no other call in flight, so it has
  no such bound (each timer is CPU on every call);
- any other aiohttp or socket error (refused, reset, the server hanging up mid-call,
  a malformed answer) is ``NetworkError``; status codes (429's ``retry_after``, 400,
  403, ...) are mapped to python-telegram-bot's exceptions by ``BaseRequest``;
- plain calls send the form-encoded parameters httpx sends; a call with files is a
  multipart ``aiohttp.FormData`` (with ``media_write_timeout`` for the write);
- each connection reads at most 16 KiB at a time, not asyncio's 256 KiB (see
  :class:`_Connector`);
- ``proxy``: an ``http://`` proxy URL for every call (aiohttp speaks no SOCKS);
  ``aiohttp_kwargs`` go to the ``ClientSession`` as they are (as ``httpx_kwargs``).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

import aiohttp
import yarl
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

__all__ = ["AiohttpRequest"]

_POOL_TIMEOUT_MESSAGE = (
    "Pool timeout: All connections in the connection pool are occupied. "
    "Request was *not* sent to Telegram. Consider adjusting the connection "
    "pool size or the pool timeout."
)


#: Parsed URLs kept (see AiohttpRequest._urls).
_URLS_KEPT = 256
#: Bytes a connection reads at a time.
_READ_SIZE = 16384


class _Connector(aiohttp.TCPConnector):
    """aiohttp's connector, each new connection made to read 16 KiB at a time.

    aiohttp's protocol takes data with ``data_received``: for each read asyncio makes a
    new 256 KiB block (its transports' ``max_size``, TLS's too) and shrinks it to what
    came. In glibc's heap those blocks, and the small objects placed in the space they
    gave back, made the bot's RSS grow with the calls it made (issue 14;
    ``tests/bot/test_memory.py`` holds a call's peak under 64 KiB). ``max_size`` and
    ``_create_connection`` are asyncio's and aiohttp's own, not public: the memory test
    fails if either changes under us."""

    async def _create_connection(self, req: Any, traces: Any, timeout: Any) -> Any:
        proto = await super()._create_connection(req, traces, timeout)
        transport = proto.transport
        # Under TLS, the reads that make new blocks are the TLS protocol's.
        reader = getattr(transport, "_ssl_protocol", None) or transport
        if reader is not None and hasattr(reader, "max_size"):
            reader.max_size = _READ_SIZE
        return proto


def _total(*parts: float | None) -> float | None:
    return None if any(p is None for p in parts) else sum(parts)  # type: ignore[arg-type]


class AiohttpRequest(BaseRequest):
    """See the module's documentation."""

    __slots__ = (
        "_connect_timeout",
        "_headers",
        "_media_write_timeout",
        "_pool",
        "_pool_timeout",
        "_proxy",
        "_read_timeout",
        "_session",
        "_session_kwargs",
        "_size",
        "_timeout",
        "_urls",
        "_write_timeout",
    )

    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        proxy: str | None = None,
        aiohttp_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self._size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._proxy = proxy
        self._session_kwargs = aiohttp_kwargs or {}
        self._session: aiohttp.ClientSession | None = None
        #: Parsed URLs by their text: a bot calls a few dozen methods, each its own URL.
        self._urls: dict[str, yarl.URL] = {}
        self._pool: asyncio.Semaphore | None = None
        self._timeout = self._client_timeout(connect_timeout, write_timeout, read_timeout)
        self._headers = {
            "User-Agent": self.USER_AGENT,
            "Content-Type": "application/x-www-form-urlencoded",
        }

    @staticmethod
    def _client_timeout(
        connect: float | None, write: float | None, read: float | None, files: bool = False
    ) -> aiohttp.ClientTimeout:
        total = _total(connect, write, read) if files else None
        return aiohttp.ClientTimeout(total=total, sock_connect=connect, sock_read=read)

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is not None and not self._session.closed:
            return
        connector = _Connector(limit=self._size, limit_per_host=0)
        kwargs: dict[str, Any] = {
            "connector": connector,
            "timeout": self._timeout,
            "cookie_jar": aiohttp.DummyCookieJar(),
            "trust_env": False,
            **self._session_kwargs,
        }
        self._session = aiohttp.ClientSession(**kwargs)
        self._pool = asyncio.Semaphore(self._size)

    async def shutdown(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

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
        session, pool = self._session, self._pool
        if session is None or session.closed or pool is None:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        files = request_data is not None and request_data.contains_files
        defaults = True
        if read_timeout is BaseRequest.DEFAULT_NONE:
            read_timeout = self._read_timeout
        else:
            defaults = False
        if write_timeout is BaseRequest.DEFAULT_NONE:
            write_timeout = self._media_write_timeout if files else self._write_timeout
            defaults = defaults and not files
        else:
            defaults = False
        if connect_timeout is BaseRequest.DEFAULT_NONE:
            connect_timeout = self._connect_timeout
        else:
            defaults = False
        if pool_timeout is BaseRequest.DEFAULT_NONE:
            pool_timeout = self._pool_timeout
        timeout = (
            self._timeout
            if defaults
            else self._client_timeout(connect_timeout, write_timeout, read_timeout, files)
        )

        headers: dict[str, str] | None = self._headers
        data: Any = None
        if request_data is not None:
            if files:
                data = _form(request_data)
                headers = {"User-Agent": self.USER_AGENT}  # aiohttp sets the multipart type
            else:
                params = request_data.json_parameters
                data = urlencode(params).encode() if params else b""
        elif method != "GET":
            data = b""
        else:
            headers = {"User-Agent": self.USER_AGENT}

        target = self._urls.get(url)
        if target is None:
            target = yarl.URL(url)
            if len(self._urls) < _URLS_KEPT:  # file downloads' URLs are many
                self._urls[url] = target

        if pool.locked():
            try:
                async with asyncio.timeout(pool_timeout):
                    await pool.acquire()
            except TimeoutError:
                raise TimedOut(_POOL_TIMEOUT_MESSAGE) from None
        else:
            await pool.acquire()  # free: no wait
        try:
            async with session.request(
                method, target, data=data, headers=headers, timeout=timeout, proxy=self._proxy
            ) as response:
                return response.status, await response.read()
        except TimeoutError as exc:  # aiohttp's ServerTimeoutError is one too
            raise TimedOut(f"Timed out: {exc}" if str(exc) else "Timed out") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise NetworkError(f"aiohttp.{type(exc).__name__}: {exc}") from exc
        finally:
            pool.release()


def _form(request_data: RequestData) -> aiohttp.FormData:
    """The parameters and files of an upload, as httpx would send them (the plain
    parameters as fields, each file as a part with its name and type)."""
    form = aiohttp.FormData(quote_fields=False)
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
