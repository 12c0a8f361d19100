"""Where the outbox's Bot API calls wait: imported into a bot process by
``python -m benchmarks.openloop --probe`` (this checkout only), it times each call of
``Calls.call`` (telegram_bot.platform.outbox.calls) in three parts (waiting for one of the outbox's ``_CALLS_AT_ONCE``
slots, waiting in the rate limiter, the HTTP call itself), by method and by kind of
chat (private or group), and writes the percentiles as JSON to ``HOKM_PROBE_OUT`` at
exit. Measuring only: the calls are made exactly as before.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from collections import defaultdict
from typing import Any

from telegram.constants import ParseMode

from telegram_bot.platform import ratelimit
from telegram_bot.platform.outbox import calls
from telegram_bot.platform.outbox.rows import _NO_PREVIEW

_samples: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
_limiter_wait: dict[int, float] = {}


async def _call(self: Any, method: str, row: Any, message_id: int | None) -> Any:
    data: dict[str, Any] = {"chat_id": row.chat_id}
    if message_id is not None:
        data["message_id"] = message_id
    if method != "deleteMessage":
        data |= {"text": row.text or "", "parse_mode": ParseMode.HTML}
        data["link_preview_options"] = _NO_PREVIEW
        if row.markup:
            data["reply_markup"] = row.markup
    asked = time.perf_counter()
    async with self._calling:
        got = time.perf_counter()
        try:
            return await self.bot._post(method, data)
        finally:
            done = time.perf_counter()
            key = f"{method} {'private' if row.chat_id > 0 else 'group'}"
            _samples[key].append((got - asked, done - got, done - asked))


calls.Calls.call = _call  # type: ignore[method-assign]

_pacing = ratelimit.PacingRateLimiter.process_request


async def _process_request(
    self: Any,
    callback: Any,
    args: Any,
    kwargs: Any,
    endpoint: str,
    data: dict[str, Any],
    rate_limit_args: Any,
) -> Any:
    started = time.perf_counter()

    async def timed(*a: Any, **kw: Any) -> Any:
        waited = time.perf_counter() - started
        key = f"limiter wait {endpoint} {'group' if _is_group(data) else 'private/none'}"
        _samples[key].append((waited, 0.0, waited))
        return await callback(*a, **kw)

    return await _pacing(
        self,
        callback=timed,
        args=args,
        kwargs=kwargs,
        endpoint=endpoint,
        data=data,
        rate_limit_args=rate_limit_args,
    )


def _is_group(data: dict[str, Any]) -> bool:
    try:
        return int(data.get("chat_id") or 0) < 0
    except (TypeError, ValueError):
        return True


ratelimit.PacingRateLimiter.process_request = _process_request  # type: ignore[method-assign]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


@atexit.register
def _write() -> None:
    out = os.environ.get("HOKM_PROBE_OUT")
    if not out:
        return
    report = {}
    for key, rows in sorted(_samples.items()):
        report[key] = {"n": len(rows)}
        for i, part in enumerate(("slot_wait_ms", "call_ms", "total_ms")):
            vals = [r[i] for r in rows]
            report[key][part] = {"p50": _pct(vals, 0.5), "p95": _pct(vals, 0.95)}
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
