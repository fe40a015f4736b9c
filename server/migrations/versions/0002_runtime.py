"""Runtime tables for the SQL store: dialogs, timelines, duplicate marks, outbox, webhook actions.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runtime_dialogs",
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("session", sa.Text(), nullable=True),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("due", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("bot_id", "user_id", name=op.f("pk_runtime_dialogs")),
    )
    op.create_index("ix_runtime_dialogs_due", "runtime_dialogs", ["due"])
    op.create_table(
        "runtime_timeline",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("record", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runtime_timeline")),
    )
    op.create_index("ix_runtime_timeline_user", "runtime_timeline", ["bot_id", "user_id", "id"])
    op.create_index("ix_runtime_timeline_at", "runtime_timeline", ["at"])
    op.create_table(
        "runtime_dedupe",
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "key", name=op.f("pk_runtime_dedupe")),
    )
    op.create_index("ix_runtime_dedupe_expires_at", "runtime_dedupe", ["expires_at"])
    op.create_table(
        "runtime_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runtime_outbox")),
    )
    op.create_index("ix_runtime_outbox_user", "runtime_outbox", ["bot_id", "user_id", "id"])
    op.create_table(
        "runtime_outbox_queue",
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("next_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "user_id", name=op.f("pk_runtime_outbox_queue")),
    )
    op.create_index("ix_runtime_outbox_queue_next_at", "runtime_outbox_queue", ["next_at"])
    op.create_table(
        "runtime_actions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.Column("next_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runtime_actions")),
    )
    op.create_index("ix_runtime_actions_next_at", "runtime_actions", ["next_at"])


def downgrade() -> None:
    # Dropping a table drops its indexes with it.
    for table in ("runtime_actions", "runtime_outbox_queue", "runtime_outbox", "runtime_dedupe",
                  "runtime_timeline", "runtime_dialogs"):
        op.drop_table(table)
