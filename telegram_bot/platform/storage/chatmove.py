"""A group became a supergroup: everything the bot keeps under the group's id moves to
the supergroup's, in the caller's transaction (so all of it, or none).

Telegram gives the supergroup a new id and refuses every call naming the old one
(``migrate_to_chat_id``). The chat's settings and language, its games (running ones
included), results, players' tallies and the outbox's waiting rows move; the old
chat's row goes. Rows naming a message of the old chat by its id (an edit or delete
with no slot) are dropped: that message is not in the supergroup. A slot's rows stay:
a slot names whatever message it is bound to when carried out, and the active games'
table slots are unbound here, so the caller posts each table anew in the supergroup.
"""

from __future__ import annotations

from sqlalchemy import and_, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from telegram_bot.platform.storage import repo
from telegram_bot.platform.storage.models import (
    ACTIVE_STATUSES,
    Chat,
    Game,
    MatchResult,
    OutboxMessage,
    PlayerTally,
    ShownMessage,
    utcnow,
)

__all__ = ["move_chat"]


async def move_chat(
    session: AsyncSession, old_id: int, new_id: int, *, title: str | None = None
) -> list[str] | None:
    """Move the chat ``old_id`` to ``new_id``; the ids of the active games moved (their
    tables to post anew), or None when the chat was moved already (the two service
    messages and every ChatMigrated all ask for it: a late one still moves rows a
    move decided for the old id meanwhile)."""
    if old_id == new_id:
        return None
    old = await session.get(Chat, old_id, populate_existing=True, with_for_update=True)
    if old is None:
        await _move_outbox(session, old_id, new_id)
        return None
    language, settings = old.language, dict(old.settings or {})
    new = await repo.get_or_create_chat(
        session, new_id, "supergroup", title or old.title, language=language
    )
    # The supergroup is minutes old: what the group chose is what it wants.
    await session.execute(
        update(Chat)
        .where(Chat.id == new_id)
        .values(language=language, settings=settings, title=title or old.title or new.title)
        .execution_options(synchronize_session=False)
    )
    active = list(
        (
            await session.scalars(
                select(Game.id).where(Game.chat_id == old_id, Game.status.in_(ACTIVE_STATUSES))
            )
        ).all()
    )
    await session.execute(
        update(Game)
        .where(Game.chat_id == old_id)
        .values(chat_id=new_id, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if active:
        # Their messages stay in the old group, read-only: the tables go up anew.
        await session.execute(
            update(Game)
            .where(Game.id.in_(active))
            .values(table_message_id=None)
            .execution_options(synchronize_session=False)
        )
    await session.execute(
        update(MatchResult)
        .where(MatchResult.chat_id == old_id)
        .values(chat_id=new_id)
        .execution_options(synchronize_session=False)
    )
    await _move_tallies(session, old_id, new_id)
    await _move_outbox(session, old_id, new_id)
    await session.execute(
        delete(Chat).where(Chat.id == old_id).execution_options(synchronize_session=False)
    )
    session.expunge_all()
    return active


async def _move_tallies(session: AsyncSession, old_id: int, new_id: int) -> None:
    """Each player's tally added to theirs in the supergroup (none there, usually)."""
    rows = (await session.scalars(select(PlayerTally).where(PlayerTally.chat_id == old_id))).all()
    moved = [
        {
            "chat_id": new_id,
            "user_id": t.user_id,
            "name": t.name,
            "matches_played": t.matches_played,
            "matches_won": t.matches_won,
            "hands_won": t.hands_won,
            "kots": t.kots,
            "points": t.points,
            "updated_at": utcnow(),
        }
        for t in rows
    ]
    await session.execute(delete(PlayerTally).where(PlayerTally.chat_id == old_id))
    table = PlayerTally.__table__.c
    for row in moved:
        stmt = repo._insert(session, PlayerTally).values(**row)
        stmt = stmt.on_conflict_do_update(
            index_elements=[PlayerTally.chat_id, PlayerTally.user_id],
            set_={
                name: table[name] + stmt.excluded[name]
                for name in ("matches_played", "matches_won", "hands_won", "kots", "points")
            },
        )
        await session.execute(stmt)


async def _move_outbox(session: AsyncSession, old_id: int, new_id: int) -> None:
    """The chat's waiting messages go to the new id, but for those naming a message of
    the old chat by its id (it is not in the supergroup)."""
    outbox = OutboxMessage.__table__.c
    await session.execute(
        delete(OutboxMessage).where(
            and_(outbox.chat_id == old_id, outbox.op != "send", outbox.slot.is_(None))
        )
    )
    await session.execute(
        update(OutboxMessage)
        .where(outbox.chat_id == old_id)
        .values(chat_id=new_id)
        .execution_options(synchronize_session=False)
    )
    await session.execute(delete(ShownMessage).where(ShownMessage.target.startswith(f"{old_id}/")))
