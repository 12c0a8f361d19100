"""One asyncio lock per key (a game), kept only while someone holds or awaits it.

A dict of locks that never forgets grows with every game ever played. Here an
entry lives exactly as long as it has users, so the dict holds only the games
being worked on right now, and mutual exclusion is unchanged: while one task holds
a key's lock, the entry stays and every other task waits on that same lock.

    locks = KeyedLocks()
    async with locks[game_id]:
        ...
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from types import TracebackType

__all__ = ["KeyedLocks"]


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class _Held:
    __slots__ = ("_entry", "_key", "_owner")

    def __init__(self, owner: KeyedLocks, key: Hashable) -> None:
        self._owner = owner
        self._key = key
        self._entry: _Entry | None = None

    async def __aenter__(self) -> None:
        entries = self._owner._entries
        entry = entries.get(self._key)
        if entry is None:
            entry = entries[self._key] = _Entry()
        entry.users += 1
        self._entry = entry
        try:
            await entry.lock.acquire()
        except BaseException:  # cancelled while waiting
            self._leave()
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._entry is not None
        self._entry.lock.release()
        self._leave()

    def _leave(self) -> None:
        entry = self._entry
        assert entry is not None
        entry.users -= 1
        if entry.users == 0 and self._owner._entries.get(self._key) is entry:
            del self._owner._entries[self._key]


class KeyedLocks:
    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry] = {}

    def __getitem__(self, key: Hashable) -> _Held:
        return _Held(self, key)

    def __len__(self) -> int:
        """Keys held or awaited right now."""
        return len(self._entries)

    def locked(self, key: Hashable) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry.lock.locked()
