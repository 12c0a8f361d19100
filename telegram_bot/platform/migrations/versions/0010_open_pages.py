"""Open Mini App pages in the database, so that every process sees them: a row per
(game, user, serving process), a lease the serving process keeps pushing forward while
the page's event stream is open (see ``telegram_bot.platform.live.OpenPages``).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "open_pages",
        sa.Column("game_id", sa.String(8), nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "user_id", "holder", name="pk_open_pages"),
    )
    op.create_index("ix_open_pages_holder", "open_pages", ["holder"])


def downgrade() -> None:
    op.drop_index("ix_open_pages_holder", table_name="open_pages")
    op.drop_table("open_pages")
