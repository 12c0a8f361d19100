"""Bot API methods that send, edit and delete messages, and answer queries."""

from __future__ import annotations

from typing import Any

from testkit.emulator import errors
from testkit.emulator.api_base import MethodTable, api_method
from testkit.emulator.errors import bad_request
from testkit.emulator.markup import validate_markup
from testkit.emulator.models import (
    JSON,
    CallbackAnswer,
    InlineResults,
    MessageRecord,
    MessageVersion,
    SimChat,
)
from testkit.emulator.params import Params
from testkit.emulator.textparse import MAX_TEXT_LENGTH, parse_text

__all__ = ["MessageMethods"]

MAX_INLINE_RESULTS = 50
MAX_CALLBACK_ANSWER = 200


def make_version(
    source: str, parse_mode: str | None, entities: Any, reply_markup: JSON | None
) -> MessageVersion:
    """Parse a message text like Telegram, refusing empty and too long texts."""
    if not source:
        raise bad_request("message text is empty")
    parsed = parse_text(source, parse_mode, entities if isinstance(entities, list) else None)
    if not parsed.text:
        raise bad_request("message text is empty")
    if parsed.length > MAX_TEXT_LENGTH:
        raise bad_request("message is too long")
    return MessageVersion(
        text=parsed.text,
        entities=tuple(parsed.entities),
        reply_markup=reply_markup,
        source=source,
        parse_mode=parse_mode,
    )


