"""What the outbox knows of the chats' messages: what each one shows and is about to
show, which message each slot names, and the newest message of each chat.

It exists so that an edit equal to what a message shows (or is about to show) is not
sent, and a drain need not read a slot's message id for every edit. Without ``shared``
all of it is kept here, bounded; with ``shared`` what a message shows is kept in the
database instead (``shown_messages``), where every process reads it, and the rest is
not used. Forgetting any of it costs an edit not skipped or a slot read again, never
a wrong message.
"""

from __future__ import annotations

from collections import OrderedDict

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from telegram_bot.platform.outbox.rows import _SHOWN_LIMIT, _game_of, _Lru
from telegram_bot.platform.storage.models import ShownMessage

__all__ = ["Memory"]


class Memory:
    """Targets (``chat/slot`` or ``chat/message id``) to signatures, slots to message
    ids, chats to their newest message id."""

    def __init__(self, shared: bool) -> None:
        self._shared = shared
        self._shown = _Lru()
        self._wanted = _Lru()
        self._slots: OrderedDict[str, int | None] = OrderedDict()
        # (see telegram_bot.service.reposts)
        self._newest: OrderedDict[int, int] = OrderedDict()

    # What a message is about to show: the newest state committed for it.

    def wanted(self, target: str) -> str | None:
        return self._wanted.get(target)

    def want(self, target: str, sig: str | None) -> None:
        if sig is None:
            self._wanted.pop(target, None)
        else:
            self._wanted.remember(target, sig)

    # What a message shows.

    def shown(self, target: str) -> str | None:
        return self._shown.get(target)

    def show(self, target: str, sig: str | None) -> None:
        """In memory only (None: nothing, or not known)."""
        if sig is None:
            self._shown.pop(target, None)
        else:
            self._shown.remember(target, sig)

    async def remember_shown(self, s: AsyncSession, shown: list[tuple[str, str | None]]) -> None:
        """Record what messages show now (None: nothing, or not known): in memory, or
        (shared) in the database, where every process reads it."""
        if not self._shared:
            for target, sig in shown:
                self.show(target, sig)
            return
        if not shown:
            return
        newest = dict(shown)
        await s.execute(delete(ShownMessage).where(ShownMessage.target.in_(newest)))
        known = [{"target": t, "signature": sig} for t, sig in newest.items() if sig is not None]
        if known:
            await s.execute(insert(ShownMessage.__table__), known)

    @staticmethod
    async def read_shown(s: AsyncSession, targets: set[str]) -> dict[str, str | None]:
        """Shared: what these messages show, as stored."""
        return dict(
            (
                await s.execute(
                    select(ShownMessage.target, ShownMessage.signature).where(
                        ShownMessage.target.in_(targets)
                    )
                )
            ).all()
        )

    async def forget_chat(self, s: AsyncSession, chat_id: int) -> None:
        """What the chat's messages show and are about to show (it may be stale)."""
        prefix = f"{chat_id}/"
        for lru in (self._shown, self._wanted):
            for key in [k for k in lru if k.startswith(prefix)]:
                del lru[key]
        if self._shared:
            await s.execute(delete(ShownMessage).where(ShownMessage.target.startswith(prefix)))

    def forget_game(self, game_id: str) -> None:
        """Everything kept of a game's messages (the game is over)."""
        for lru in (self._shown, self._wanted):
            for key in [k for k in lru if _game_of(k.partition("/")[2]) == game_id]:
                del lru[key]
        for slot in [k for k in self._slots if _game_of(k) == game_id]:
            del self._slots[slot]

    # Which message a slot names (None: none, the chat refused it).

    def knows_slot(self, slot: str) -> bool:
        return slot in self._slots

    def slot(self, slot: str) -> int | None:
        return self._slots.get(slot)

    def learn_slots(self, slots: dict[str, int | None]) -> None:
        for slot, message_id in slots.items():
            self._slots[slot] = message_id
            self._slots.move_to_end(slot)
        while len(self._slots) > _SHOWN_LIMIT:
            self._slots.popitem(last=False)

    def forget_slot(self, slot: str) -> None:
        self._slots.pop(slot, None)

    # The newest message of each chat.

    def note_message(self, chat_id: int, message_id: int) -> None:
        if message_id > self._newest.get(chat_id, 0):
            self._newest[chat_id] = message_id
            self._newest.move_to_end(chat_id)
            while len(self._newest) > _SHOWN_LIMIT:
                self._newest.popitem(last=False)

    def newest_message_id(self, chat_id: int) -> int | None:
        return self._newest.get(chat_id)

    def newest_message_ids(self) -> dict[int, int]:
        return dict(self._newest)

    def sizes(self) -> dict[str, int]:
        return {
            "shown": len(self._shown),
            "wanted": len(self._wanted),
            "slots": len(self._slots),
            "newest": len(self._newest),
        }
