"""The HTTP side: an aiohttp server answering ``/bot{token}/{method}`` like Telegram.

Each request is decoded (query string, JSON body, urlencoded or multipart form),
logged as an :class:`~testkit.emulator.models.ApiCall`, checked against injected
errors and flood limits, and handed to the method table.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import Any

from aiohttp import web

from testkit.emulator.api import BotApi
from testkit.emulator.errors import ApiError, bad_request, not_found, unauthorized
from testkit.emulator.limits import ErrorInjector, RateLimiter
from testkit.emulator.models import JSON, ApiCall
from testkit.emulator.params import Params, decode_form_value
from testkit.emulator.state import World

__all__ = ["ApiServer"]

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"^\d+:[\w-]+$")
#: Methods that wait by design and so do not count as the bot being busy.
_PASSIVE = frozenset({"getupdates"})


class ApiServer:
    """Serves the emulated Bot API on ``host:port`` (port 0: a free one)."""

    def __init__(
        self, world: World, api: BotApi, injector: ErrorInjector, limiter: RateLimiter
    ) -> None:
        self.world = world
        self.api = api
        self.injector = injector
        self.limiter = limiter
        #: Every call the bot made, in order of arrival.
        self.calls: list[ApiCall] = []
        #: Exceptions raised by the emulator itself (answered with 500).
        self.internal_errors: list[BaseException] = []
        #: Calls being served right now, long polls excluded.
        self.inflight = 0
        #: Loop time of the last call start or end, long polls excluded.
        self.last_activity = 0.0
        self.host = "127.0.0.1"
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # lifecycle ------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.host = host
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # requests ---------------------------------------------------------------------

    async def _file(self, request: web.Request) -> web.Response:
        return _respond(404, not_found().payload())

    async def _handle(self, request: web.Request) -> web.Response:
        try:
            params = await _read_params(request)
        except ApiError as exc:
            return _respond(exc.code, exc.payload())
        peername = request.transport.get_extra_info("peername") if request.transport else None
        status, body = await self.call(
            request.match_info["token"],
            request.match_info["method"],
            params,
            peer=peername[1] if peername else None,
        )
        if status == 200 and request.match_info["method"].lower() == "getupdates":
            transport = request.transport
            if transport is not None and not transport.is_closing():
                self.world.updates.mark_fetched(body["result"])
        return _respond(status, body)

    async def call(
        self, token: str, method: str, params: JSON, peer: int | None = None
    ) -> tuple[int, JSON]:
        """Run one API call: returns the HTTP status and the JSON body (``peer``: the
        client's port, kept with the call)."""
        found = self.api.lookup(method)
        name = found[0] if found else method
        chat_id = self.world.chat_id_of(params)
        entry = ApiCall(len(self.calls), name, params, chat_id, time.time(), peer=peer)
        self.calls.append(entry)
        busy = name.lower() not in _PASSIVE
        if busy:
            self._touch(+1)
        try:
            if token != self.world.token:
                raise unauthorized() if _TOKEN.match(token) else not_found()
            if found is None:
                raise not_found()
            chat = self.world.chats.get(chat_id) if chat_id is not None else None
            refusal = self.injector.check(name, chat_id) or self.limiter.check(
                name, chat_id, chat is not None and chat.is_group
            )
            if refusal is not None:
                raise refusal
            result = await found[1](Params(params))
        except ApiError as exc:
            entry.ok, entry.error_code, entry.description = False, exc.code, exc.description
            return exc.code, exc.payload()
        except asyncio.CancelledError:
            entry.ok, entry.description = False, "cancelled (client went away)"
            raise
        except Exception as exc:
            log.exception("emulator failure in %s", name)
            self.internal_errors.append(exc)
            entry.ok, entry.error_code, entry.description = False, 500, repr(exc)
            return 500, {
                "ok": False,
                "error_code": 500,
                "description": f"Internal Server Error: {exc!r}",
            }
        finally:
            if busy:
                self._touch(-1)
        entry.ok, entry.result = True, result
        return 200, {"ok": True, "result": result}

    def _touch(self, delta: int) -> None:
        self.inflight += delta
        self.last_activity = asyncio.get_running_loop().time()


async def _read_params(request: web.Request) -> JSON:
    """Parameters from the query string and the body, decoded like the Bot API does."""
    params: JSON = {k: decode_form_value(k, v) for k, v in request.query.items()}
    if not request.can_read_body:
        return params
    if request.content_type == "application/json":
        try:
            body: Any = await request.json()
        except ValueError:
            raise bad_request("can't parse JSON object") from None
        if isinstance(body, dict):
            params.update(body)
    elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, web.FileField):
                params[key] = {"file_name": value.filename, "content_type": value.content_type}
            else:
                params[key] = decode_form_value(key, str(value))
    return params


def _respond(status: int, body: JSON) -> web.Response:
    try:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (forged callback data, say) has no UTF-8 form; as a
        # \ud800 escape it is still valid JSON, as Telegram would send it.
        data = json.dumps(body).encode("ascii")
    return web.Response(status=status, body=data, content_type="application/json")
