"""The test side of the emulator: simulated users acting in chats.

:class:`UserActions` is the part of :class:`~testkit.emulator.BotApiEmulator`
that writes messages, presses buttons and uses inline mode, queueing the updates
Telegram would send the bot for each action.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from testkit.emulator.api_messages import make_version
from testkit.emulator.markup import find_button
from testkit.emulator.models import (
    JSON,
    CallbackHandle,
    ForumTopic,
    InlineResults,
    MessageRecord,
    MessageVersion,
    PendingQuery,
    SettleTimeout,
    SimChat,
    SimulationError,
    SimUser,
)
from testkit.emulator.state import World
from testkit.emulator.textparse import command_entities

__all__ = ["ChatLike", "TopicLike", "UserActions"]

#: A chat, or a user standing for their private chat with the bot.
ChatLike = SimChat | SimUser
#: A forum topic, or its ``message_thread_id``.
TopicLike = ForumTopic | int
_COMMAND = re.compile(r"^/([A-Za-z0-9_]+)(?:@([A-Za-z0-9_]+))?")


class UserActions:
    """Simulated users writing, pressing buttons and using inline mode."""

    world: World

    async def wait_until(self, condition: Callable[[], bool], timeout: float = 10.0) -> None:
        raise NotImplementedError  # BotApiEmulator waits on the bot's progress

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
        self,
        user: SimUser,
        chat: ChatLike,
        text: str,
        *,
        reply_to: int | None = None,
        topic: TopicLike | None = None,
        anonymous: bool = False,
    ) -> MessageRecord:
        """``user`` writes ``text`` in ``chat``; the bot gets it if Telegram would send it.

        Commands get ``bot_command`` entities. In a private chat any message (normally
        /start) lets the bot write to the user; /start also unblocks a blocked bot. In
        groups privacy mode applies: the bot sees commands, replies to its messages
        and messages via itself, or everything when it is an admin or privacy is off.

        In a forum the message goes to ``topic`` (a reply: to the replied message's
        topic; neither: the General topic); a closed topic takes only admins'
        messages. ``anonymous``: an admin who remains anonymous writes as the group
        (see :meth:`send_as_anonymous_admin`).
        """
        target = self.chat(chat)
        self._check_can_post(user, target, text)
        if target.is_private:
            user.started = True
        replied = target.message(reply_to) if reply_to is not None else None
        if reply_to is not None and replied is None:
            raise SimulationError(f"no message {reply_to} to reply to in chat {target.id}")
        thread_id = self._thread_for_user(user, target, topic, replied)
        if anonymous and not target.is_anonymous(user):
            raise SimulationError(
                f"{user.first_name} is not an anonymous admin of {target.title!r}"
            )
        version = MessageVersion(text, tuple(command_entities(text)), source=text)
        record = target.add_message(
            user, version, reply_to=replied, thread_id=thread_id, anonymous=anonymous
        )
        self.world.emit("message", record)
        self._deliver_message(record)
        await asyncio.sleep(0)
        return record

    async def send_as_anonymous_admin(
        self,
        user: SimUser,
        chat: ChatLike,
        text: str,
        *,
        reply_to: int | None = None,
        topic: TopicLike | None = None,
    ) -> MessageRecord:
        """``user``, an admin (or the creator) of the group, writes as the group: the bot
        gets ``from`` = GroupAnonymousBot (id 1087968824) and ``sender_chat`` = the
        group. Turns the admin's "Remain anonymous" on if it was off, so getChatMember
        answers ``is_anonymous`` from then on (as on Telegram)."""
        target = self.chat(chat)
        status = target.status_of(user)
        if not target.is_group or status not in ("creator", "administrator"):
            raise SimulationError(f"{user.first_name} is not an admin of chat {target.id}")
        target.set_member(user, status, anonymous=True)
        return await self.send_message(
            user, target, text, reply_to=reply_to, topic=topic, anonymous=True
        )

    def _thread_for_user(
        self,
        user: SimUser,
        chat: SimChat,
        topic: TopicLike | None,
        replied: MessageRecord | None,
    ) -> int | None:
        if topic is None:
            thread_id = replied.thread_id if replied is not None and chat.is_forum else None
        elif not chat.is_forum:
            raise SimulationError(f"chat {chat.id} is not a forum")
        else:
            thread_id = topic.thread_id if isinstance(topic, ForumTopic) else int(topic)
            if replied is not None and replied.thread_id != thread_id:
                raise SimulationError(f"message {replied.message_id} is in another topic")
        if thread_id is None:
            return None
        found = chat.topic(thread_id)
        if found is None:
            raise SimulationError(f"no topic {thread_id} in chat {chat.id}")
        if found.closed and chat.status_of(user) not in ("creator", "administrator"):
            raise SimulationError(f"topic {found.name!r} is closed")
        return thread_id

    async def edit_message(
        self, user: SimUser, chat: ChatLike, message_id: int, text: str
    ) -> MessageRecord:
        """``user`` edits their own message: an ``edited_message`` update, under the
        same rules as a new message (privacy mode in groups)."""
        target = self.chat(chat)
        record = target.message(message_id)
        if record is None or record.sender is not user:
            raise SimulationError(f"{user.first_name} has no message {message_id} to edit")
        record.edit(MessageVersion(text, tuple(command_entities(text)), source=text))
        self.world.emit("edit", record)
        if self._bot_receives(record):
            self.world.updates.push("edited_message", record.to_api(self.world.bot_user()))
        await asyncio.sleep(0)
        return record

    async def send_sticker(
        self, user: SimUser, chat: ChatLike, emoji: str = "🙂", *, reply_to: int | None = None
    ) -> MessageRecord:
        """``user`` sends a sticker (the bot sees it in a private chat, as a reply to
        its own message, or where it reads every message)."""
        target = self.chat(chat)
        self._check_can_post(user, target, "")
        replied = target.message(reply_to) if reply_to is not None else None
        record = target.add_message(user, MessageVersion("", source=""), reply_to=replied)
        number = self.world.new_id()
        record.sticker = {
            "file_id": f"sticker-{number}",
            "file_unique_id": f"s{number}",
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
            "emoji": emoji,
        }
        self.world.emit("message", record)
        self._deliver_message(record)
        await asyncio.sleep(0)
        return record

    async def join_chat(self, user: SimUser, chat: ChatLike) -> MessageRecord:
        """``user`` joins a group: a ``new_chat_members`` service message (bots get
        those whatever their privacy mode) and a ``chat_member`` update (sent only if
        the bot asked for it in ``allowed_updates``)."""
        return await self._membership(user, self.chat(chat), "member")

    async def leave_chat(self, user: SimUser, chat: ChatLike) -> MessageRecord:
        """``user`` leaves a group: ``left_chat_member`` and ``chat_member``."""
        return await self._membership(user, self.chat(chat), "left")

    async def _membership(self, user: SimUser, chat: SimChat, status: str) -> MessageRecord:
        if not chat.is_group:
            raise SimulationError("only groups have members joining and leaving")
        old = chat.status_of(user)
        chat.set_member(user, status)  # type: ignore[arg-type]
        record = chat.add_message(user, MessageVersion("", source=""))
        record.service = (
            {"new_chat_members": [user.to_api()]}
            if status == "member"
            else {"left_chat_member": user.to_api()}
        )
        self.world.emit("message", record)
        if chat.bot_present:
            bot = self.world.bot_user()
            self.world.updates.push("message", record.to_api(bot))
            self.world.updates.push(
                "chat_member",
                {
                    "chat": chat.to_api(),
                    "from": user.to_api(),
                    "date": record.date,
                    "old_chat_member": self.world.member_object(user.to_api(), old),
                    "new_chat_member": self.world.member_object(user.to_api(), status),  # type: ignore[arg-type]
                },
            )
        await asyncio.sleep(0)
        return record

    def _check_can_post(self, user: SimUser, chat: SimChat, text: str) -> None:
        if chat.migrated_to is not None:
            raise SimulationError(f"group {chat.id} became the supergroup {chat.migrated_to}")
        if chat.is_private:
            if chat.user is not user:
                owner = chat.user.first_name if chat.user else chat.id
                raise SimulationError(f"{user.first_name} cannot write in {owner}'s private chat")
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
        # A migrated group's old messages are shown in its supergroup.
        members = self.chat(target.migrated_to) if target.migrated_to is not None else target
        if not (members.is_member(user) or record.inline_message_id):
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
            query_id,
            user,
            target,
            message_id,
            data,
            self.world.callback_answers,
            pending,
            self.wait_until,
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
        """``user`` types ``@bot query`` in ``chat``; returns the bot's answered results
        (:class:`SettleTimeout` if the bot makes no progress for ``timeout`` s)."""
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
            await self.wait_until(pending.answered.is_set, timeout)
        except SettleTimeout:
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
        self.world.emit("message", record)
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
