"""The simulated world: users, chats, messages, and records of what the bot did.

Everything here is plain data with ``to_api()`` methods producing Bot API JSON
objects. :class:`SimUser` and :class:`SimChat` also have a few synchronous
world-changing methods (``block_bot``, ``remove_bot`` ...) that report the change to
the emulator, which queues the ``my_chat_member`` update Telegram would send.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "GROUP_ANONYMOUS_BOT",
    "ApiCall",
    "CallbackAnswer",
    "CallbackHandle",
    "ChatType",
    "ForumTopic",
    "InlineResults",
    "MemberStatus",
    "MessageRecord",
    "MessageVersion",
    "SettleTimeout",
    "SimChat",
    "SimUser",
    "SimulationError",
]

JSON = dict[str, Any]
ChatType = Literal["private", "group", "supergroup"]
MemberStatus = Literal["creator", "administrator", "member", "left", "kicked"]
PRESENT: tuple[MemberStatus, ...] = ("creator", "administrator", "member")

#: The user Telegram puts in ``from`` of a message an anonymous admin sends as the group
#: (the group itself is the message's ``sender_chat``).
GROUP_ANONYMOUS_BOT: JSON = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}


class SimulationError(Exception):
    """A test asked the simulated world for something a real user could not do."""


class SettleTimeout(TimeoutError):
    """The bot did not finish in time: ``settle()`` or an unanswered inline query."""


class _StatusListener(Protocol):
    def bot_status_changed(
        self, chat: SimChat, old: MemberStatus, new: MemberStatus, actor: SimUser | None
    ) -> None: ...


# ----------------------------------------------------------------------------- people


@dataclass(eq=False)
class SimUser:
    """A simulated Telegram user. Create with ``emu.add_user(...)``."""

    id: int
    first_name: str
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None
    #: Has the user ever written to the bot (sent /start)? Only then may the bot write.
    started: bool = False
    blocked: bool = False
    deactivated: bool = False
    private_chat: SimChat = field(init=False, repr=False)

    @property
    def private_chat_id(self) -> int:
        """The id of the user's private chat with the bot (equal to the user id)."""
        return self.id

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}" if self.last_name else self.first_name

    def block_bot(self) -> None:
        """Block the bot: every later send to this user fails with 403."""
        if not self.blocked:
            self.blocked = True
            self.private_chat.set_bot_status("kicked", actor=self)

    def unblock_bot(self) -> None:
        """Unblock the bot (as pressing *Restart* does, without sending /start)."""
        if self.blocked:
            self.blocked = False
            self.private_chat.set_bot_status("member", actor=self)

    def deactivate(self) -> None:
        """Delete the account: sends fail with 403 "user is deactivated"."""
        self.deactivated = True

    def to_api(self) -> JSON:
        """The Bot API ``User`` object."""
        user: JSON = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.last_name:
            user["last_name"] = self.last_name
        if self.username:
            user["username"] = self.username
        if self.language_code:
            user["language_code"] = self.language_code
        return user


# ----------------------------------------------------------------------------- messages


@dataclass(frozen=True)
class MessageVersion:
    """One state of a message: as first sent, or after an edit."""

    text: str
    entities: tuple[JSON, ...] = ()
    reply_markup: JSON | None = None
    source: str = ""
    parse_mode: str | None = None
    time: float = field(default_factory=time.time)

    def same_content(self, other: MessageVersion) -> bool:
        """What Telegram compares before answering "message is not modified"."""
        return (self.text, self.entities, self.reply_markup) == (
            other.text,
            other.entities,
            other.reply_markup,
        )