class MessageMethods(MethodTable):
    """sendMessage, edits, deletions, answerCallbackQuery and answerInlineQuery."""

    @api_method("sendMessage")
    async def send_message(self, p: Params) -> JSON:
        chat = self.chat_for_bot(p)
        markup = validate_markup(p.get_json("reply_markup"))
        version = make_version(
            p.get_str("text"), p.opt_str("parse_mode"), p.get_json("entities"), markup
        )
        reply_to = self._reply_target(p, chat)
        thread_id = self.thread_for_send(p, chat, reply_to)
        record = chat.add_message(None, version, reply_to=reply_to, thread_id=thread_id)
        self.world.emit("message", record)
        return record.to_api(self.world.bot_user())

    def _reply_target(self, p: Params, chat: SimChat) -> MessageRecord | None:
        reply = p.get_json("reply_parameters") or {}
        message_id = reply.get("message_id", p.opt_int("reply_to_message_id"))
        if message_id is None:
            return None
        allow = reply.get("allow_sending_without_reply", p.get_bool("allow_sending_without_reply"))
        target = chat.message(int(message_id))
        # A reply stays in its topic: a message of another topic is not there.
        elsewhere = target is not None and target.thread_id != p.opt_int("message_thread_id")
        if chat.is_forum and "message_thread_id" in p and elsewhere:
            target = None
        if target is None and not allow:
            raise bad_request("message to be replied not found")
        return target

    # edits -------------------------------------------------------------------------

    def _edit_target(self, p: Params) -> MessageRecord:
        inline_id = p.opt_str("inline_message_id")
        if inline_id:
            record = self.world.inline_messages.get(inline_id)
            if record is None or record.deleted:
                raise bad_request("MESSAGE_ID_INVALID")
            return record
        chat = self.chat_for_bot(p)
        message_id = p.require_int("message_id", "message identifier is not specified")
        record = self.message_in(chat, message_id, "message to edit not found")
        if not record.from_bot:
            raise bad_request("message can't be edited")
        return record

    def _apply_edit(self, record: MessageRecord, version: MessageVersion) -> JSON | bool:
        if version.same_content(record.current):
            raise bad_request(errors.MESSAGE_NOT_MODIFIED)
        record.edit(version)
        self.world.emit("edit", record)
        if record.inline_message_id is not None:
            return True
        return record.to_api(self.world.bot_user())

    @api_method("editMessageText")
    async def edit_message_text(self, p: Params) -> JSON | bool:
        record = self._edit_target(p)
        markup = validate_markup(p.get_json("reply_markup"), inline_only=True)
        version = make_version(
            p.get_str("text"), p.opt_str("parse_mode"), p.get_json("entities"), markup
        )
        return self._apply_edit(record, version)

    @api_method("editMessageReplyMarkup")
    async def edit_message_reply_markup(self, p: Params) -> JSON | bool:
        record = self._edit_target(p)
        markup = validate_markup(p.get_json("reply_markup"), inline_only=True)
        old = record.current
        version = MessageVersion(old.text, old.entities, markup, old.source, old.parse_mode)
        return self._apply_edit(record, version)

    # deletions ---------------------------------------------------------------------

    @api_method("deleteMessage")
    async def delete_message(self, p: Params) -> bool:
        chat = self.chat_for_bot(p)
        message_id = p.require_int("message_id", "message identifier is not specified")
        self._delete(chat.message(message_id), chat.bot_is_admin or chat.is_private)
        return True

    @api_method("deleteMessages")
    async def delete_messages(self, p: Params) -> bool:
        chat = self.chat_for_bot(p)
        for message_id in p.get_json("message_ids") or []:
            record = chat.message(int(message_id))
            if record is not None and (record.from_bot or chat.bot_is_admin or chat.is_private):
                record.deleted = True
                self.world.emit("delete", record)
        return True

    def _delete(self, record: MessageRecord | None, may_delete_others: bool) -> None:
        if record is None:
            raise bad_request("message to delete not found")
        if not record.from_bot and not may_delete_others:
            raise bad_request("message can't be deleted")
        record.deleted = True
        self.world.emit("delete", record)

    # answers -----------------------------------------------------------------------

    @api_method("answerCallbackQuery")
    async def answer_callback_query(self, p: Params) -> bool:
        query_id = p.get_str("callback_query_id")
        pending = self.world.callback_queries.get(query_id)
        if pending is None or query_id in self.world.callback_answers:
            raise bad_request(errors.QUERY_TOO_OLD)
        text = p.opt_str("text")
        if text is not None and len(text) > MAX_CALLBACK_ANSWER:
            raise bad_request("MESSAGE_TOO_LONG")
        answer = CallbackAnswer(
            query_id=query_id,
            text=text,
            show_alert=p.get_bool("show_alert"),
            url=p.opt_str("url"),
            cache_time=p.get_int("cache_time"),
        )
        self.world.callback_answers[query_id] = answer
        pending.answered.set()
        self.world.emit("callback_answer", answer)
        return True

    @api_method("answerInlineQuery")
    async def answer_inline_query(self, p: Params) -> bool:
        query_id = p.get_str("inline_query_id")
        pending = self.world.inline_queries.get(query_id)
        if pending is None or query_id in self.world.inline_answers:
            raise bad_request(errors.QUERY_TOO_OLD)
        results = p.get_json("results") or []
        _validate_inline_results(results)
        answer = self.world.inline_answers[query_id] = InlineResults(
            query_id,
            pending.data,
            pending.user,
            results,
            next_offset=p.get_str("next_offset"),
            cache_time=p.get_int("cache_time", 300),
            is_personal=p.get_bool("is_personal"),
            button=p.get_json("button"),
        )
        pending.answered.set()
        self.world.emit("inline_answer", answer)
        return True


def _validate_inline_results(results: Any) -> None:
    if not isinstance(results, list):
        raise bad_request("can't parse inline query results JSON object")
    if len(results) > MAX_INLINE_RESULTS:
        raise bad_request("RESULTS_TOO_MUCH")
    ids = [str(r.get("id", "")) for r in results]
    if len(set(ids)) != len(ids):
        raise bad_request("RESULT_ID_DUPLICATE")
    for result in results:
        if not result.get("id") or len(str(result["id"]).encode("utf-8")) > 64:
            raise bad_request("RESULT_ID_INVALID")
        validate_markup(result.get("reply_markup"), inline_only=True)
        content = result.get("input_message_content")
        if isinstance(content, dict) and "message_text" in content:
            make_version(
                str(content["message_text"]),
                content.get("parse_mode"),
                content.get("entities"),
                None,
            )
