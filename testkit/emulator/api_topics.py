"""Bot API methods about forum topics: create, edit, close, reopen and delete."""

from __future__ import annotations

from testkit.emulator.api_base import THREAD_NOT_FOUND, MethodTable, api_method
from testkit.emulator.errors import bad_request
from testkit.emulator.models import JSON, ForumTopic, SimChat
from testkit.emulator.params import Params

__all__ = ["TopicMethods"]

MAX_TOPIC_NAME = 128


class TopicMethods(MethodTable):
    """createForumTopic, editForumTopic, closeForumTopic, reopenForumTopic,
    deleteForumTopic. Telegram's rules: the bot must be an administrator that may
    manage topics, except to close, reopen or edit a topic it created itself; to
    delete one it needs the right to delete messages."""

    def _forum(self, p: Params) -> SimChat:
        chat = self.chat_for_bot(p)
        if not chat.is_forum:
            raise bad_request("the chat is not a forum")
        return chat

    def _manages(self, chat: SimChat) -> bool:
        return chat.bot_is_admin and chat.bot_manages_topics

    def _topic(self, p: Params, chat: SimChat, *, own_ok: bool) -> ForumTopic:
        thread_id = p.require_int("message_thread_id", "message thread not specified")
        topic = chat.topic(thread_id)
        if topic is None:
            raise bad_request(THREAD_NOT_FOUND)
        if not (self._manages(chat) or (own_ok and topic.creator is None)):
            raise bad_request("not enough rights to manage topics")
        return topic

    @api_method("createForumTopic")
    async def create_forum_topic(self, p: Params) -> JSON:
        chat = self._forum(p)
        if not self._manages(chat):
            raise bad_request("not enough rights to create a topic")
        name = p.get_str("name")
        if not name or len(name) > MAX_TOPIC_NAME:
            raise bad_request("TOPIC_TITLE_EMPTY" if not name else "TOPIC_TITLE_TOO_LONG")
        color = p.opt_int("icon_color")
        topic, _ = self.world.create_topic(
            chat, name, None, color, p.opt_str("icon_custom_emoji_id")
        )
        return topic.to_api()

    @api_method("editForumTopic")
    async def edit_forum_topic(self, p: Params) -> bool:
        chat = self._forum(p)
        topic = self._topic(p, chat, own_ok=True)
        edited: JSON = {}
        name = p.opt_str("name")
        if name:
            topic.name = edited["name"] = name
        emoji = p.opt_str("icon_custom_emoji_id")
        if emoji is not None:
            topic.icon_custom_emoji_id = emoji or None
            edited["icon_custom_emoji_id"] = emoji
        if not edited:
            raise bad_request("TOPIC_NOT_MODIFIED")
        self.world.topic_service(chat, topic, None, {"forum_topic_edited": edited})
        return True

    @api_method("closeForumTopic")
    async def close_forum_topic(self, p: Params) -> bool:
        chat = self._forum(p)
        topic = self._topic(p, chat, own_ok=True)
        if topic.closed:
            raise bad_request("TOPIC_NOT_MODIFIED")
        topic.closed = True
        self.world.topic_service(chat, topic, None, {"forum_topic_closed": {}})
        return True

    @api_method("reopenForumTopic")
    async def reopen_forum_topic(self, p: Params) -> bool:
        chat = self._forum(p)
        topic = self._topic(p, chat, own_ok=True)
        if not topic.closed:
            raise bad_request("TOPIC_NOT_MODIFIED")
        topic.closed = False
        self.world.topic_service(chat, topic, None, {"forum_topic_reopened": {}})
        return True

    @api_method("deleteForumTopic")
    async def delete_forum_topic(self, p: Params) -> bool:
        chat = self._forum(p)
        thread_id = p.require_int("message_thread_id", "message thread not specified")
        topic = chat.topic(thread_id)
        if topic is None:
            raise bad_request(THREAD_NOT_FOUND)
        if not chat.bot_is_admin:  # the right to delete messages
            raise bad_request("not enough rights to delete the topic")
        self.world.delete_topic(chat, topic)
        return True
