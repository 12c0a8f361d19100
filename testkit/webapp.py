"""A Mini App ``initData`` signed as Telegram signs it, for tests and the demo.

Telegram's clients put it in the page's URL hash (``#tgWebAppData=...``); the tests
open the page the same way, with one built here for a seated user.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote, urlencode

from telegram_bot.web.initdata import sign

__all__ = ["init_data", "page_hash"]


def init_data(
    bot_token: str,
    user_id: int,
    first_name: str = "Player",
    *,
    language_code: str | None = "fa",
    username: str | None = None,
    auth_date: int | None = None,
    start_param: str | None = None,
    extra: dict[str, str] | None = None,
) -> str:
    """A correctly signed ``initData`` query string for this user."""
    user: dict[str, Any] = {"id": user_id, "first_name": first_name}
    if username is not None:
        user["username"] = username
    if language_code is not None:
        user["language_code"] = language_code
    fields = {
        "query_id": f"AAH{user_id}",
        "user": json.dumps(user, ensure_ascii=False, separators=(",", ":")),
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        **(extra or {}),
    }
    if start_param is not None:
        fields["start_param"] = start_param
    fields["hash"] = sign(fields, bot_token)
    return urlencode(fields, quote_via=quote)


def page_hash(data: str, theme: dict[str, str] | None = None, platform: str = "tdesktop") -> str:
    """The URL fragment Telegram opens a Mini App with: its ``initData``, theme and
    version (``#tgWebAppData=...&tgWebAppThemeParams=...``)."""
    params = {"tgWebAppData": data, "tgWebAppVersion": "8.0", "tgWebAppPlatform": platform}
    if theme is not None:
        params["tgWebAppThemeParams"] = json.dumps(theme, separators=(",", ":"))
    return "#" + urlencode(params, quote_via=quote)
