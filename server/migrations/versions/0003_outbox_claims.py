"""Outbox claims name their owner, so a sender that stopped renewing is recognised and replaced.

Revision ID: 0003_outbox_claims
Revises: 0002
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_outbox_claims"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runtime_outbox_queue") as batch:
        batch.add_column(sa.Column("owner", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runtime_outbox_queue") as batch:
        batch.drop_column("owner")