@dataclass(eq=False)
class MessageRecord:
    """A message in a simulated chat, with its whole edit history."""

    chat: SimChat = field(repr=False)
    message_id: int
    #: The user who sent it; ``None`` for the bot's own messages.
    sender: SimUser | None
    versions: list[MessageVersion]
    date: int = field(default_factory=lambda: int(time.time()))
    reply_to: MessageRecord | None = None
    via_bot: bool = False
    inline_message_id: str | None = None
    deleted: bool = False
    pinned: bool = False
    edit_date: int | None = None
    #: A sticker (the Bot API ``Sticker`` object) instead of a text.
    sticker: JSON | None = None
    #: A service message about members: ``{"new_chat_members": [...]}`` or
    #: ``{"left_chat_member": {...}}``, a topic's ``forum_topic_created`` ..., or a
    #: migration's ``migrate_to_chat_id``/``migrate_from_chat_id``, instead of a text.
    service: JSON | None = None
    #: The forum topic (its ``message_thread_id``) the message is in; ``None``: the
    #: General topic, or a chat that is not a forum.
    thread_id: int | None = None
    #: Sent by an anonymous admin as the group: ``from`` is GroupAnonymousBot and
    #: ``sender_chat`` the group (``sender`` still names the real user, for tests).
    anonymous: bool = False

    @property
    def from_bot(self) -> bool:
        return self.sender is None

    @property
    def current(self) -> MessageVersion:
        return self.versions[-1]

    @property
    def text(self) -> str:
        """The text as last edited (plain, after parsing the markup)."""
        return self.current.text

    @property
    def source(self) -> str:
        """The text as the bot last sent it, markup included."""
        return self.current.source

    @property
    def parse_mode(self) -> str | None:
        return self.current.parse_mode

    @property
    def entities(self) -> list[JSON]:
        return list(self.current.entities)

    @property
    def reply_markup(self) -> JSON | None:
        return self.current.reply_markup

    @property
    def edits(self) -> list[MessageVersion]:
        """Every version after the first, oldest first."""
        return self.versions[1:]

    @property
    def edit_history(self) -> list[MessageVersion]:
        """Every version, the original first."""
        return list(self.versions)

    @property
    def buttons(self) -> list[JSON]:
        """The current inline keyboard's buttons, row after row."""
        return list(iter_buttons(self.reply_markup))

    @property
    def button_labels(self) -> list[str]:
        """The current inline keyboard's labels, row after row."""
        return [str(b.get("text", "")) for b in self.buttons]

    def edit(self, version: MessageVersion) -> None:
        self.versions.append(version)
        self.edit_date = int(version.time)

    def to_api(self, bot: JSON, *, with_reply: bool = True) -> JSON:
        """The Bot API ``Message`` object as Telegram would return it now."""
        message: JSON = {"message_id": self.message_id}
        if self.anonymous:
            message["from"] = dict(GROUP_ANONYMOUS_BOT)
            message["sender_chat"] = self.chat.to_api()
        else:
            message["from"] = bot if self.sender is None else self.sender.to_api()
        message["chat"] = self.chat.to_api()
        message["date"] = self.date
        topic = self.chat.topics.get(self.thread_id) if self.thread_id is not None else None
        if topic is not None:
            message["message_thread_id"] = topic.thread_id
            message["is_topic_message"] = True
        if self.sticker is not None:
            message["sticker"] = self.sticker
        elif self.service is not None:
            message.update(self.service)
        else:
            message["text"] = self.text
        if self.entities:
            message["entities"] = self.entities
        markup = self.reply_markup
        if markup is not None and "inline_keyboard" in markup:
            message["reply_markup"] = {"inline_keyboard": markup["inline_keyboard"]}
        if self.edit_date is not None:
            message["edit_date"] = self.edit_date
        if self.via_bot:
            message["via_bot"] = bot
        if with_reply and self.reply_to is not None:
            message["reply_to_message"] = self.reply_to.to_api(bot, with_reply=False)
        elif with_reply and topic is not None and topic.thread_id != self.message_id:
            # As on Telegram: a message in a topic that replies to nothing else
            # "replies" to the topic's forum_topic_created message.
            root = self.chat.messages.get(topic.thread_id)
            if root is not None:
                message["reply_to_message"] = root.to_api(bot, with_reply=False)
        return message


def iter_buttons(markup: JSON | None) -> Iterator[JSON]:
    """Every button of an inline keyboard markup (none for other markups)."""
    if not markup:
        return
    for row in markup.get("inline_keyboard") or []:
        yield from row


# ----------------------------------------------------------------------------- chats


@dataclass
class Member:
    user: SimUser
    status: MemberStatus
    #: An admin (or the creator) with "Remain anonymous": posts as the group.
    anonymous: bool = False


#: The colors Telegram allows for a topic's icon.
TOPIC_COLORS = (7322096, 16766590, 13338331, 9367192, 16749490, 16478047)


