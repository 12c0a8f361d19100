"""The Mini App's HTTP side: the page, its assets, the JSON API and the live push.

Routes (see :func:`create_app`):

- ``GET /``: the page; ``GET /static/...``: its script, style and font;
  ``GET /cards/...``: the card art (:mod:`telegram_bot.web.cards`);
  ``GET /texts/<lang>.json``: its words;
- ``GET /api/game/{id}``: the user's seat's view, and the user's language;
- ``POST /api/game/{id}/play``: ``{"move": n, "action": {...}}`` (core's
  ``action_to_dict`` form, e.g. ``{"type": "play", "card": "AS"}``);
- ``GET /api/prefs`` and ``POST /api/prefs`` ``{"deck": "four"}``: the user's
  choices kept in the database (the deck style; ``null``: the default). The game's
  view carries them too, so the page needs no second request to start;
- ``GET /api/game/{id}/events``: Server-Sent Events, one ``view`` event per move
  (``id:`` the move number). A reconnect sends ``Last-Event-ID`` (or ``?since=``)
  and gets the current view at once if the game has moved on meanwhile.

Every API request carries Telegram's ``initData`` in ``Authorization: tma <initData>``
(the page reads it with fetch, the event stream too: it never goes in a URL, where
logs would keep it). The user id comes from it only. Refusals are JSON
``{"error": code}`` with a 4xx status: 401 for a missing, forged or stale
``initData``, 403 for a game the user is not seated at, 404 for an unknown game,
400 for a malformed body, 409 for a stale move number, 422 for a move the rules
refuse, 429 past the per-user rate limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from core.actions import action_from_dict
from telegram_bot.chat.i18n import LANGUAGES
from telegram_bot.platform.live import OpenPages
from telegram_bot.web import cards
from telegram_bot.web.games import WebError, WebGames
from telegram_bot.web.initdata import DEFAULT_MAX_AGE, InitDataError, WebAppUser, validate
from telegram_bot.web.texts import texts_json

__all__ = ["STATIC", "RateLimiter", "WebConfig", "create_app", "start"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,16}")
_MAX_BODY = 4096


@dataclass
class WebConfig:
    bot_token: str
    #: How old an initData may be (seconds).
    max_age: float = DEFAULT_MAX_AGE
    #: Requests a user may make: a burst, then so many a second.
    burst: float = 30
    rate: float = 5
    #: Event streams one user may hold open at once (tabs, reconnects).
    streams_per_user: int = 4
    #: Seconds between keep-alive comments on an idle event stream.
    keepalive: float = 15.0
    #: Seconds between looks at the open streams' connections (one look at all of
    #: them): a page that went away is known closed within this time (its person's
    #: chat is then brought up to date), not at its stream's next write.
    close_check: float = 1.0


class RateLimiter:
    """A token bucket per user, in this process's memory (buckets that have filled
    up again are forgotten, so idle users cost nothing)."""

    def __init__(self, burst: float, rate: float, clock: Any = time.monotonic) -> None:
        self.burst = burst
        self.rate = rate
        self.clock = clock
        self._buckets: dict[int, tuple[float, float]] = {}
        self.streams: dict[int, int] = {}

    def take(self, user_id: int) -> float:
        """0 if the request may go, else the seconds to wait."""
        now = self.clock()
        tokens, then = self._buckets.get(user_id, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if tokens < 1:
            self._buckets[user_id] = (tokens, now)
            return (1 - tokens) / self.rate
        self._buckets[user_id] = (tokens - 1, now)
        if len(self._buckets) > 10_000:
            self._forget(now)
        return 0.0

    def _forget(self, now: float) -> None:
        full = self.burst / self.rate
        for uid, (_, then) in list(self._buckets.items()):
            if now - then > full:
                del self._buckets[uid]


GAMES_KEY = web.AppKey("games", WebGames)
CONFIG_KEY = web.AppKey("web_config", WebConfig)
LIMITER_KEY = web.AppKey("limiter", RateLimiter)
PAGES_KEY = web.AppKey("open_pages", OpenPages)
STREAMS_KEY = web.AppKey("streams", dict)


def _error(status: int, code: str, **info: Any) -> web.Response:
    return web.json_response({"error": code, **info}, status=status)


def _json(body: Any, status: int = 200) -> web.Response:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return web.Response(
        text=text,
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _authenticate(request: web.Request) -> WebAppUser:
    config: WebConfig = request.app[CONFIG_KEY]
    header = request.headers.get("Authorization", "")
    scheme, _, data = header.partition(" ")
    if scheme.lower() != "tma" or not data:
        raise WebError(401, "missing")
    try:
        return validate(data.strip(), config.bot_token, max_age=config.max_age)
    except InitDataError as exc:
        raise WebError(401, exc.code) from None


def _limit(request: web.Request, user: WebAppUser) -> None:
    wait = request.app[LIMITER_KEY].take(user.id)
    if wait:
        # Rounded up: a wait rounded down to 0.0 tells the page to ask again at once,
        # and be refused again (a bucket refilling 5 a second is often 1 ms short).
        raise WebError(429, "too_many", retry_after=math.ceil(wait * 100) / 100)


def _game_id(request: web.Request) -> str:
    game_id = request.match_info["game_id"]
    if not _GAME_ID.fullmatch(game_id):
        raise WebError(404, "no_such_game")
    return game_id


@web.middleware
async def _errors(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        return await handler(request)
    except WebError as exc:
        response = _error(exc.status, exc.code, **exc.info)
        if exc.status in (429, 503):  # 503: the database busy (web/games.py busy())
            response.headers["Retry-After"] = str(max(1, round(exc.info.get("retry_after", 1))))
        return response


_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self' https://web.telegram.org https://*.telegram.org"
)


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response = await handler(request)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response


async def _page(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(
        STATIC / "index.html",
        headers={"Cache-Control": "no-cache", "Content-Security-Policy": _CSP},
    )


async def _card(request: web.Request) -> web.Response:
    body = cards.asset(request.match_info["path"])
    if body is None:
        return _error(404, "no_such_card")
    tag = cards.etag(body)
    headers = {"ETag": tag, "Cache-Control": "public, max-age=604800"}
    if request.headers.get("If-None-Match") == tag:
        return web.Response(status=304, headers=headers)
    return web.Response(text=body, content_type="image/svg+xml", headers=headers)


async def _texts(request: web.Request) -> web.Response:
    lang = request.match_info["lang"]
    if lang not in LANGUAGES:
        return _error(404, "no_such_language")
    return web.Response(
        body=texts_json(lang),
        content_type="application/json",
        headers={"Cache-Control": "public, max-age=3600"},
    )


async def _view(request: web.Request) -> web.Response:
    user = _authenticate(request)
    _limit(request, user)
    games: WebGames = request.app[GAMES_KEY]
    view = await games.view(_game_id(request), user)
    lang = await games.language(user)
    prefs = {"deck": await games.deck(user)}
    return _json({"view": view, "lang": lang, "user": user.id, "now": time.time(), "prefs": prefs})


async def _read_json(request: web.Request) -> Any:
    if request.content_length is not None and request.content_length > _MAX_BODY:
        raise WebError(413, "too_large")
    raw = await request.content.read(_MAX_BODY + 1)
    if len(raw) > _MAX_BODY:
        raise WebError(413, "too_large")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise WebError(400, "bad_json") from None


async def _prefs(request: web.Request) -> web.Response:
    user = _authenticate(request)
    _limit(request, user)
    games: WebGames = request.app[GAMES_KEY]
    if request.method == "POST":
        body = await _read_json(request)
        if not isinstance(body, dict) or set(body) - {"deck"}:
            raise WebError(400, "bad_body")
        if "deck" in body:
            deck = body["deck"]
            if deck is not None and (not isinstance(deck, str) or deck not in cards.DECKS):
                raise WebError(400, "bad_deck")
            await games.set_deck(user, deck)
    return _json({"deck": await games.deck(user)})


async def _play(request: web.Request) -> web.Response:
    user = _authenticate(request)
    _limit(request, user)
    game_id = _game_id(request)
    body = await _read_json(request)
    if not isinstance(body, dict):
        raise WebError(400, "bad_body")
    move = body.get("move")
    if not isinstance(move, int) or isinstance(move, bool) or not 0 <= move < 1 << 31:
        raise WebError(400, "bad_move")
    raw_action = body.get("action")
    if not isinstance(raw_action, dict) or not isinstance(raw_action.get("type"), str):
        raise WebError(400, "bad_action")
    try:
        action = action_from_dict(raw_action)
    except (KeyError, ValueError, TypeError, AttributeError, OverflowError):
        raise WebError(400, "bad_action") from None
    games: WebGames = request.app[GAMES_KEY]
    view = await games.act(game_id, user, move, action)
    return _json({"view": view})


def _since(request: web.Request) -> int | None:
    raw = request.headers.get("Last-Event-ID") or request.query.get("since")
    if raw is None or raw == "":
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise WebError(400, "bad_since")
    return int(raw)


@asynccontextmanager
async def _stream_slot(request: web.Request, user: WebAppUser) -> AsyncIterator[None]:
    config: WebConfig = request.app[CONFIG_KEY]
    streams = request.app[LIMITER_KEY].streams
    if streams.get(user.id, 0) >= config.streams_per_user:
        raise WebError(429, "too_many_streams", retry_after=config.keepalive)
    streams[user.id] = streams.get(user.id, 0) + 1
    try:
        yield
    finally:
        left = streams[user.id] - 1
        if left:
            streams[user.id] = left
        else:
            del streams[user.id]


def _event(view: dict[str, Any]) -> bytes:
    data = json.dumps(view, ensure_ascii=False, separators=(",", ":"))
    return f"id: {view['move']}\nevent: view\ndata: {data}\n\n".encode()


async def _events(request: web.Request) -> web.StreamResponse:
    user = _authenticate(request)
    _limit(request, user)
    game_id = _game_id(request)
    since = _since(request)
    config: WebConfig = request.app[CONFIG_KEY]
    games: WebGames = request.app[GAMES_KEY]
    async with _stream_slot(request, user):
        # Subscribe before reading the view, so no move falls between the two.
        with _closing(games.subscribe(game_id)) as sub:
            view = await games.view(game_id, user)  # refusals go out as JSON, before the stream
            response = web.StreamResponse(
                headers={
                    "Content-Type": "text/event-stream",
                    "Cache-Control": "no-store",
                    "X-Accel-Buffering": "no",
                }
            )
            await response.prepare(request)
            # A seated user's page is open while this stream is: stored for every
            # process, whose service then sends that person fewer chat messages (see
            # telegram_bot.service.views).
            pages = request.app.get(PAGES_KEY)
            # The stream ends when the initData it was opened with expires.
            expires = time.monotonic() + max(0.0, user.auth_date + config.max_age - time.time())
            last = since if since is not None else -1
            try:
                if pages is not None:  # (inside: a cancelled opening is closed too)
                    await pages.opened(game_id, user.id)
                await response.write(b"retry: 2000\n\n")
                if view["move"] != last:
                    await response.write(_event(view))
                    last = view["move"]
                # The app's look at connections closes the subscription of a page
                # that went away (see _watch_connections).
                request.app[STREAMS_KEY][sub] = request
                while True:
                    left = expires - time.monotonic()
                    if left <= 0:
                        await response.write(b'event: error\ndata: {"error":"stale"}\n\n')
                        break
                    move = await sub.next(timeout=min(config.keepalive, left))
                    if move is None:
                        if _gone(request):
                            break  # the page went away
                        await response.write(b": keepalive\n\n")
                        continue
                    if move <= last:
                        continue
                    try:
                        view = await games.view(game_id, user)
                    except WebError as exc:
                        data = json.dumps({"error": exc.code})
                        await response.write(f"event: error\ndata: {data}\n\n".encode())
                        break
                    if view["move"] > last:
                        await response.write(_event(view))
                        last = view["move"]
            except (ConnectionResetError, asyncio.CancelledError):
                pass  # the page went away
            finally:
                request.app[STREAMS_KEY].pop(sub, None)
                # Shielded: a cancelled stream (the page went away, the server stops)
                # still removes its row and brings the person's chat up to date.
                await asyncio.shield(_closed(games, pages, game_id, user))
            return response


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _watch_connections(app: web.Application) -> AsyncIterator[None]:
    """One task for all the open streams: every ``close_check`` seconds, the
    subscription of a stream whose connection is gone is closed, which wakes its
    handler (an idle stream would otherwise learn it only at its next write)."""
    streams = app[STREAMS_KEY]
    interval = app[CONFIG_KEY].close_check

    async def look() -> None:
        while True:
            await asyncio.sleep(interval)
            for sub, request in list(streams.items()):
                if _gone(request):
                    streams.pop(sub, None)
                    sub.close()

    task = asyncio.create_task(look(), name="web-streams")
    yield
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _closed(games: WebGames, pages: OpenPages | None, game_id: str, user: WebAppUser) -> None:
    if pages is not None:
        await pages.closed(game_id, user.id)
        if user.id in pages.watching(game_id):
            return  # another of the user's streams (a tab) is still open here
    try:
        await games.page_closed(game_id, user)
    except Exception:
        log.exception("page of %s closed: the chat not brought up to date", game_id)


class _closing:
    def __init__(self, sub: Any) -> None:
        self.sub = sub

    def __enter__(self) -> Any:
        return self.sub

    def __exit__(self, *exc: object) -> None:
        self.sub.close()


def create_app(
    games: WebGames, config: WebConfig, pages: OpenPages | None = None
) -> web.Application:
    """The Mini App's aiohttp application over ``games``; ``pages`` (if given) keeps
    which users have which game's page open, for every process to see."""
    app = web.Application(middlewares=[_headers, _errors], client_max_size=_MAX_BODY * 4)
    app[GAMES_KEY] = games
    app[CONFIG_KEY] = config
    app[LIMITER_KEY] = RateLimiter(config.burst, config.rate)
    app[STREAMS_KEY] = {}
    app.cleanup_ctx.append(_watch_connections)
    if pages is not None:
        app[PAGES_KEY] = pages
    app.router.add_get("/", _page)
    app.router.add_static("/static/", STATIC, append_version=False)
    app.router.add_get("/cards/{path:.+}", _card)
    app.router.add_get("/texts/{lang}.json", _texts)
    app.router.add_get("/api/game/{game_id}", _view)
    app.router.add_post("/api/game/{game_id}/play", _play)
    app.router.add_get("/api/game/{game_id}/events", _events)
    app.router.add_get("/api/prefs", _prefs)
    app.router.add_post("/api/prefs", _prefs)
    return app


async def start(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve ``app`` on ``host:port`` (``HOKM_WEBAPP_PORT``); ``runner.cleanup()`` stops it.
    The runner's shutdown gives open event streams a moment, then cancels them."""
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
