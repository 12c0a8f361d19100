"""Bot API methods about chats: information, members, actions, pins, leaving."""

from __future__ import annotations

from testkit.emulator.api_base import MethodTable, api_method
from testkit.emulator.errors import bad_request, forbidden
from testkit.emulator.models import JSON, PRESENT, SimChat
from testkit.emulator.params import Params

__all__ = ["ChatMethods"]

CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)


class ChatMethods(MethodTable):
    """getChat, getChatMember, getChatAdministrators, sendChatAction, pins, leaveChat."""

    def _visible_chat(self, p: Params) -> SimChat:
        """A chat the bot may look at (groups it is in; any user's private chat)."""
        chat = self.world.resolve_chat(p.raw("chat_id"))
        if chat.is_group and not chat.bot_present:
            self.world.check_access(chat)
        return chat

    @api_method("getChat")
    async def get_chat(self, p: Params) -> JSON:
        return self._visible_chat(p).full_info()

    @api_method("getChatMember")
    async def get_chat_member(self, p: Params) -> JSON:
        chat = self._visible_chat(p)
        user_id = p.require_int("user_id", "user_id is empty")
        if user_id == self.world.bot_id:
            return self._bot_member(chat)
        user = self.world.users.get(user_id)
        if user is None:
            # GroupAnonymousBot too: a bot must tell an anonymous admin by the
            # message's sender_chat, not by asking about the user in ``from``.
            raise bad_request("user not found")
        return self.world.member_object(
            user.to_api(), chat.status_of(user), anonymous=chat.is_anonymous(user)
        )

    def _bot_member(self, chat: SimChat) -> JSON:
        return self.world.member_object(
            self.world.bot_user(),
            chat.bot_status,
            manages_topics=chat.is_forum and chat.bot_manages_topics,
        )

    @api_method("getChatAdministrators")
    async def get_chat_administrators(self, p: Params) -> list[JSON]:
        chat = self._visible_chat(p)
        if chat.is_private:
            raise bad_request("there are no administrators in the private chat")
        admins = [
            self.world.member_object(m.user.to_api(), m.status, anonymous=m.anonymous)
            for m in chat.members.values()
            if m.status in ("creator", "administrator")
        ]
        if chat.bot_is_admin:
            admins.append(self._bot_member(chat))
        return admins

    @api_method("getChatMemberCount")
    async def get_chat_member_count(self, p: Params) -> int:
        chat = self._visible_chat(p)
        if chat.is_private:
            return 2
        humans = sum(1 for m in chat.members.values() if m.status in PRESENT)
        return humans + (1 if chat.bot_present else 0)

    @api_method("sendChatAction")
    async def send_chat_action(self, p: Params) -> bool:
        chat = self.chat_for_bot(p)
        self.thread_for_send(p, chat, None, check_closed=False)
        if p.get_str("action") not in CHAT_ACTIONS:
            raise bad_request("wrong parameter action in request")
        return True

    # pins -------------------------------------------------------------------------

    def _pinnable_chat(self, p: Params) -> SimChat:
        chat = self.chat_for_bot(p)
        if chat.is_group and not chat.bot_is_admin:
            raise bad_request("not enough rights to manage pinned messages in the chat")
        return chat

    @api_method("pinChatMessage")
    async def pin_chat_message(self, p: Params) -> bool:
        chat = self._pinnable_chat(p)
        message_id = p.require_int("message_id", "message identifier is not specified")
        self.message_in(chat, message_id, "message to pin not found").pinned = True
        return True

    @api_method("unpinChatMessage")
    async def unpin_chat_message(self, p: Params) -> bool:
        chat = self._pinnable_chat(p)
        message_id = p.opt_int("message_id")
        pinned = [m for m in chat.messages.values() if m.pinned and not m.deleted]
        if message_id is None and pinned:
            pinned[-1].pinned = False
        elif message_id is not None:
            self.message_in(chat, message_id, "message to unpin not found").pinned = False
        return True

    @api_method("unpinAllChatMessages")
    async def unpin_all_chat_messages(self, p: Params) -> bool:
        chat = self._pinnable_chat(p)
        for record in chat.messages.values():
            record.pinned = False
        return True

    # membership -------------------------------------------------------------------

    @api_method("leaveChat")
    async def leave_chat(self, p: Params) -> bool:
        chat = self.world.resolve_chat(p.raw("chat_id"))
        if chat.is_private:
            raise bad_request("chat member status can't be changed in private chats")
        if not chat.bot_present:
            raise forbidden(f"bot is not a member of the {chat.type} chat")
        chat.set_bot_status("left")
        return True
