"""Finished hands kept for their players' reviews (telegram_bot.service.review).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "hand_records",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("game_id", sa.String(8), nullable=False),
        sa.Column("hand_no", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("trump", sa.String(1), nullable=False),
        sa.Column("deal", JSON, nullable=False),
        sa.Column("plays", JSON, nullable=False),
        sa.Column("players", JSON, nullable=False),
        sa.Column(
            "finished_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_hand_records"),
        # Also serves "this player's hands, newest first" (user_id leads).
        sa.UniqueConstraint(
            "user_id", "game_id", "hand_no", name="uq_hand_records_user_id_game_id_hand_no"
        ),
    )


def downgrade() -> None:
    op.drop_table("hand_records")
