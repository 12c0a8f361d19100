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
from collections.abc import Callable, Iterable, Sequence
from types import EllipsisType, TracebackType
from typing import Any

from telegram.ext import Application

from testkit.emulator.actions import ChatLike, TopicLike, UserActions
from testkit.emulator.api import BotApi
from testkit.emulator.api_bot import scope_key
from testkit.emulator.limits import ErrorInjector, InjectedError, RateLimiter, RateViolation
from testkit.emulator.models import (
    JSON,
    ApiCall,
    CallbackAnswer,
    ChatType,
    ForumTopic,
    InlineResults,
    MessageRecord,
    MessageVersion,
    SettleTimeout,
    SimChat,
    SimulationError,
    SimUser,
)
from testkit.emulator.server import ApiServer
from testkit.emulator.state import Listener, World
from testkit.emulator.webhook import WebhookDeliverer

__all__ = ["BotApiEmulator", "SettleTimeout"]

_USER_IDS_FROM = 100_000_000
_SUPERGROUP_IDS_FROM = 1_001_000_000_000


class BotApiEmulator(UserActions):
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
        forum: bool = False,
        bot_manages_topics: bool = False,
        anonymous_admins: Iterable[SimUser] = (),
    ) -> SimChat:
        """A group with the bot in it (an administrator if ``bot_admin``).

        ``creator`` defaults to the first admin. ``notify_bot`` queues the
        ``my_chat_member`` update Telegram sends when the bot is added. ``forum``: a
        forum supergroup (topics: :meth:`create_topic`); ``bot_manages_topics``: the
        bot (an admin) has the right to manage topics. ``anonymous_admins``: admins
        (or the creator) who remain anonymous (also in ``admins`` or ``creator``).
        """
        if chat_type == "private":
            raise SimulationError("groups are 'group' or 'supergroup' chats")
        if forum and chat_type != "supergroup":
            raise SimulationError("only supergroups can be forums")
        number = self.world.new_id()
        chat_id = -(_SUPERGROUP_IDS_FROM + number) if chat_type == "supergroup" else -number
        admins = list(admins)
        creator = creator or (admins[0] if admins else None)
        chat = self._new_chat(chat_id, chat_type, title=title, username=username)
        chat.is_forum, chat.bot_manages_topics = forum, bot_manages_topics
        chat.bot_status = "left"
        anonymous = {u.id for u in anonymous_admins}
        for user in members:
            chat.set_member(user, "member")
        for user in admins:
            chat.set_member(user, "administrator", anonymous=user.id in anonymous)
        if creator is not None:
            chat.set_member(creator, "creator", anonymous=creator.id in anonymous)
        if not anonymous <= {u.id for u in admins} | ({creator.id} if creator else set()):
            raise SimulationError("anonymous_admins must be admins or the creator")
        if notify_bot:
            chat.add_bot(admin=bot_admin, by=creator)
        else:
            chat.bot_status = "administrator" if bot_admin else "member"
        return chat

    # forum topics ------------------------------------------------------------------------

    async def create_topic(
        self,
        chat: ChatLike | int,
        name: str,
        *,
        by: SimUser | None = None,
        icon_color: int | None = None,
    ) -> ForumTopic:
        """``by`` (default: the group's creator) opens a topic in a forum; the bot
        gets the ``forum_topic_created`` service message if it is in the group."""
        target = self.chat(chat)
        actor = by or target.owner()
        if actor is None or target.status_of(actor) not in ("creator", "administrator"):
            raise SimulationError("topics are created by the group's admins here")
        topic, record = self.world.create_topic(target, name, actor, icon_color)
        self._deliver_service(record)
        await asyncio.sleep(0)
        return topic

    async def close_topic(
        self, chat: ChatLike | int, topic: TopicLike, *, by: SimUser | None = None
    ) -> MessageRecord:
        """Close a topic (``forum_topic_closed``): the bot's sends there fail with
        400 TOPIC_CLOSED, unless it manages topics."""
        return await self._topic_state(chat, topic, by, closed=True)

    async def reopen_topic(
        self, chat: ChatLike | int, topic: TopicLike, *, by: SimUser | None = None
    ) -> MessageRecord:
        """Reopen a closed topic (``forum_topic_reopened``)."""
        return await self._topic_state(chat, topic, by, closed=False)

    async def _topic_state(
        self, chat: ChatLike | int, topic: TopicLike, by: SimUser | None, *, closed: bool
    ) -> MessageRecord:
        target = self.chat(chat)
        found = self.topic(target, topic)
        if found.closed == closed:
            raise SimulationError(
                f"topic {found.name!r} is already {'closed' if closed else 'open'}"
            )
        found.closed = closed
        kind = "forum_topic_closed" if closed else "forum_topic_reopened"
        record = self.world.topic_service(target, found, by or target.owner(), {kind: {}})
        self._deliver_service(record)
        await asyncio.sleep(0)
        return record

    def delete_topic(self, chat: ChatLike | int, topic: TopicLike) -> None:
        """Delete a topic and its messages (Telegram tells the bot nothing): the bot's
        sends there fail with 400 "message thread not found"."""
        target = self.chat(chat)
        self.world.delete_topic(target, self.topic(target, topic))

    def topic(self, chat: ChatLike | int, topic: TopicLike) -> ForumTopic:
        """A topic of a forum (not deleted), by its ``message_thread_id``."""
        target = self.chat(chat)
        thread_id = topic.thread_id if isinstance(topic, ForumTopic) else int(topic)
        found = target.topic(thread_id)
        if found is None:
            raise SimulationError(f"no topic {thread_id} in chat {target.id}")
        return found

    def topics(self, chat: ChatLike | int) -> list[ForumTopic]:
        """The forum's topics (not deleted), oldest first."""
        return [t for t in self.chat(chat).topics.values() if not t.deleted]

    def topic_log(
        self,
        chat: ChatLike | int,
        topic: TopicLike | None,
        *,
        include_deleted: bool = True,
        include_service: bool = False,
    ) -> list[MessageRecord]:
        """The messages of one topic (``None``: the General topic), oldest first;
        service messages (topic created/closed) only with ``include_service``."""
        thread_id = (
            None if topic is None else topic.thread_id if isinstance(topic, ForumTopic) else topic
        )
        return [
            r
            for r in self.chat_log(chat, include_deleted=include_deleted)
            if r.thread_id == thread_id and (include_service or r.service is None)
        ]

    def _deliver_service(self, record: MessageRecord) -> None:
        """Service messages reach the bot whatever its privacy mode."""
        if record.chat.bot_present:
            self.world.updates.push("message", record.to_api(self.world.bot_user()))

    # migration -------------------------------------------------------------------------

    async def migrate(
        self, chat: ChatLike | int, *, by: SimUser | None = None, from_first: bool = False
    ) -> SimChat:
        """Upgrade a basic group to a supergroup with a new id (-100...), as Telegram
        does: the old group gets a ``migrate_to_chat_id`` service message (from ``by``,
        default its creator), the supergroup a ``migrate_from_chat_id`` one (from
        GroupAnonymousBot as the supergroup); the bot gets both (``from_first``: the
        supergroup's first). The members and the bot move; from then on every call
        naming the old id fails with 400 "group chat was upgraded to a supergroup
        chat" and ``parameters.migrate_to_chat_id`` (python-telegram-bot's
        ``ChatMigrated``). The old group's messages stay there, read-only. Returns
        the supergroup."""
        old = self.chat(chat)
        if old.type != "group" or old.migrated_to is not None:
            raise SimulationError(f"chat {old.id} is not a basic group")
        actor = by or old.owner()
        new_id = -(_SUPERGROUP_IDS_FROM + self.world.new_id())
        new = self._new_chat(new_id, "supergroup", title=old.title, username=old.username)
        new.bot_status, new.migrated_from = old.bot_status, old.id
        new.members = dict(old.members)
        bot_present = old.bot_present
        to_record = old.add_message(actor, MessageVersion("", source=""))
        to_record.service = {"migrate_to_chat_id": new_id}
        from_record = new.add_message(actor, MessageVersion("", source=""), anonymous=True)
        from_record.service = {"migrate_from_chat_id": old.id}
        bot = self.world.bot_user()
        updates = [to_record.to_api(bot), from_record.to_api(bot)]
        old.migrated_to, old.members = new_id, {}
        old.bot_status = "left"
        for record in (to_record, from_record):
            self.world.emit("message", record)
        if bot_present:
            for update in reversed(updates) if from_first else updates:
                self.world.updates.push("message", update)
        await asyncio.sleep(0)
        return new

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

    # waiting -------------------------------------------------------------------------------

    def watch(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Let ``settle()`` see a python-telegram-bot Application's own work.

        While the application has updates queued or being handled, the bot counts
        as busy, so handlers that do slow non-API work (a database, a computation)
        before they answer are waited for even with a short ``quiet``.
        """
        queue = application.update_queue
        # Counted from put() until handled (task_done), gaps between the two included.
        self.add_busy_probe(lambda: getattr(queue, "_unfinished_tasks", queue.qsize()))

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(kind, subject)`` on every change (see :meth:`World.emit`).

        For demos that show the chats live: kinds are ``"message"``, ``"edit"``,
        ``"delete"``, ``"callback_answer"`` and ``"inline_answer"``.
        """
        self.world.listeners.append(listener)

    def add_busy_probe(self, probe: Callable[[], int | bool]) -> None:
        """``settle()`` also waits while ``probe()`` is true (non-zero)."""
        self._probes.append(probe)

    async def settle(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Wait until the bot has fetched every update and been quiet for ``quiet`` s.

        Quiet means: no API call in flight or started, no update delivered, and no
        busy watched application (see :meth:`watch`) for ``quiet`` seconds. Raises
        :class:`SettleTimeout` once nothing at all has changed (no call, no delivery,
        no change in what the probes report) for ``timeout`` seconds: a slow bot on
        a busy machine is waited for as long as it makes progress.
        """
        loop = asyncio.get_running_loop()
        queue = self.world.updates
        last_busy = 0.0
        seen: tuple[Any, ...] = ()
        changed = loop.time()
        while True:
            now = loop.time()
            probes = tuple(probe() for probe in self._probes)
            if any(probes):
                last_busy = now
            idle = now - max(self.server.last_activity, queue.last_delivery, last_busy)
            # A watched application confirms what it fetched only once it has queued
            # it (with its next getUpdates), so until then an update is still its work.
            waiting = queue.pending if self._probes else queue.undelivered
            busy = waiting or self.server.inflight or self.webhook.busy
            if not busy and idle >= quiet:
                return
            # Long polls (getUpdates) are not progress: a stuck bot still polls.
            progress = (
                self.server.last_activity,
                queue.last_delivery,
                queue.undelivered,
                queue.pending,
                probes,
            )
            if progress != seen:
                seen, changed = progress, now
            elif now - changed >= timeout:
                raise SettleTimeout(
                    f"no progress for {timeout}s: {queue.undelivered} update(s) never "
                    f"fetched, {self.server.inflight} call(s) in flight, last activity "
                    f"{idle:.2f}s ago"
                )
            await asyncio.sleep(min(0.01, max(quiet - idle, 0.002)))

    async def wait_until(self, condition: Callable[[], bool], timeout: float = 10.0) -> None:
        """Wait until ``condition()`` holds; :class:`SettleTimeout` only after
        ``timeout`` seconds in which the bot made no progress at all (no API call
        started or ended, no update delivered)."""
        loop = asyncio.get_running_loop()
        queue = self.world.updates
        seen: tuple[Any, ...] = ()
        changed = loop.time()
        while not condition():
            progress = (self.server.last_activity, queue.last_delivery, self.server.inflight)
            now = loop.time()
            if progress != seen:
                seen, changed = progress, now
            elif now - changed >= timeout:
                raise SettleTimeout(f"no progress for {timeout}s while waiting")
            await asyncio.sleep(0.005)

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
        chat_id: ChatLike | int | None = None,
        *,
        since: int = 0,
        ok: bool | None = None,
    ) -> list[ApiCall]:
        """The calls to ``methods`` (all if ``None``) about a chat from index ``since`` on."""
        names = (
            {methods.lower()} if isinstance(methods, str) else {m.lower() for m in methods or ()}
        )
        if isinstance(chat_id, SimChat | SimUser):
            chat_id = self.chat(chat_id).id
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
        self,
        chat: ChatLike | int,
        *,
        from_bot: bool | None = True,
        topic: TopicLike | EllipsisType | None = ...,
    ) -> MessageRecord | None:
        """The newest not deleted message, by default the bot's (``from_bot=None``: anyone's);
        in a forum, of one ``topic`` if given (``None``: the General topic)."""
        if topic is ...:
            records = self.chat_log(chat, include_deleted=False)
        else:
            records = self.topic_log(chat, topic, include_deleted=False)
        for record in reversed(records):
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

    def forget_history(self) -> None:
        """Drop what a long run (a load benchmark) no longer needs, to keep the
        emulator's memory flat: the call log, answered queries, and every message
        version but the current one. Messages themselves stay (they can be edited)."""
        self.server.calls.clear()
        world = self.world
        for query_id in [q for q in world.callback_queries if q in world.callback_answers]:
            del world.callback_queries[query_id]
            del world.callback_answers[query_id]
        for chat in world.chats.values():
            for record in chat.messages.values():
                if len(record.versions) > 1:
                    del record.versions[:-1]

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
