"""BotApiEmulator: a local Telegram for the real python-telegram-bot Application.

    async with BotApiEmulator(token="123456:TEST", bot_username="HokmTestBot") as emu:
        app = (
            Application.builder().token(emu.token)
            .base_url(emu.base_url).base_file_url(emu.base_file_url).build()
        )
        alice = emu.add_user("Alice", language_code="fa")
        group = emu.add_group("Hokm club", members=[alice], admins=[alice])
        ...  # start app, app.updater.start_polling(poll_interval=0)
        await emu.send_message(alice, alice, "/start")
        await emu.settle()
        assert "Welcome" in emu.last_message(alice).text

The test side acts as users (``send_message``, ``press``, ``inline_query`` ...),
waits with ``settle()`` and reads what the bot did (``chat_log``, ``calls`` ...).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Any

from telegram.ext import Application

from .api import BotApi
from .api_bot import scope_key
from .api_messages import make_version
from .limits import ErrorInjector, InjectedError, RateLimiter, RateViolation
from .markup import find_button
from .models import (
    JSON,
    ApiCall,
    CallbackAnswer,
    CallbackHandle,
    ChatType,
    InlineResults,
    MessageRecord,
    MessageVersion,
    PendingQuery,
    SimChat,
    SimulationError,
    SimUser,
)
from .server import ApiServer
from .state import World
from .textparse import command_entities
from .webhook import WebhookDeliverer

__all__ = ["BotApiEmulator", "SettleTimeout"]

ChatLike = SimChat | SimUser
_COMMAND = re.compile(r"^/([A-Za-z0-9_]+)(?:@([A-Za-z0-9_]+))?")
_USER_IDS_FROM = 100_000_000
_SUPERGROUP_IDS_FROM = 1_001_000_000_000


class SettleTimeout(TimeoutError):
    """``settle()`` gave up: the bot kept working or stopped fetching updates."""


class BotApiEmulator:
    """An emulated Telegram Bot API server with simulated users and chats."""

    def __init__(
        self,
        token: str = "123456:TEST",
        bot_username: str = "HokmTestBot",
        bot_name: str = "Hokm",
        *,
        privacy_mode: bool = True,
        inline_mode: bool = True,
    ) -> None:
        self.world = World(token, bot_username, bot_name, privacy_mode, inline_mode)
        self.injector = ErrorInjector()
        self.limiter = RateLimiter()
        self.server = ApiServer(self.world, BotApi(self.world), self.injector, self.limiter)
        self.webhook = WebhookDeliverer(self.world)
        self._probes: list[Callable[[], int | bool]] = []

    # lifecycle ------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> BotApiEmulator:
        """Start serving on ``host`` (a free port unless ``port`` is given)."""
        await self.server.start(host, port)
        self.webhook.start()
        return self

    async def stop(self) -> None:
        """Stop serving; waiting long polls return empty first."""
        self.world.updates.close()
        await self.webhook.stop()
        await self.server.stop()

    async def __aenter__(self) -> BotApiEmulator:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def token(self) -> str:
        return self.world.token

    @property
    def base_url(self) -> str:
        """For ``ApplicationBuilder().base_url(...)``: ``http://127.0.0.1:PORT/bot``."""
        return f"{self.server.url}/bot"

    @property
    def base_file_url(self) -> str:
        """For ``ApplicationBuilder().base_file_url(...)`` (no files are served)."""
        return f"{self.server.url}/file/bot"

    @property
    def bot_id(self) -> int:
        return self.world.bot_id

    @property
    def bot_username(self) -> str:
        return self.world.bot_username

    # building the world ---------------------------------------------------------------

    def add_user(
        self,
        first_name: str,
        *,
        language_code: str | None = None,
        username: str | None = None,
        last_name: str | None = None,
        started: bool = False,
    ) -> SimUser:
        """A new user with a private chat with the bot (``user.private_chat_id == user.id``).

        ``started=True`` pretends the user already sent /start earlier.
        """
        user = SimUser(
            id=_USER_IDS_FROM + self.world.new_id(),
            first_name=first_name,
            last_name=last_name,
            username=username,
            language_code=language_code,
            started=started,
        )
        user.private_chat = self._new_chat(user.id, "private", user=user)
        self.world.users[user.id] = user
        return user

    def add_group(
        self,
        title: str,
        members: Iterable[SimUser] = (),
        admins: Iterable[SimUser] = (),
        *,
        creator: SimUser | None = None,
        bot_admin: bool = False,
        username: str | None = None,
        chat_type: ChatType = "supergroup",
        notify_bot: bool = False,
    ) -> SimChat:
        """A group with the bot in it (an administrator if ``bot_admin``).

        ``creator`` defaults to the first admin. ``notify_bot`` queues the
        ``my_chat_member`` update Telegram sends when the bot is added.
        """
        if chat_type == "private":
            raise SimulationError("groups are 'group' or 'supergroup' chats")
        number = self.world.new_id()
        chat_id = -(_SUPERGROUP_IDS_FROM + number) if chat_type == "supergroup" else -number
        admins = list(admins)
        creator = creator or (admins[0] if admins else None)
        chat = self._new_chat(chat_id, chat_type, title=title, username=username)
        chat.bot_status = "left"
        for user in members:
            chat.set_member(user, "member")
        for user in admins:
            chat.set_member(user, "administrator")
        if creator is not None:
            chat.set_member(creator, "creator")
        if notify_bot:
            chat.add_bot(admin=bot_admin, by=creator)
        else:
            chat.bot_status = "administrator" if bot_admin else "member"
        return chat

    def _new_chat(self, chat_id: int, chat_type: ChatType, **fields: Any) -> SimChat:
        chat = SimChat(
            id=chat_id,
            type=chat_type,
            chat_instance=str(-(7_000_000_000_000_000_000 + abs(chat_id))),
            _listener=self.world,
            **fields,
        )
        self.world.chats[chat_id] = chat
        return chat

    def chat(self, chat: ChatLike | int) -> SimChat:
        """A chat by id; a user stands for their private chat with the bot."""
        if isinstance(chat, SimChat):
            return chat
        if isinstance(chat, SimUser):
            return chat.private_chat
        try:
            return self.world.chats[chat]
        except KeyError:
            raise SimulationError(f"no chat {chat}") from None

    def user(self, user_id: int) -> SimUser:
        return self.world.users[user_id]

    # acting as users --------------------------------------------------------------------

    async def send_message(
        self, user: SimUser, chat: ChatLike, text: str, *, reply_to: int | None = None
    ) -> MessageRecord:
        """``user`` writes ``text`` in ``chat``; the bot gets it if Telegram would send it.

        Commands get ``bot_command`` entities. In a private chat any message (normally
        /start) lets the bot write to the user; /start also unblocks a blocked bot. In
        groups privacy mode applies: the bot sees commands, replies to its messages
        and messages via itself, or everything when it is an admin or privacy is off.
        """
        target = self.chat(chat)
        self._check_can_post(user, target, text)
        if target.is_private:
            user.started = True
        replied = target.message(reply_to) if reply_to is not None else None
        if reply_to is not None and replied is None:
            raise SimulationError(f"no message {reply_to} to reply to in chat {target.id}")
        version = MessageVersion(text, tuple(command_entities(text)), source=text)
        record = target.add_message(user, version, reply_to=replied)
        self._deliver_message(record)
        await asyncio.sleep(0)
        return record

    def _check_can_post(self, user: SimUser, chat: SimChat, text: str) -> None:
        if chat.is_private:
            if chat.user is not user:
                raise SimulationError(f"{user.first_name} cannot write in {chat.user}'s chat")
            if user.blocked:
                if not text.startswith("/start"):
                    raise SimulationError(f"{user.first_name} blocked the bot; send /start")
                user.unblock_bot()
        elif not chat.is_member(user):
            raise SimulationError(f"{user.first_name} is not a member of {chat.title!r}")

    def _deliver_message(self, record: MessageRecord) -> None:
        if self._bot_receives(record):
            self.world.updates.push("message", record.to_api(self.world.bot_user()))

    def _bot_receives(self, record: MessageRecord) -> bool:
        chat = record.chat
        if chat.is_private:
            return True
        if not chat.bot_present:
            return False
        if not self.world.privacy_mode or chat.bot_is_admin or record.via_bot:
            return True
        if record.reply_to is not None and record.reply_to.from_bot:
            return True
        command = _COMMAND.match(record.text)
        if command is None:
            return False
        mention = command.group(2)
        return mention is None or mention.lower() == self.world.bot_username.lower()

    async def press(
        self, user: SimUser, chat: ChatLike, message_id: int, data: str
    ) -> CallbackHandle:
        """``user`` presses a button with ``data`` on a message: a callback_query update.

        The data is not checked against the current keyboard (an outdated client may
        still show old buttons); use :meth:`press_button` for that.
        """
        target = self.chat(chat)
        record = target.message(message_id)
        if record is None:
            raise SimulationError(f"no message {message_id} in chat {target.id}")
        if not (target.is_member(user) or record.inline_message_id):
            raise SimulationError(f"{user.first_name} cannot see chat {target.id}")
        query_id = self.world.new_query_id()
        payload: JSON = {
            "id": query_id,
            "from": user.to_api(),
            "chat_instance": target.chat_instance,
            "data": data,
        }
        if record.inline_message_id is not None:
            payload["inline_message_id"] = record.inline_message_id
        else:
            payload["message"] = record.to_api(self.world.bot_user())
        pending = PendingQuery(user, target, data, record)
        self.world.callback_queries[query_id] = pending
        self.world.updates.push("callback_query", payload)
        await asyncio.sleep(0)
        return CallbackHandle(
            query_id, user, target, message_id, data, self.world.callback_answers, pending
        )

    async def press_button(
        self, user: SimUser, chat: ChatLike, message_id: int, text_contains: str
    ) -> CallbackHandle:
        """Press the callback button whose label contains (or data starts with) the text."""
        target = self.chat(chat)
        record = target.message(message_id)
        if record is None:
            raise SimulationError(f"no message {message_id} in chat {target.id}")
        button = find_button(record, text_contains, kind="callback_data")
        return await self.press(user, target, message_id, str(button["callback_data"]))

    async def press_switch_inline(
        self,
        user: SimUser,
        chat: ChatLike,
        message_id: int,
        text_contains: str = "",
        *,
        timeout: float = 10.0,
    ) -> InlineResults:
        """Press a ``switch_inline_query_current_chat`` button: an inline query here."""
        target = self.chat(chat)
        record = target.message(message_id)
        if record is None:
            raise SimulationError(f"no message {message_id} in chat {target.id}")
        button = find_button(record, text_contains, kind="switch_inline_query_current_chat")
        query = str(button["switch_inline_query_current_chat"])
        return await self.inline_query(user, target, query, timeout=timeout)

    async def inline_query(
        self,
        user: SimUser,
        chat: ChatLike | None = None,
        query: str = "",
        *,
        offset: str = "",
        timeout: float = 10.0,
    ) -> InlineResults:
        """``user`` types ``@bot query`` in ``chat``; returns the bot's answered results."""
        if not self.world.inline_mode:
            raise SimulationError("inline mode is off for this bot")
        target = self.chat(chat) if chat is not None else None
        query_id = self.world.new_query_id()
        payload: JSON = {"id": query_id, "from": user.to_api(), "query": query, "offset": offset}
        if target is not None:
            payload["chat_type"] = "sender" if target.is_private else target.type
        pending = PendingQuery(user, target, query)
        self.world.inline_queries[query_id] = pending
        self.world.updates.push("inline_query", payload)
        try:
            await asyncio.wait_for(pending.answered.wait(), timeout)
        except TimeoutError:
            raise SettleTimeout(f"the bot did not answer inline query {query!r}") from None
        return self.world.inline_answers[query_id]

    async def choose_inline_result(
        self, user: SimUser, chat: ChatLike, result: JSON | str
    ) -> MessageRecord:
        """``user`` picks an inline result: it is posted in ``chat`` via the bot.

        The bot gets the message (``via_bot`` set) and a chosen_inline_result update;
        a result with a keyboard gets an ``inline_message_id`` the bot can edit.
        """
        target = self.chat(chat)
        result_id = result if isinstance(result, str) else str(result.get("id"))
        answer, chosen = self._find_inline_result(user, result_id)
        content = chosen.get("input_message_content") or {}
        if "message_text" not in content:
            raise SimulationError(f"inline result {result_id!r} has no message text")
        self._check_can_post(user, target, "")
        if target.is_private:
            user.started = True
        markup = chosen.get("reply_markup")
        version = make_version(
            str(content["message_text"]), content.get("parse_mode"), content.get("entities"), markup
        )
        record = target.add_message(user, version, via_bot=True)
        chosen_payload: JSON = {
            "result_id": result_id,
            "from": user.to_api(),
            "query": answer.query,
        }
        if markup:
            record.inline_message_id = f"inline-{self.world.new_query_id()}"
            self.world.inline_messages[record.inline_message_id] = record
            chosen_payload["inline_message_id"] = record.inline_message_id
        self._deliver_message(record)
        self.world.updates.push("chosen_inline_result", chosen_payload)
        await asyncio.sleep(0)
        return record

    def _find_inline_result(self, user: SimUser, result_id: str) -> tuple[InlineResults, JSON]:
        for answer in reversed(self.world.inline_answers.values()):
            found = answer.by_id(result_id) if answer.user is user else None
            if found is not None:
                return answer, found
        raise SimulationError(f"{user.first_name} was never offered inline result {result_id!r}")

    # waiting -------------------------------------------------------------------------------

    def watch(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Let ``settle()`` see a python-telegram-bot Application's own work.

        While the application has updates queued or being handled, the bot counts
        as busy, so handlers that do slow non-API work (a database, a computation)
        before they answer are waited for even with a short ``quiet``.
        """
        self.add_busy_probe(
            lambda: (
                application.update_queue.qsize()
                + application.update_processor.current_concurrent_updates
            )
        )

    def add_busy_probe(self, probe: Callable[[], int | bool]) -> None:
        """``settle()`` also waits while ``probe()`` is true (non-zero)."""
        self._probes.append(probe)

    async def settle(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Wait until the bot has fetched every update and been quiet for ``quiet`` s.

        Quiet means: no API call in flight or started, no update delivered, and no
        busy watched application (see :meth:`watch`) for ``quiet`` seconds. Raises
        :class:`SettleTimeout` after ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        queue = self.world.updates
        last_busy = 0.0
        while True:
            now = loop.time()
            if any(probe() for probe in self._probes):
                last_busy = now
            idle = now - max(self.server.last_activity, queue.last_delivery, last_busy)
            busy = queue.undelivered or self.server.inflight or self.webhook.busy
            if not busy and idle >= quiet:
                return
            if now >= deadline:
                raise SettleTimeout(
                    f"not settled after {timeout}s: {queue.undelivered} update(s) never "
                    f"fetched, {self.server.inflight} call(s) in flight, last activity "
                    f"{idle:.2f}s ago"
                )
            await asyncio.sleep(min(0.01, max(quiet - idle, 0.002)))

    # reading what happened -------------------------------------------------------------------

    @property
    def calls(self) -> list[ApiCall]:
        """Every API call, in order (``call.index`` is its position)."""
        return self.server.calls

    def mark(self) -> int:
        """The current position in :attr:`calls`, for ``count_calls(since=...)``."""
        return len(self.server.calls)

    def calls_to(
        self,
        methods: str | Sequence[str] | None = None,
        chat: ChatLike | int | None = None,
        *,
        since: int = 0,
        ok: bool | None = None,
    ) -> list[ApiCall]:
        """The calls to ``methods`` about ``chat`` from index ``since`` on."""
        names = (
            {methods.lower()} if isinstance(methods, str) else {m.lower() for m in methods or ()}
        )
        chat_id = self.chat(chat).id if isinstance(chat, SimChat | SimUser) else chat
        return [
            call
            for call in self.server.calls[since:]
            if (not names or call.method.lower() in names)
            and (chat_id is None or call.chat_id == chat_id)
            and (ok is None or call.ok == ok)
        ]

    def count_calls(
        self,
        methods: str | Sequence[str] | None = None,
        chat_id: ChatLike | int | None = None,
        since: int = 0,
        *,
        ok: bool | None = None,
    ) -> int:
        """How many calls :meth:`calls_to` finds."""
        return len(self.calls_to(methods, chat_id, since=since, ok=ok))

    def chat_log(
        self, chat: ChatLike | int, *, include_deleted: bool = True
    ) -> list[MessageRecord]:
        """Every message of the chat (the bot's and the users'), oldest first."""
        records = sorted(self.chat(chat).messages.values(), key=lambda r: r.message_id)
        return [r for r in records if include_deleted or not r.deleted]

    def last_message(
        self, chat: ChatLike | int, *, from_bot: bool | None = True
    ) -> MessageRecord | None:
        """The newest not deleted message, by default the bot's (``from_bot=None``: anyone's)."""
        for record in reversed(self.chat_log(chat, include_deleted=False)):
            if from_bot is None or record.from_bot == from_bot:
                return record
        return None

    def message(self, chat: ChatLike | int, message_id: int) -> MessageRecord:
        """A message by id (deleted ones too)."""
        try:
            return self.chat(chat).messages[message_id]
        except KeyError:
            raise SimulationError(f"no message {message_id} in chat {chat}") from None

    def visible_text(self, chat: ChatLike | int) -> str:
        """Everything ever shown in the chat: every version of every message and its buttons."""
        lines: list[str] = []
        for record in self.chat_log(chat):
            for version in record.versions:
                lines.append(version.text)
                lines.extend(
                    str(button.get("text", ""))
                    for row in (version.reply_markup or {}).get("inline_keyboard") or []
                    for button in row
                )
        return "\n".join(lines)

    def callback_answer(self, query_id: str) -> CallbackAnswer | None:
        """The bot's answer to a button press, if it answered."""
        return self.world.callback_answers.get(query_id)

    @property
    def callback_answers(self) -> dict[str, CallbackAnswer]:
        return self.world.callback_answers

    @property
    def inline_answers(self) -> dict[str, InlineResults]:
        return self.world.inline_answers

    def commands(self, scope: JSON | None = None, language_code: str = "") -> list[JSON]:
        """The commands set with setMyCommands for a scope and language."""
        return list(self.world.commands.get((scope_key(scope), language_code), []))

    @property
    def pending_updates(self) -> int:
        """Updates the bot has not confirmed yet."""
        return self.world.updates.pending

    # faults and limits ---------------------------------------------------------------------

    def inject_error(
        self,
        method: str,
        chat_id: ChatLike | int | None = None,
        *,
        code: int = 429,
        description: str | None = None,
        retry_after: int | None = None,
        parameters: JSON | None = None,
        times: int | None = 1,
    ) -> InjectedError:
        """Make the next ``times`` calls of ``method`` (``"*"``: any) fail with ``code``.

        Only calls about ``chat_id`` if given. A 429 carries ``retry_after`` (default
        1) as Telegram does; other codes get Telegram's bare description by default.
        """
        if isinstance(chat_id, SimChat | SimUser):
            chat_id = self.chat(chat_id).id
        return self.injector.add(
            method,
            chat_id=chat_id,
            code=code,
            description=description,
            retry_after=retry_after,
            parameters=parameters,
            times=times,
        )

    def clear_errors(self) -> None:
        self.injector.clear()

    def enforce_limits(self, per_group_per_minute: int = 20, per_second: int = 30) -> None:
        """Answer 429 like Telegram when sends and edits come too fast."""
        self.limiter.configure(per_group_per_minute, per_second)

    def relax_limits(self) -> None:
        self.limiter.disable()

    @property
    def rate_violations(self) -> int:
        """How many calls the flood limits refused."""
        return len(self.limiter.violations)

    @property
    def rate_violation_log(self) -> list[RateViolation]:
        return self.limiter.violations
