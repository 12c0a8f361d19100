"""Health checks of the cluster's processes, for docker-compose's ``healthcheck``.

    python -m telegram_bot.runtime.health ingress   # the webhook server answers HTTP
    python -m telegram_bot.runtime.health worker    # the worker's loop beat lately

A worker touches its heartbeat file (``HOKM_HEARTBEAT_FILE``) at every turn of its
claim loop, which turns about once a second (or, with its hands full, whenever an
update it holds is done); a file older than
:data:`STALE_SECONDS` means a loop that is stuck (or a worker that never started). The
ingress is healthy when its port answers HTTP at all (any status: the webhook path is
secret, and a 404 still proves the server is up). Exit status 0: healthy; 1: not, with
one line saying why.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["STALE_SECONDS", "beat", "check_ingress", "check_worker", "main"]

#: A heartbeat older than this is a stuck worker.
STALE_SECONDS = 30.0
HEARTBEAT_ENV = "HOKM_HEARTBEAT_FILE"


def beat() -> None:
    """Touch the heartbeat file, if one is configured (never fails the caller)."""
    path = os.environ.get(HEARTBEAT_ENV)
    if path:
        with contextlib.suppress(OSError):
            Path(path).touch()


def check_worker(path: str | None, now: float | None = None) -> str | None:
    """Why the worker is unhealthy, or None."""
    if not path:
        return f"{HEARTBEAT_ENV} is not set"
    try:
        age = (time.time() if now is None else now) - Path(path).stat().st_mtime
    except OSError:
        return f"no heartbeat at {path}"
    if age > STALE_SECONDS:
        return f"last heartbeat {age:.0f} s ago"
    return None


def check_ingress(port: int, timeout: float = 3.0) -> str | None:
    """Why the ingress is unhealthy, or None."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # it answered
    except (OSError, ValueError) as exc:
        return f"port {port} does not answer: {exc}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["worker"]:
        problem = check_worker(os.environ.get(HEARTBEAT_ENV))
    elif args == ["ingress"]:
        problem = check_ingress(int(os.environ.get("WEBHOOK_PORT", "8443")))
    else:
        print("usage: python -m telegram_bot.runtime.health {ingress|worker}", file=sys.stderr)
        return 2
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
