"""The rows this process committed, kept in memory as well as in the table.

Without ``shared`` this process is the only one writing and carrying out rows, so a
drain takes what it committed from here and reads the table only for a chat marked
unread (rows left by an earlier run, or a drain that failed). The one race: a drain
may read rows of a transaction that is committing and not yet noted here; those are
remembered as read early, so that the commit does not keep them a second time (they
would be carried out twice). With ``shared`` nothing is kept: every drain reads.
"""

from __future__ import annotations

from typing import Any

from telegram_bot.platform.outbox.rows import _game_of, _Row, _row_id

__all__ = ["KeptRows"]


class KeptRows:
    """Chat -> row id -> row; the chats to read from the table; the chats with a
    transaction committing and the rows of theirs already read; and the stored answers
    of presses their handlers are answering."""

    def __init__(self) -> None:
        self._rows: dict[int, dict[int, _Row]] = {}
        self._unread: set[int] = set()
        self._committing: dict[int, int] = {}
        self._read_early: dict[int, set[int]] = {}
        # query id -> row (see Outbox.answered)
        self._answers: dict[str, _Row] = {}

    # A transaction's commit.

    def committing(self, chats: set[int]) -> None:
        """From here the chats' new rows may be read by a drain before :meth:`keep`."""
        for chat_id in chats:
            self._committing[chat_id] = self._committing.get(chat_id, 0) + 1

    def committed(self, chats: set[int]) -> None:
        """The transaction is over (committed and noted, or rolled back)."""
        for chat_id in chats:
            left = self._committing[chat_id] - 1
            if left:
                self._committing[chat_id] = left
            else:
                del self._committing[chat_id]
                self._read_early.pop(chat_id, None)

    def keep(self, row_id: int, row: dict[str, Any]) -> None:
        """A committed row, unless a drain reads it from the table (or has read it)."""
        chat_id = row["chat_id"]
        if chat_id in self._unread or row_id in self._read_early.get(chat_id, ()):
            return
        self._rows.setdefault(chat_id, {})[row_id] = _Row(id=row_id, **row)

    def replace(self, chat_id: int, slot: str | None, message_id: int | None) -> list[int]:
        """Drop the edits of this message (deleted with a commit): their ids."""
        rows = self._rows.get(chat_id, {})
        gone = [r.id for r in rows.values() if r.replaced_by(slot, message_id)]
        for row_id in gone:
            del rows[row_id]
        return gone

    def may_wait(self, chat_id: int, slot: str | None, message_id: int | None) -> bool:
        """Might an edit of this message be stored and not carried out yet?"""
        if chat_id in self._unread:
            return True
        rows = self._rows.get(chat_id)
        return bool(rows) and any(r.replaced_by(slot, message_id) for r in rows.values())

    def add(self, row: _Row) -> None:
        self._rows.setdefault(row.chat_id, {})[row.id] = row

    # Drains.

    def is_unread(self, chat_id: int) -> bool:
        return chat_id in self._unread

    def mark_unread(self, chat_id: int) -> None:
        """The chat's rows are to be read from the table (again)."""
        self._unread.add(chat_id)

    def mark_read(self, chat_id: int) -> None:
        self._unread.discard(chat_id)

    def first(self, chat_id: int, n: int) -> list[_Row]:
        return sorted(self._rows.get(chat_id, {}).values(), key=_row_id)[:n]

    def read(self, chat_id: int, rows: list[_Row], more: bool) -> None:
        """A drain read these rows from the table (``more``: there may be others)."""
        kept = self._rows.get(chat_id, {})
        for row in rows:
            kept.pop(row.id, None)
        if chat_id in self._committing:
            self._read_early.setdefault(chat_id, set()).update(r.id for r in rows)
        if more:
            self._unread.add(chat_id)

    def done(self, row: _Row) -> None:
        rows = self._rows.get(row.chat_id)
        if rows is not None:
            rows.pop(row.id, None)

    def tidy(self, chat_id: int) -> None:
        """A drain ended: a chat with nothing kept costs no entry."""
        if not self._rows.get(chat_id, True):
            del self._rows[chat_id]

    def drop_chat(self, chat_id: int) -> list[int]:
        """Forget the chat's rows (deleted, or moved to another chat id): their ids."""
        return list(self._rows.pop(chat_id, {}))

    def drop_thread(self, chat_id: int, thread_id: int | None) -> None:
        """Forget the chat's rows to that forum topic (None: all of them)."""
        kept = self._rows.get(chat_id, {})
        for row_id in [i for i, r in kept.items() if thread_id is None or r.thread_id == thread_id]:
            del kept[row_id]

    def game_rows(self, game_id: str) -> set[int]:
        return {
            r.id
            for rows in self._rows.values()
            for r in rows.values()
            if _game_of(r.slot) == game_id
        }

    # Presses' stored answers.

    def keep_answer(self, query_id: str, row: _Row) -> None:
        self._answers[query_id] = row

    def take_answer(self, query_id: str | None) -> _Row | None:
        if query_id is None:
            return None
        return self._answers.pop(query_id, None)

    def sizes(self) -> dict[str, int]:
        return {
            "rows": len(self._rows),
            "unread": len(self._unread),
            "committing": len(self._committing),
            "read_early": len(self._read_early),
            "answers": len(self._answers),
        }
