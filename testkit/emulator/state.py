"""What the emulated Telegram knows: the bot, users, chats, queries and settings."""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from testkit.emulator.errors import (
    BLOCKED,
    CANT_INITIATE,
    USER_DEACTIVATED,
    ApiError,
    bad_request,
    forbidden,
)
from testkit.emulator.models import (
    JSON,
    TOPIC_COLORS,
    CallbackAnswer,
    ForumTopic,
    InlineResults,
    MemberStatus,
    MessageRecord,
    MessageVersion,
    PendingQuery,
    SimChat,
    SimUser,
)
from testkit.emulator.updates import UpdateQueue

__all__ = ["Listener", "WebhookConfig", "World"]

log = logging.getLogger(__name__)

#: Called with an event kind and its object, see :meth:`World.emit`.
Listener = Callable[[str, Any], None]

#: Rights of an administrator in the simulated groups (the bot's too).
ADMIN_RIGHTS: JSON = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": True,
    "can_edit_stories": True,
    "can_delete_stories": True,
    "can_pin_messages": True,
    "can_manage_topics": False,
}


@dataclass
class WebhookConfig:
    url: str = ""
    secret_token: str | None = None
    max_connections: int = 40
    ip_address: str | None = None
    last_error_date: int | None = None
    last_error_message: str | None = None

    def info(self, pending: int, allowed_updates: list[str]) -> JSON:
        """The Bot API ``WebhookInfo`` object."""
        info: JSON = {
            "url": self.url,
            "has_custom_certificate": False,
            "pending_update_count": pending,
        }
        if self.url:
            info["max_connections"] = self.max_connections
            if self.ip_address:
                info["ip_address"] = self.ip_address
            if allowed_updates:
                info["allowed_updates"] = allowed_updates
        if self.last_error_date is not None:
            info["last_error_date"] = self.last_error_date
            info["last_error_message"] = self.last_error_message
        return info


