"""Telegram's Mini App ``initData``, checked as Telegram documents it.

Telegram opens the page with a query string (``initData``) signed with the bot's
token ("Validating data received via the Mini App", core.telegram.org/bots/webapps):

- ``secret_key = HMAC_SHA256(key="WebAppData", msg=bot_token)``;
- ``data_check_string``: every received field but ``hash``, as ``key=value`` with the
  value URL-decoded, sorted by key, joined with ``\\n``;
- the field ``hash`` must be ``hex(HMAC_SHA256(key=secret_key, msg=data_check_string))``.

The page sends it with every request; the user id the server acts for comes from
here only. ``auth_date`` must be no older than a set age (and not in the future
beyond a small clock skew), so an ``initData`` copied from a page opened yesterday
no longer opens a table. Every refusal is an :class:`InitDataError` with a short
machine-readable ``code`` (the API returns it as is).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

__all__ = [
    "DEFAULT_MAX_AGE",
    "MAX_LENGTH",
    "MAX_SKEW",
    "InitDataError",
    "WebAppUser",
    "data_check_string",
    "secret_key",
    "sign",
    "validate",
]

#: How old an ``initData`` may be, in seconds. A page keeps the one it was opened
#: with, so this is also the longest a page stays usable without being reopened.
DEFAULT_MAX_AGE = 6 * 3600
#: How far in the future ``auth_date`` may be (the two clocks differ a little).
MAX_SKEW = 60
#: Longer ``initData`` is refused before any parsing (Telegram's are well under 2 kB).
MAX_LENGTH = 4096

_HEX64 = re.compile(r"[0-9a-f]{64}")
_KEY = re.compile(r"[a-z_][a-z0-9_]{0,63}")


class InitDataError(ValueError):
    """A refused ``initData``. ``code`` is one of: ``missing``, ``too_long``,
    ``malformed``, ``no_hash``, ``bad_hash``, ``no_auth_date``, ``stale``,
    ``future``, ``no_user``, ``bad_user``."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """Who opened the page, from a valid ``initData``."""

    id: int
    first_name: str
    last_name: str | None
    username: str | None
    language_code: str | None
    auth_date: int
    #: ``start_param`` (``startapp=`` of a t.me link), when the page was opened by one.
    start_param: str | None = None
    #: Every field as received (URL-decoded), ``hash`` included.
    fields: dict[str, str] = field(default_factory=dict, repr=False, compare=False)


def secret_key(bot_token: str) -> bytes:
    """``HMAC_SHA256(key="WebAppData", msg=bot_token)``."""
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def data_check_string(fields: dict[str, str]) -> str:
    """The fields but ``hash``, ``key=value`` sorted by key, one a line."""
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields) if k != "hash")


def sign(fields: dict[str, str], bot_token: str) -> str:
    """The ``hash`` Telegram would put on these fields (``hash`` itself ignored)."""
    msg = data_check_string(fields).encode()
    return hmac.new(secret_key(bot_token), msg, hashlib.sha256).hexdigest()


def _parse(init_data: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(
            init_data,
            keep_blank_values=True,
            strict_parsing=True,
            errors="strict",
            max_num_fields=32,
        )
    except (ValueError, UnicodeDecodeError) as exc:
        raise InitDataError("malformed", str(exc)[:80]) from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        # A repeated key would make the signed string ambiguous: refuse it.
        if key in fields or not _KEY.fullmatch(key):
            raise InitDataError("malformed", "bad or repeated field name")
        fields[key] = value
    return fields


def validate(
    init_data: str | None,
    bot_token: str,
    *,
    max_age: float = DEFAULT_MAX_AGE,
    now: float | None = None,
) -> WebAppUser:
    """The user of a genuine, fresh ``initData``; :class:`InitDataError` otherwise.

    The signature is checked before anything in the fields is believed, and compared
    in constant time.
    """
    if not init_data:
        raise InitDataError("missing")
    if not isinstance(init_data, str) or len(init_data) > MAX_LENGTH:
        raise InitDataError("too_long")
    fields = _parse(init_data)
    received = fields.get("hash")
    if received is None:
        raise InitDataError("no_hash")
    expected = sign(fields, bot_token)
    # compare_digest on ASCII str of equal type; a non-hex hash simply never matches.
    if not _HEX64.fullmatch(received) or not hmac.compare_digest(received, expected):
        raise InitDataError("bad_hash")
    raw_date = fields.get("auth_date", "")
    if not raw_date.isascii() or not raw_date.isdigit() or len(raw_date) > 12:
        raise InitDataError("no_auth_date")
    auth_date = int(raw_date)
    t = time.time() if now is None else now
    if auth_date > t + MAX_SKEW:
        raise InitDataError("future")
    if t - auth_date > max_age:
        raise InitDataError("stale")
    user = _user(fields.get("user"))
    return WebAppUser(
        id=user["id"],
        first_name=_text(user.get("first_name")) or "",
        last_name=_text(user.get("last_name")),
        username=_text(user.get("username")),
        language_code=_text(user.get("language_code")),
        auth_date=auth_date,
        start_param=fields.get("start_param"),
        fields=fields,
    )


def _user(raw: str | None) -> dict[str, Any]:
    if raw is None:
        raise InitDataError("no_user")
    try:
        user = json.loads(raw)
    except ValueError:
        raise InitDataError("bad_user", "not JSON") from None
    if not isinstance(user, dict):
        raise InitDataError("bad_user", "not an object")
    uid = user.get("id")
    # Telegram's ids fit in 52 bits; a bool is an int to Python, not an id.
    if not isinstance(uid, int) or isinstance(uid, bool) or not 0 < uid < 1 << 53:
        raise InitDataError("bad_user", "no valid id")
    return user


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
