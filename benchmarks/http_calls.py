"""CPU per Bot API call of each HTTP client, the server in another process.

    python -m benchmarks.http_calls                  # aiohttp,lean,httpx; 3 rounds
    python -m benchmarks.http_calls --kinds aiohttp,lean --calls 4000

Each round runs the clients in turn: ``--calls`` editMessageText-sized posts, eight
at a time, through python-telegram-bot's ``BaseRequest.post`` (so the JSON parsing of
the answer is counted, as in the bot). The figure is this process's CPU time per call
(``time.process_time``), which holds on a loaded machine better than wall time; the
server (aiohttp's, answering a sent message's JSON) runs in a child process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time

from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from telegram_bot.platform.http import make_request

_SERVER = """
import sys
from aiohttp import web
BODY = (b'{"ok":true,"result":{"message_id":1,"chat":{"id":-100,"type":"group","title":"T"},'
        b'"date":0,"text":"' + b"x" * 600 + b'"}}')
async def answer(request):
    await request.read()
    return web.Response(body=BODY, content_type="application/json")
app = web.Application()
app.router.add_post("/{tail:.*}", answer)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _wait_listening(port: int) -> None:
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return


async def cpu_per_call(kind: str, port: int, calls: int, concurrency: int = 8) -> float:
    """Microseconds of this process's CPU per call, after a warm-up of as many."""
    request = make_request(kind, connection_pool_size=32, pool_timeout=10.0)
    await request.initialize()
    url = f"http://127.0.0.1:{port}/bot1:T/editMessageText"
    data = RequestData(
        [RequestParameter("chat_id", -100, None), RequestParameter("text", "hello " * 40, None)]
    )

    async def some() -> None:
        for _ in range(calls // concurrency):
            await request.post(url, data)

    try:
        await asyncio.gather(*(some() for _ in range(concurrency)))  # warm-up
        started = time.process_time()
        await asyncio.gather(*(some() for _ in range(concurrency)))
        return (time.process_time() - started) / calls * 1e6
    finally:
        await request.shutdown()


async def main_async(opts: argparse.Namespace) -> None:
    port = _port()
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(port)])
    try:
        await _wait_listening(port)
        print(f"load average {os.getloadavg()}  cores {os.cpu_count()}", flush=True)
        for round_no in range(opts.rounds):
            figures = [(k, await cpu_per_call(k, port, opts.calls)) for k in opts.kinds]
            line = "  ".join(f"{k} {us:.0f} µs" for k, us in figures)
            print(f"round {round_no}: CPU per call  {line}  load {os.getloadavg()[0]:.2f}")
    finally:
        server.terminate()
        server.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.http_calls", description=__doc__)
    p.add_argument("--kinds", type=lambda s: s.split(","), default=["aiohttp", "lean", "httpx"])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    asyncio.run(main_async(p.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