@dataclass
class World:
    """The emulated server's state, shared by the Bot API methods and the test API."""

    token: str
    bot_username: str
    bot_name: str
    privacy_mode: bool = True
    inline_mode: bool = True
    users: dict[int, SimUser] = field(default_factory=dict)
    chats: dict[int, SimChat] = field(default_factory=dict)
    updates: UpdateQueue = field(default_factory=UpdateQueue)
    inline_messages: dict[str, MessageRecord] = field(default_factory=dict)
    callback_queries: dict[str, PendingQuery] = field(default_factory=dict)
    callback_answers: dict[str, CallbackAnswer] = field(default_factory=dict)
    inline_queries: dict[str, PendingQuery] = field(default_factory=dict)
    inline_answers: dict[str, InlineResults] = field(default_factory=dict)
    #: setMyCommands storage: (scope JSON, language code) -> commands.
    commands: dict[tuple[str, str], list[JSON]] = field(default_factory=dict)
    webhook: WebhookConfig = field(default_factory=WebhookConfig)
    listeners: list[Listener] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def bot_id(self) -> int:
        return int(self.token.split(":", 1)[0])

    def bot_user(self) -> JSON:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.bot_name,
            "username": self.bot_username,
        }

    def get_me(self) -> JSON:
        return {
            **self.bot_user(),
            "can_join_groups": True,
            "can_read_all_group_messages": not self.privacy_mode,
            "supports_inline_queries": self.inline_mode,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    def new_id(self) -> int:
        """A fresh number for users, chats and query ids."""
        return next(self._ids)

    def new_query_id(self) -> str:
        return str(4_000_000_000_000_000 + self.new_id())

    def emit(self, kind: str, subject: Any) -> None:
        """Tell the listeners what happened.

        Kinds: ``"message"`` (a new message, the bot's or a user's: a
        :class:`MessageRecord`), ``"edit"``, ``"delete"`` (a :class:`MessageRecord`),
        ``"callback_answer"`` (a :class:`CallbackAnswer`), ``"inline_answer"``
        (:class:`InlineResults`).
        """
        for listener in list(self.listeners):
            try:
                listener(kind, subject)
            except Exception:
                log.exception("emulator listener failed on %s", kind)

    # world changes -----------------------------------------------------------------

    def bot_status_changed(
        self, chat: SimChat, old: MemberStatus, new: MemberStatus, actor: SimUser | None
    ) -> None:
        """Queue the ``my_chat_member`` update Telegram sends when the bot's status changes."""
        bot = self.bot_user()
        self.updates.push(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": actor.to_api() if actor else bot,
                "date": int(time.time()),
                "old_chat_member": self.member_object(bot, old),
                "new_chat_member": self.member_object(bot, new),
            },
        )

    # forum topics (for the Bot API methods and the test helpers alike) ---------------------

    def create_topic(
        self,
        chat: SimChat,
        name: str,
        creator: SimUser | None,
        icon_color: int | None = None,
        icon_custom_emoji_id: str | None = None,
    ) -> tuple[ForumTopic, MessageRecord]:
        """A new topic and its ``forum_topic_created`` message (whose id is the topic's)."""
        if not chat.is_forum:
            raise bad_request("the chat is not a forum")
        color = TOPIC_COLORS[0] if icon_color is None else icon_color
        if color not in TOPIC_COLORS:
            raise bad_request("TOPIC_ICON_COLOR_INVALID")  # not checked against Telegram
        created: JSON = {"name": name, "icon_color": color}
        if icon_custom_emoji_id:
            created["icon_custom_emoji_id"] = icon_custom_emoji_id
        record = chat.add_message(creator, MessageVersion("", source=""))
        record.service = {"forum_topic_created": created}
        topic = ForumTopic(record.message_id, name, color, icon_custom_emoji_id, creator)
        chat.topics[topic.thread_id] = topic
        record.thread_id = topic.thread_id
        self.emit("message", record)
        return topic, record

    def topic_service(
        self, chat: SimChat, topic: ForumTopic, actor: SimUser | None, service: JSON
    ) -> MessageRecord:
        """A service message in ``topic`` (``forum_topic_closed`` ...)."""
        record = chat.add_message(actor, MessageVersion("", source=""), thread_id=topic.thread_id)
        record.service = service
        self.emit("message", record)
        return record

    def delete_topic(self, chat: SimChat, topic: ForumTopic) -> None:
        """Delete a topic with every message in it (Telegram sends no update)."""
        topic.deleted = True
        for record in chat.messages.values():
            if record.thread_id == topic.thread_id and not record.deleted:
                record.deleted = True
                self.emit("delete", record)

    # look-ups for the Bot API --------------------------------------------------------

    def resolve_chat(self, chat_id: Any) -> SimChat:
        """The chat a ``chat_id`` parameter names (an id or ``@username``)."""
        if chat_id is None or chat_id == "":
            raise bad_request("chat_id is empty")
        chat: SimChat | None = None
        if isinstance(chat_id, str) and chat_id.startswith("@"):
            name = chat_id[1:].lower()
            chat = next(
                (c for c in self.chats.values() if (c.username or "").lower() == name), None
            )
        else:
            try:
                chat = self.chats.get(int(chat_id))
            except (TypeError, ValueError):
                chat = None
        if chat is None:
            raise bad_request("chat not found")
        if chat.migrated_to is not None:
            # python-telegram-bot raises ChatMigrated for these parameters.
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to},
            )
        return chat

    def check_access(self, chat: SimChat) -> None:
        """Raise the 403 Telegram answers when the bot may not act in ``chat``."""
        if chat.is_private:
            user = chat.user
            assert user is not None
            if user.deactivated:
                raise forbidden(USER_DEACTIVATED)
            if user.blocked:
                raise forbidden(BLOCKED)
            if not user.started:
                raise forbidden(CANT_INITIATE)
            return
        kind = chat.type
        if chat.bot_status == "kicked":
            raise forbidden(f"bot was kicked from the {kind} chat")
        if chat.bot_status == "left":
            raise forbidden(f"bot is not a member of the {kind} chat")

    def chat_id_of(self, params: JSON) -> int | None:
        """The chat a call acts on, if any (for logs, error injection, rate limits)."""
        inline_id = params.get("inline_message_id")
        if isinstance(inline_id, str) and inline_id in self.inline_messages:
            return self.inline_messages[inline_id].chat.id
        chat_id = params.get("chat_id")
        if isinstance(chat_id, str) and chat_id.startswith("@"):
            try:
                return self.resolve_chat(chat_id).id
            except ApiError:
                return None
        try:
            return int(chat_id) if chat_id is not None else None
        except (TypeError, ValueError):
            return None

    def member_object(
        self,
        user: JSON,
        status: MemberStatus,
        *,
        anonymous: bool = False,
        manages_topics: bool = False,
    ) -> JSON:
        """The Bot API ``ChatMember`` object for ``user`` with ``status``."""
        member: JSON = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = anonymous
        elif status == "administrator":
            member.update(ADMIN_RIGHTS)
            member["is_anonymous"] = anonymous
            member["can_manage_topics"] = manages_topics
        elif status == "kicked":
            member["until_date"] = 0
        return member