@dataclass(eq=False)
class ForumTopic:
    """A topic of a forum supergroup. Its ``thread_id`` is the id of its
    ``forum_topic_created`` message, as on Telegram."""

    thread_id: int
    name: str
    icon_color: int = TOPIC_COLORS[0]
    icon_custom_emoji_id: str | None = None
    #: Who created it; ``None``: the bot.
    creator: SimUser | None = None
    closed: bool = False
    deleted: bool = False

    @property
    def message_thread_id(self) -> int:
        return self.thread_id

    def to_api(self) -> JSON:
        """The Bot API ``ForumTopic`` object."""
        topic: JSON = {
            "message_thread_id": self.thread_id,
            "name": self.name,
            "icon_color": self.icon_color,
        }
        if self.icon_custom_emoji_id:
            topic["icon_custom_emoji_id"] = self.icon_custom_emoji_id
        return topic


@dataclass(eq=False)
class SimChat:
    """A simulated chat: a user's private chat with the bot, or a group.

    Create groups with ``emu.add_group(...)``; private chats come with each user.
    """

    id: int
    type: ChatType
    title: str | None = None
    #: The user on the other side of a private chat.
    user: SimUser | None = None
    username: str | None = None
    bot_status: MemberStatus = "member"
    members: dict[int, Member] = field(default_factory=dict, repr=False)
    messages: dict[int, MessageRecord] = field(default_factory=dict, repr=False)
    next_message_id: int = 1
    chat_instance: str = ""
    #: A forum supergroup: messages go to topics (none: the General topic).
    is_forum: bool = False
    #: Forum topics by ``message_thread_id`` (deleted ones too).
    topics: dict[int, ForumTopic] = field(default_factory=dict, repr=False)
    #: May the bot (an administrator) manage topics: create without being refused,
    #: close others' topics, and post in closed ones.
    bot_manages_topics: bool = False
    #: Set once a basic group became a supergroup: the supergroup's id. Every call
    #: naming this chat is then refused with ``migrate_to_chat_id``.
    migrated_to: int | None = None
    #: In a supergroup made from a basic group: the old group's id.
    migrated_from: int | None = None
    _listener: _StatusListener | None = field(default=None, repr=False)

    @property
    def is_private(self) -> bool:
        return self.type == "private"

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    @property
    def bot_present(self) -> bool:
        return self.bot_status in PRESENT

    @property
    def bot_is_admin(self) -> bool:
        return self.bot_status in ("creator", "administrator")

    # world changes ------------------------------------------------------------

    def set_bot_status(self, status: MemberStatus, actor: SimUser | None = None) -> None:
        """Change the bot's membership, queueing the ``my_chat_member`` update."""
        old, self.bot_status = self.bot_status, status
        if old != status and self._listener is not None:
            self._listener.bot_status_changed(self, old, status, actor)

    def remove_bot(self, by: SimUser | None = None) -> None:
        """Kick the bot: later sends fail with 403 "bot was kicked from the ... chat"."""
        self.set_bot_status("kicked", actor=by or self.owner())

    def add_bot(self, *, admin: bool = False, by: SimUser | None = None) -> None:
        """(Re-)add the bot to the group, as a member or an administrator."""
        self.set_bot_status("administrator" if admin else "member", actor=by or self.owner())

    def set_member(
        self, user: SimUser, status: MemberStatus = "member", *, anonymous: bool = False
    ) -> None:
        """Add a user, change their status, or let them leave (``"left"``).

        ``anonymous``: an admin or the creator who remains anonymous (posts as the group).
        """
        if anonymous and status not in ("creator", "administrator"):
            raise SimulationError("only administrators can remain anonymous")
        self.members[user.id] = Member(user, status, anonymous)

    def is_anonymous(self, user: SimUser) -> bool:
        member = self.members.get(user.id)
        return bool(member and member.anonymous and member.status in ("creator", "administrator"))

    def topic(self, thread_id: int | None) -> ForumTopic | None:
        """A topic that exists (not deleted), by its ``message_thread_id``."""
        topic = self.topics.get(thread_id) if thread_id is not None else None
        return None if topic is None or topic.deleted else topic

    def status_of(self, user: SimUser) -> MemberStatus:
        if self.is_private:
            return "member" if user is self.user else "left"
        member = self.members.get(user.id)
        return member.status if member else "left"

    def is_member(self, user: SimUser) -> bool:
        return self.status_of(user) in PRESENT

    def owner(self) -> SimUser | None:
        return next((m.user for m in self.members.values() if m.status == "creator"), None)

    # messages -----------------------------------------------------------------

    def add_message(
        self,
        sender: SimUser | None,
        version: MessageVersion,
        *,
        reply_to: MessageRecord | None = None,
        via_bot: bool = False,
        thread_id: int | None = None,
        anonymous: bool = False,
    ) -> MessageRecord:
        record = MessageRecord(
            chat=self,
            message_id=self.next_message_id,
            sender=sender,
            versions=[version],
            reply_to=reply_to,
            via_bot=via_bot,
            thread_id=thread_id,
            anonymous=anonymous,
        )
        self.messages[record.message_id] = record
        self.next_message_id += 1
        return record

    def message(self, message_id: int) -> MessageRecord | None:
        """The message with this id unless it never existed or was deleted."""
        record = self.messages.get(message_id)
        return None if record is None or record.deleted else record

    # API objects ----------------------------------------------------------------

    def to_api(self) -> JSON:
        """The Bot API ``Chat`` object."""
        chat: JSON = {"id": self.id, "type": self.type}
        if self.is_private and self.user is not None:
            chat.update(
                {
                    k: v
                    for k, v in self.user.to_api().items()
                    if k not in ("is_bot", "language_code", "id")
                }
            )
        else:
            chat["title"] = self.title
        if self.username and not self.is_private:
            chat["username"] = self.username
        if self.is_forum:
            chat["is_forum"] = True
        return chat

    def full_info(self) -> JSON:
        """The Bot API ``ChatFullInfo`` object returned by getChat."""
        info = self.to_api()
        info.update(
            {
                "accent_color_id": 0,
                "max_reaction_count": 11,
                "accepted_gift_types": {
                    "unlimited_gifts": False,
                    "limited_gifts": False,
                    "unique_gifts": False,
                    "premium_subscription": False,
                    "gifts_from_channels": False,
                },
            }
        )
        return info


