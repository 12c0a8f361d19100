"""Who sits with whom: tables of strangers from the people waiting (pure, no database).

>>> tables = pick_tables(waiting, players=4, now=now)   # [(user_id, ...), ...]

Each waiting person has a rating (on the display scale, without the uncertainty
discount: :func:`telegram_bot.service.ratings.matching_value`), a language, the time
they joined and a starting band. Their band widens with the time waited
(:func:`band`); a table is acceptable when the spread of its ratings (highest minus
lowest) fits in the band of every person at it. The oldest waiting person is seated
first, with the others closest to them in rating; people of their language are
preferred, and others are taken only once they have waited ``mixed_after`` seconds.

:func:`telegram_bot.platform.storage.online.match_tables` runs this under the queue's
row locks and deletes the rows of the people seated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

#: The band a newcomer starts with, in display points (about 2 of the rating model's
#: mean units: a close game).
BAND_START = 100.0


class Waiting(Protocol):
    """A person in the queue (``storage.online.Queued`` is one)."""

    @property
    def user_id(self) -> int: ...
    @property
    def rating(self) -> float: ...
    @property
    def language(self) -> str: ...
    @property
    def joined_at(self) -> datetime: ...
    @property
    def band(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Policy:
    #: Display points the band widens by per second waited: after 60 s (the computers'
    #: offer) it is 100 + 1500, the whole of the usual range.
    band_per_second: float = 25.0
    #: Seconds a person waits for a table of their own language before others may join.
    mixed_after: float = 10.0


DEFAULT = Policy()


@dataclass(frozen=True, slots=True)
class Entry:
    """A plain :class:`Waiting` (for tests and callers without a database row)."""

    user_id: int
    rating: float
    language: str
    joined_at: datetime
    band: float = BAND_START


def waited(entry: Waiting, now: datetime) -> float:
    """Seconds ``entry`` has waited by ``now`` (never negative: clocks of workers differ)."""
    return max(0.0, (now - entry.joined_at).total_seconds())


def band(entry: Waiting, now: datetime, policy: Policy = DEFAULT) -> float:
    """How far apart in rating the people at ``entry``'s table may be, by ``now``."""
    return entry.band + policy.band_per_second * waited(entry, now)


def fits(table: Sequence[Waiting], now: datetime, policy: Policy = DEFAULT) -> bool:
    """The table's spread of ratings is within every one of its people's bands."""
    ratings = [e.rating for e in table]
    spread = max(ratings) - min(ratings)
    return all(spread <= band(e, now, policy) for e in table)


def pick_tables(
    waiting: Sequence[Waiting], players: int, now: datetime, policy: Policy = DEFAULT
) -> list[tuple[int, ...]]:
    """Full tables (``players`` user ids each, nobody twice) from ``waiting``.

    The longest waiting are seated first. Those left out wait for more people (or for
    their band to widen). Every table returned :func:`fits`.
    """
    if players < 2:
        raise ValueError("a table has at least two players")
    queue = sorted(waiting, key=lambda e: (e.joined_at, e.user_id))
    if len({e.user_id for e in queue}) != len(queue):
        raise ValueError("a person is in the queue twice")
    bands = {e.user_id: band(e, now, policy) for e in queue}
    seated: set[int] = set()
    tables: list[tuple[int, ...]] = []
    for anchor in queue:
        if anchor.user_id in seated:
            continue
        free = [e for e in queue if e.user_id not in seated]
        if len(free) < players:
            break
        same = [e for e in free if e.language == anchor.language]
        table = _table_around(anchor, same, players, bands)
        if table is None and waited(anchor, now) >= policy.mixed_after and len(same) < len(free):
            table = _table_around(anchor, free, players, bands)
        if table is not None:
            seated.update(e.user_id for e in table)
            tables.append(tuple(e.user_id for e in table))
    return tables


def _table_around(
    anchor: Waiting, pool: Sequence[Waiting], players: int, bands: dict[int, float]
) -> list[Waiting] | None:
    """The table with ``anchor`` and others of ``pool`` closest in rating that fits
    everyone's band, or None. Among tables as tight, the one of those waiting longest."""
    reach = bands[anchor.user_id]
    candidates = [
        e
        for e in pool
        if e is anchor or abs(e.rating - anchor.rating) <= min(reach, bands[e.user_id])
    ]
    while len(candidates) >= players:
        candidates.sort(key=lambda e: (e.rating, e.joined_at, e.user_id))
        at = candidates.index(anchor)
        best: tuple[float, float, list[Waiting]] | None = None
        for start in range(max(0, at - players + 1), min(at, len(candidates) - players) + 1):
            window = candidates[start : start + players]
            spread = window[-1].rating - window[0].rating
            if spread > min(bands[e.user_id] for e in window):
                continue
            age = sum(e.joined_at.timestamp() for e in window)
            if best is None or (spread, age) < best[:2]:
                best = (spread, age, window)
        if best is not None:
            return best[2]
        # Every window around the anchor holds someone whose band is too narrow for it:
        # leave out the narrowest of the others and look again.
        others = [e for e in candidates if e is not anchor]
        candidates.remove(min(others, key=lambda e: (bands[e.user_id], e.user_id)))
    return None
