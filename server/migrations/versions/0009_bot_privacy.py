"""Personal data per bot: how long transcripts are kept, and which data keys and input types they mask.

Revision ID: 0009_bot_privacy
Revises: 0008_publication_preview
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_bot_privacy"
down_revision = "0008_publication_preview"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("retention_days", sa.Integer(), nullable=False, server_default=sa.text("30")))
        batch.add_column(sa.Column("mask_keys", sa.Text(), nullable=False, server_default="[]"))
        batch.add_column(sa.Column("mask_inputs", sa.Text(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("mask_inputs")
        batch.drop_column("mask_keys")
        batch.drop_column("retention_days")