# ----------------------------------------------------------------------------- records


@dataclass
class ApiCall:
    """One request the bot made, and how it ended."""

    index: int
    method: str
    params: JSON
    chat_id: int | None
    time: float
    ok: bool | None = None  # None while the call is in progress
    error_code: int | None = None
    description: str | None = None
    result: Any = None
    #: The client's TCP port (None for calls made in-process): tells which process
    #: made a call when several share the bot (see testkit.fleet).
    peer: int | None = None


@dataclass(frozen=True)
class CallbackAnswer:
    """What the bot answered to a button press (answerCallbackQuery)."""

    query_id: str
    text: str | None
    show_alert: bool
    url: str | None = None
    cache_time: int = 0
    time: float = field(default_factory=time.time)


@dataclass
class PendingQuery:
    """A callback or inline query waiting for its answer."""

    user: SimUser
    chat: SimChat | None
    data: str = ""
    message: MessageRecord | None = None
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    # When the update was queued for the bot: with the answer's ``time`` it gives
    # the press->answer latency a person sees (the spinner on their button).
    asked: float = field(default_factory=time.time)


@dataclass
class CallbackHandle:
    """A button press; read ``answer`` after ``emu.settle()``."""

    id: str
    user: SimUser
    chat: SimChat
    message_id: int
    data: str
    _answers: dict[str, CallbackAnswer] = field(repr=False)
    _pending: PendingQuery = field(repr=False)
    #: The emulator's progress-based wait (``BotApiEmulator.wait_until``).
    _wait_until: Any = field(default=None, repr=False)

    @property
    def answer(self) -> CallbackAnswer | None:
        """The bot's answer, or ``None`` if it has not answered (yet)."""
        return self._answers.get(self.id)

    @property
    def answered(self) -> bool:
        return self.id in self._answers

    async def wait_answer(self, timeout: float = 10.0) -> CallbackAnswer:
        """Wait until the bot answers this query; ``SettleTimeout`` only once the bot
        has made no progress for ``timeout`` seconds."""
        if self._wait_until is not None:
            await self._wait_until(self._pending.answered.is_set, timeout)
        else:
            await asyncio.wait_for(self._pending.answered.wait(), timeout)
        return self._answers[self.id]


class InlineResults(list[JSON]):
    """The results the bot answered to an inline query (a list of result dicts)."""

    def __init__(
        self,
        query_id: str,
        query: str,
        user: SimUser,
        results: list[JSON],
        *,
        next_offset: str = "",
        cache_time: int = 300,
        is_personal: bool = False,
        button: JSON | None = None,
    ) -> None:
        super().__init__(results)
        self.query_id = query_id
        self.query = query
        self.user = user
        self.next_offset = next_offset
        self.cache_time = cache_time
        self.is_personal = is_personal
        self.button = button

    def by_id(self, result_id: str) -> JSON | None:
        return next((r for r in self if r.get("id") == result_id), None)
