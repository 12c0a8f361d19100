"""Bot API methods about the bot itself: identity, updates, webhooks and commands."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from testkit.emulator.api_base import MethodTable, api_method
from testkit.emulator.errors import bad_request, conflict
from testkit.emulator.models import JSON
from testkit.emulator.params import Params

__all__ = ["BotMethods"]

MAX_COMMANDS = 100
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_COMMAND_NAME = re.compile(r"^[a-z0-9_]{1,32}$")


def scope_key(scope: Any) -> str:
    """A stable key for a ``BotCommandScope`` (the default scope when absent)."""
    if not isinstance(scope, dict):
        scope = {"type": "default"}
    return json.dumps(scope, sort_keys=True)


class BotMethods(MethodTable):
    """getMe, getUpdates, webhooks, commands, logOut and close."""

    @api_method("getMe")
    async def get_me(self, p: Params) -> JSON:
        return self.world.get_me()

    @api_method("logOut")
    async def log_out(self, p: Params) -> bool:
        return True

    @api_method("close")
    async def close(self, p: Params) -> bool:
        return True

    # updates ---------------------------------------------------------------------

    @api_method("getUpdates")
    async def get_updates(self, p: Params) -> list[JSON]:
        if self.world.webhook.url:
            raise conflict(
                "can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first"
            )
        queue = self.world.updates
        allowed = p.get_json("allowed_updates")
        if isinstance(allowed, list):
            queue.allowed_updates = [str(kind) for kind in allowed]
        limit = min(max(p.get_int("limit", 100), 1), 100)
        timeout = max(p.get_float("timeout"), 0.0)  # an Integer on Telegram; floats help tests
        return await queue.get(p.opt_int("offset"), limit, timeout)

    @api_method("setWebhook")
    async def set_webhook(self, p: Params) -> bool:
        url = p.get_str("url")
        if url:
            parts = urlsplit(url)
            local = parts.hostname in LOCAL_HOSTS
            if parts.scheme != "https" and not (local and parts.scheme == "http"):
                raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        hook = self.world.webhook
        hook.url = url
        hook.secret_token = p.opt_str("secret_token")
        hook.max_connections = p.get_int("max_connections", 40)
        hook.ip_address = p.opt_str("ip_address")
        hook.last_error_date = hook.last_error_message = None
        allowed = p.get_json("allowed_updates")
        if isinstance(allowed, list):
            self.world.updates.allowed_updates = [str(kind) for kind in allowed]
        if p.get_bool("drop_pending_updates"):
            self.world.updates.drop_all()
        self.world.updates.notify()
        return True

    @api_method("deleteWebhook")
    async def delete_webhook(self, p: Params) -> bool:
        self.world.webhook.url = ""
        if p.get_bool("drop_pending_updates"):
            self.world.updates.drop_all()
        return True

    @api_method("getWebhookInfo")
    async def get_webhook_info(self, p: Params) -> JSON:
        queue = self.world.updates
        return self.world.webhook.info(queue.pending, queue.allowed_updates)

    # commands --------------------------------------------------------------------

    def _commands_key(self, p: Params) -> tuple[str, str]:
        return scope_key(p.get_json("scope")), p.get_str("language_code")

    @api_method("setMyCommands")
    async def set_my_commands(self, p: Params) -> bool:
        commands = p.get_json("commands")
        if not isinstance(commands, list):
            raise bad_request("commands is empty")
        if len(commands) > MAX_COMMANDS:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        for command in commands:
            if not _COMMAND_NAME.match(str(command.get("command", "")).lower()):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        key = self._commands_key(p)
        if commands:
            self.world.commands[key] = [
                {"command": str(c["command"]).lower(), "description": str(c["description"])}
                for c in commands
            ]
        else:
            self.world.commands.pop(key, None)
        return True

    @api_method("getMyCommands")
    async def get_my_commands(self, p: Params) -> list[JSON]:
        return list(self.world.commands.get(self._commands_key(p), []))

    @api_method("deleteMyCommands")
    async def delete_my_commands(self, p: Params) -> bool:
        self.world.commands.pop(self._commands_key(p), None)
        return True
