"""Outbox claims name their owner, so a sender that stopped renewing is recognised and replaced; timeline
records moved from Redis keep their stream id, so a record moved twice is stored once.

Revision ID: 0006_outbox_claims
Revises: 0005_user_language
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_outbox_claims"
down_revision = "0005_user_language"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runtime_outbox_queue") as batch:
        batch.add_column(sa.Column("owner", sa.String(64), nullable=True))
    with op.batch_alter_table("runtime_timeline") as batch:
        batch.add_column(sa.Column("stream_id", sa.String(40), nullable=True))
        batch.create_unique_constraint("uq_runtime_timeline_stream_id", ["stream_id"])


def downgrade() -> None:
    with op.batch_alter_table("runtime_timeline") as batch:
        batch.drop_constraint("uq_runtime_timeline_stream_id", type_="unique")
        batch.drop_column("stream_id")
    with op.batch_alter_table("runtime_outbox_queue") as batch:
        batch.drop_column("owner")
