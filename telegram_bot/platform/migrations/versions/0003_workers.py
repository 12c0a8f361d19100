"""Several workers: the webhook inbox, the computers' lease, shared message state.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("games", sa.Column("due_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "inbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("update_id", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "received_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_inbox"),
        sa.UniqueConstraint("update_id", name="uq_inbox_update_id"),
    )
    op.create_table(
        "shown_messages",
        sa.Column("target", sa.String(80), nullable=False),
        sa.Column("signature", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("target", name="pk_shown_messages"),
    )


def downgrade() -> None:
    op.drop_table("shown_messages")
    op.drop_table("inbox")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("due_at")
