"""Several processes on one bot token: a webhook ingress and workers on PostgreSQL.

    python -m telegram_bot ingress              # Telegram's webhook -> the inbox
    python -m telegram_bot worker               # handles the inbox (run several)
    python -m telegram_bot all --workers 2      # both, as child processes

(``python -m telegram_bot.runtime.cluster ROLE`` runs them too, but the front is the
one to use: a process's think workers are spawned, and a spawned child imports the
parent's main module unless it is a package's ``__main__``. Started as this module,
each think worker imported the whole bot: this module's imports cost 1.5 s of CPU
and 65 MiB more than the players' own.)

The ingress stores each update in the ``inbox`` table (one row per ``update_id``, so
Telegram's retries are harmless), answers Telegram at once and wakes the workers with
``NOTIFY``. Workers claim rows with ``FOR UPDATE SKIP LOCKED`` and a short lease, hand
them to the python-telegram-bot Application and delete them once handled; a worker that
dies leaves its claims to expire, and another handles them again (a press handled
twice is refused the second time by the move number). Games are serialized by their
row lock, timers and computer moves by the game row's clock (see GameService.sweep),
and each chat's messages by the outbox's advisory lock. Configuration is the bot's own
(``BOT_TOKEN``, ``DATABASE_URL``: PostgreSQL, ``TELEGRAM_API_URL``), plus ``WEBHOOK_URL``
(the public URL), ``WEBHOOK_PORT`` and ``WEBHOOK_SECRET`` for the ingress.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import signal
import socket
import sys

from aiohttp import web
from sqlalchemy import text
from telegram import Bot, Update

from telegram_bot.platform.storage.db import create_engine, migrate, normalize_url
from telegram_bot.runtime.app import (
    build_application,
    check_token,
    close_application,
    open_application,
)
from telegram_bot.runtime.config import Settings
from telegram_bot.runtime.health import beat
from telegram_bot.runtime.startup import (
    EXIT_CODES,
    EXIT_FAILED,
    SETTINGS,
    ConfigError,
    Unavailable,
    add_roles,
    guarded,
    require_token,
    say,
)
from telegram_bot.service import languages, reposts

__all__ = ["add_arguments", "main", "run_ingress", "run_role", "run_worker"]

log = logging.getLogger(__name__)

CHANNEL = "hokm_inbox"
#: A claimed update not handled within this time is handled by another worker.
LEASE_SECONDS = 10
BATCH = 16

_CLAIM = f"""
UPDATE inbox SET claimed_until = now() + interval '{LEASE_SECONDS} seconds'
WHERE id IN (
    SELECT id FROM inbox
    WHERE claimed_until IS NULL OR claimed_until < now()
    ORDER BY id LIMIT :n FOR UPDATE SKIP LOCKED
)
RETURNING id, payload
"""


def _require_postgres(settings: Settings) -> str:
    url = normalize_url(settings.database_url)
    if not url.startswith("postgresql"):
        raise ConfigError("several processes need PostgreSQL: set DATABASE_URL=postgresql://…")
    return url


def _asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


# ------------------------------------------------------------------------- ingress


async def run_ingress(settings: Settings, stop: asyncio.Event) -> None:
    """Receive the webhook until ``stop`` is set (the database migrated: run_role)."""
    url = _require_postgres(settings)
    engine = create_engine(url, pool_size=8, max_overflow=0)  # one short insert a request
    path = f"/{settings.token}"

    async def receive(request: web.Request) -> web.Response:
        secret = settings.webhook_secret
        if secret and request.headers.get("X-Telegram-Bot-Api-Secret-Token") != secret:
            return web.Response(status=403)
        try:
            payload = await request.json()
            update_id = int(payload["update_id"])
        except (ValueError, KeyError, TypeError):
            return web.Response(status=400)
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO inbox (update_id, payload) VALUES (:u, :p) "
                    "ON CONFLICT (update_id) DO NOTHING"
                ),
                {"u": update_id, "p": json.dumps(payload, ensure_ascii=False)},
            )
            await conn.execute(text(f"NOTIFY {CHANNEL}"))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post(path, receive)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.webhook_listen, settings.webhook_port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        await engine.dispose()
        where = f"{settings.webhook_listen}:{settings.webhook_port}"
        raise Unavailable(f"Could not listen on {where}: {error.strerror or error}") from None
    bot = _bot(settings)
    async with bot:
        await bot.set_webhook(
            url=f"{(settings.webhook_url or '').rstrip('/')}{path}",
            secret_token=settings.webhook_secret,
            allowed_updates=Update.ALL_TYPES,
        )
    log.info("ingress listening on %s:%s", settings.webhook_listen, settings.webhook_port)
    # The Mini App (HOKM_WEBAPP_URL): served here, by a game service that takes no
    # updates (the workers do) but plays the pages' moves through the same path, and
    # follows every worker's moves by PostgreSQL's LISTEN/NOTIFY (a PgBus).
    web_app = None
    listener = None
    if settings.webapp_url:
        import asyncpg

        web_app = build_application(dataclasses.replace(settings, database_url=url, shared=True))
        web_app.bot_data["serve_webapp"] = True
        await open_application(web_app)
        await web_app.start()
        # Its service renders the moves of the pages (most moves when people have the
        # page open): users' languages remembered while it hears of their changes, as
        # a worker's, not read from the users' rows at every lookup (four reads a play).
        listener = await asyncpg.connect(_asyncpg_dsn(url))
        await languages.listen(web_app.bot_data["service"].languages, listener)
    try:
        await stop.wait()
    finally:
        if listener is not None:
            await listener.close()
        if web_app is not None:
            await close_application(web_app)
        await runner.cleanup()
        await engine.dispose()


def _bot(settings: Settings) -> Bot:
    urls = settings.api_base_urls()
    if urls is None:
        return Bot(settings.token)
    return Bot(settings.token, base_url=urls[0], base_file_url=urls[1])


# -------------------------------------------------------------------------- worker


async def run_worker(settings: Settings, stop: asyncio.Event) -> None:
    """Handle inbox updates until ``stop`` is set, then finish what was claimed."""
    import asyncpg

    url = _require_postgres(settings)
    settings = dataclasses.replace(settings, database_url=url, shared=True)
    app = build_application(settings)
    await open_application(app)
    await app.start()
    engine = create_engine(url)
    wake = asyncio.Event()
    listener = await asyncpg.connect(_asyncpg_dsn(url))
    await listener.add_listener(CHANNEL, lambda *_: wake.set())
    service = app.bot_data["service"]
    await languages.listen(service.languages, listener)
    sharing = asyncio.create_task(reposts.share_newest(service.outbox, service.sessions))
    handling: set[asyncio.Task[None]] = set()
    log.info("worker ready")

    async def handle(row_id: int, payload: str) -> None:
        try:
            update = Update.de_json(json.loads(payload), app.bot)
            await app.process_update(update)
        except Exception:
            log.exception("update %s failed", row_id)
        async with engine.begin() as conn:
            await conn.execute(text("DELETE FROM inbox WHERE id = :id"), {"id": row_id})
        log.debug("handled update %s", row_id)

    try:
        while not stop.is_set():
            beat()  # for the health check (telegram_bot.runtime.health): a stuck loop stops it
            wake.clear()
            # At most BATCH updates in hand: claiming more than it can handle, a busy
            # worker would run out of connections and let its leases expire.
            room = BATCH - len(handling)
            if room <= 0:
                await asyncio.wait(set(handling), return_when=asyncio.FIRST_COMPLETED)
                continue
            async with engine.begin() as conn:
                rows = (await conn.execute(text(_CLAIM), {"n": room})).all()
            if rows:
                log.debug("claimed %d update(s)", len(rows))
            for row_id, payload in rows:
                task = asyncio.create_task(handle(row_id, payload))
                handling.add(task)
                task.add_done_callback(handling.discard)
            if len(rows) < room:
                # A NOTIFY wakes us; the timeout also picks up expired leases.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_first(wake, stop), 1.0)
    finally:
        await asyncio.gather(*handling, return_exceptions=True)
        sharing.cancel()
        await asyncio.gather(sharing, return_exceptions=True)
        await listener.close()
        await close_application(app)
        await engine.dispose()


async def _first(*events: asyncio.Event) -> None:
    waits = [asyncio.create_task(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


# ----------------------------------------------------------------------------- all


async def run_all(settings: Settings, workers: int, stop: asyncio.Event) -> int:
    """The ingress and ``workers`` workers as child processes, stopped together: on
    ``stop``, or as soon as one exits (a half cluster would look alive and play
    nothing). Returns 0 when stopped, else the status of the child that failed."""
    roles = ["ingress"] + ["worker"] * workers
    procs = [
        await asyncio.create_subprocess_exec(sys.executable, "-m", "telegram_bot", role)
        for role in roles
    ]
    waiters = {
        asyncio.create_task(p.wait()): (role, p) for role, p in zip(roles, procs, strict=True)
    }
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait([stopper, *waiters], return_when=asyncio.FIRST_COMPLETED)
    failed = None
    if not stop.is_set():
        # A child ended on its own: whatever its status, the cluster is broken.
        role, proc = next(waiters[t] for t in done if t in waiters)
        failed = proc.returncode or EXIT_FAILED
        say(f"{role}[{proc.pid}] exited with status {proc.returncode}: stopping the others")
    for p in procs:
        if p.returncode is None:
            p.send_signal(signal.SIGTERM)
    await asyncio.gather(*waiters)
    stopper.cancel()
    if failed is not None:
        return failed if failed > 0 else EXIT_FAILED
    bad = [p.returncode for p in procs if p.returncode not in (0, -signal.SIGTERM)]
    return bad[0] if bad and bad[0] > 0 else (EXIT_FAILED if bad else 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The roles as subcommands of ``parser`` (here, and in ``python -m telegram_bot``)."""
    roles = parser.add_subparsers(dest="command", metavar="ROLE", required=True)
    add_roles(roles, ["ingress", "worker", "all"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m telegram_bot.runtime.cluster",
        description=__doc__.split("\n\n")[0],
        epilog=f"{SETTINGS}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run_role(parser.parse_args(argv))


def run_role(args: argparse.Namespace) -> int:
    """Run the role ``args.command`` (ingress, worker, all) until SIGTERM or SIGINT."""
    role = args.command
    logging.basicConfig(
        format=f"%(asctime)s {role}[{os.getpid()}] %(levelname)s %(name)s: %(message)s",
        level=logging.INFO,
    )
    if os.environ.get("HOKM_DEBUG"):
        # Our own steps; python-telegram-bot's would log every call with its payload.
        for ours in ("__main__", "telegram_bot"):
            logging.getLogger(ours).setLevel(logging.DEBUG)
    for noisy in ("httpcore", "asyncio", "aiosqlite", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = Settings.from_env()
    status = 0

    async def run() -> None:
        nonlocal status
        require_token(settings)
        url = _require_postgres(settings)
        # Telegram, then the database, before anything starts (a port, a child, the
        # Application): each failure is then one line here, not a half-started
        # process's warnings and tracebacks. Each process migrates (one at a time, under
        # an advisory lock), so an upgraded image migrates as it starts.
        await check_token(settings)
        await migrate(url)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if role == "ingress":
            await run_ingress(settings, stop)
        elif role == "worker":
            await run_worker(settings, stop)
        else:
            status = await run_all(settings, args.workers, stop)

    return guarded(lambda: asyncio.run(run()), settings) or status


if __name__ == "__main__":
    sys.exit(main())
