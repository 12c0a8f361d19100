"""Workers share Telegram's flood limits, the newest message id of each chat, and hear
of language changes (PostgreSQL: a trigger NOTIFYs ``hokm_languages`` with the user id).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_buckets",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_rate_buckets"),
    )
    op.add_column("chats", sa.Column("newest_message_id", sa.BigInteger(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_NOTIFY_FUNCTION)
        op.execute(_NOTIFY_TRIGGER)


# Sent on commit, so a worker never hears of a change that was rolled back.
_NOTIFY_FUNCTION = """
CREATE OR REPLACE FUNCTION hokm_language_changed() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('hokm_languages', NEW.id::text);
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
_NOTIFY_TRIGGER = """
CREATE TRIGGER users_language_changed
AFTER UPDATE OF language, telegram_language ON users
FOR EACH ROW
WHEN (OLD.language IS DISTINCT FROM NEW.language
      OR OLD.telegram_language IS DISTINCT FROM NEW.telegram_language)
EXECUTE FUNCTION hokm_language_changed()
"""


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS users_language_changed ON users")
        op.execute("DROP FUNCTION IF EXISTS hokm_language_changed()")
    with op.batch_alter_table("chats") as batch:
        batch.drop_column("newest_message_id")
    op.drop_table("rate_buckets")
