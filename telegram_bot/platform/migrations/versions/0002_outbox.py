"""The durable outbox: messages decided in a transaction, sent after it.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("op", sa.String(8), nullable=False),
        sa.Column("slot", sa.String(48), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("markup", sa.Text(), nullable=True),
        sa.Column("not_before", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
        # Ids are never reused (see OutboxMessage).
        sqlite_autoincrement=True,
    )
    op.create_index("ix_outbox_chat_id_id", "outbox", ["chat_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_chat_id_id", table_name="outbox")
    op.drop_table("outbox")
