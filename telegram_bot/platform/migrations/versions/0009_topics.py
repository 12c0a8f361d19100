"""Forum topics: a game belongs to a chat and a topic, and a forum holds one table per
topic at once; the outbox's sends carry the topic they go to.

``games.thread_id`` is Telegram's ``message_thread_id`` of the game's topic, 0 outside
forums (not NULL, so that the one-active-game index treats "no topic" as one value on
both SQLite and PostgreSQL, where NULLs in a unique index never collide).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACTIVE = sa.text("status IN ('lobby', 'playing')")


def upgrade() -> None:
    op.add_column(
        "games",
        sa.Column("thread_id", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
    )
    op.add_column("outbox", sa.Column("thread_id", sa.BigInteger(), nullable=True))
    op.drop_index("uq_games_one_active_per_chat", table_name="games")
    op.create_index(
        "uq_games_one_active_per_topic",
        "games",
        ["chat_id", "thread_id"],
        unique=True,
        sqlite_where=ACTIVE,
        postgresql_where=ACTIVE,
    )


def downgrade() -> None:
    op.drop_index("uq_games_one_active_per_topic", table_name="games")
    # Going back to one table per chat: the topics' extra games must end first.
    op.create_index(
        "uq_games_one_active_per_chat",
        "games",
        ["chat_id"],
        unique=True,
        sqlite_where=ACTIVE,
        postgresql_where=ACTIVE,
    )
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("thread_id")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("thread_id")
