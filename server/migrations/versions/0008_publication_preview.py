"""A publication keeps what it foresaw for the running dialogs: how many ran, went on, were dropped.

Revision ID: 0008_publication_preview
Revises: 0007_funnel_counters
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_publication_preview"
down_revision = "0007_funnel_counters"
branch_labels = None
depends_on = None

COLUMNS = ("dialogs_running", "dialogs_continuing", "dialogs_dropped")


def upgrade() -> None:
    with op.batch_alter_table("publications") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("publications") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
