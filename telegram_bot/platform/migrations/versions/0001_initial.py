"""Initial tables: users, chats, games, match results, player tallies.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
ACTIVE_GAME_PREDICATE = "status IN ('lobby', 'playing')"


def _timestamp(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(
        name, sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=nullable
    )


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("first_name", sa.String(256), nullable=False),
        sa.Column("username", sa.String(64), nullable=True),
        sa.Column("language", sa.String(8), nullable=True),
        sa.Column("telegram_language", sa.String(16), nullable=True),
        sa.Column("started_bot", sa.Boolean(), server_default=sa.false(), nullable=False),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
    )

    op.create_table(
        "chats",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("title", sa.String(256), nullable=True),
        sa.Column("language", sa.String(8), server_default="fa", nullable=False),
        sa.Column("settings", JSON, server_default=sa.text("'{}'"), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_chats"),
    )

    op.create_table(
        "games",
        sa.Column("id", sa.String(8), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), server_default="lobby", nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("seats", JSON, server_default=sa.text("'[]'"), nullable=False),
        sa.Column("settings", JSON, server_default=sa.text("'{}'"), nullable=False),
        sa.Column("state", sa.Text(), nullable=True),
        sa.Column("move", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("table_message_id", sa.BigInteger(), nullable=True),
        sa.Column("private_messages", JSON, server_default=sa.text("'{}'"), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.CheckConstraint(
            "status IN ('lobby', 'playing', 'finished', 'cancelled')",
            name="ck_games_status",
        ),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name="fk_games_chat_id_chats", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
    )
    op.create_index("ix_games_chat_id", "games", ["chat_id"])
    # At most one lobby or running game per chat.
    op.create_index(
        "uq_games_one_active_per_chat",
        "games",
        ["chat_id"],
        unique=True,
        sqlite_where=sa.text(ACTIVE_GAME_PREDICATE),
        postgresql_where=sa.text(ACTIVE_GAME_PREDICATE),
    )

    op.create_table(
        "match_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("game_id", sa.String(8), nullable=False),
        _timestamp("finished_at"),
        sa.Column("variant", sa.String(32), nullable=False),
        sa.Column("target", sa.Integer(), nullable=False),
        sa.Column("scores", JSON, nullable=False),
        sa.Column("hands_won", JSON, server_default=sa.text("'[]'"), nullable=False),
        sa.Column("kots", JSON, server_default=sa.text("'[]'"), nullable=False),
        sa.Column("winner_side", sa.Integer(), nullable=True),
        sa.Column("hands_played", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("players", JSON, nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name="fk_match_results_chat_id_chats",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_match_results"),
        sa.UniqueConstraint("game_id", name="uq_match_results_game_id"),
    )
    op.create_index("ix_match_results_chat_id", "match_results", ["chat_id"])

    op.create_table(
        "player_tallies",
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(256), server_default="", nullable=False),
        sa.Column("matches_played", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("matches_won", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("hands_won", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("kots", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("points", sa.Integer(), server_default=sa.text("0"), nullable=False),
        _timestamp("updated_at"),
        sa.ForeignKeyConstraint(
            ["chat_id"],
            ["chats.id"],
            name="fk_player_tallies_chat_id_chats",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chat_id", "user_id", name="pk_player_tallies"),
    )
    op.create_index("ix_player_tallies_leaderboard", "player_tallies", ["chat_id", "matches_won"])


def downgrade() -> None:
    op.drop_index("ix_player_tallies_leaderboard", table_name="player_tallies")
    op.drop_table("player_tallies")
    op.drop_index("ix_match_results_chat_id", table_name="match_results")
    op.drop_table("match_results")
    op.drop_index("uq_games_one_active_per_chat", table_name="games")
    op.drop_index("ix_games_chat_id", table_name="games")
    op.drop_table("games")
    op.drop_table("chats")
    op.drop_table("users")
