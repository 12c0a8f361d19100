"""Play with anyone: the queue of people waiting for a table of strangers, their
ratings (one per game: 2, 3 or 4 players) and the rated matches, kept apart from the
groups' match results.

Revision ID: 0008
Revises: 0006 (to become 0007, the users' ``deck`` column, when both are on main)
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
# 0007 (users.deck) is written beside this one; until it is merged this applies on 0006.
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "online_queue",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("language", sa.String(8), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("band", sa.Float(), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("offered_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("players IN (2, 3, 4)", name="ck_online_queue_players"),
        sa.PrimaryKeyConstraint("user_id", name="pk_online_queue"),
    )
    op.create_index("ix_online_queue_players_joined_at", "online_queue", ["players", "joined_at"])
    op.create_table(
        "ratings",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("players", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint("players IN (2, 3, 4)", name="ck_ratings_players"),
        sa.PrimaryKeyConstraint("user_id", "players", name="pk_ratings"),
    )
    op.create_table(
        "rated_matches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.String(8), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column(
            "finished_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("seats", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rated_matches"),
        sa.UniqueConstraint("game_id", name="uq_rated_matches_game_id"),
    )


def downgrade() -> None:
    op.drop_table("rated_matches")
    op.drop_table("ratings")
    op.drop_index("ix_online_queue_players_joined_at", table_name="online_queue")
    op.drop_table("online_queue")
