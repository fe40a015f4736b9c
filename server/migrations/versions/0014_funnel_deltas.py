"""Funnel counter increments of PostgreSQL turns, inserted beside the counters and folded into them.

Revision ID: 0014_funnel_deltas
Revises: 0013_dialog_leases
Create Date: 2026-12-06
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_funnel_deltas"
down_revision = "0013_dialog_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "funnel_deltas",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("version", sa.String(16), nullable=False),
        sa.Column("hour", sa.Integer(), nullable=False),
        sa.Column("field", sa.String(200), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_funnel_deltas")),
    )


def downgrade() -> None:
    op.drop_table("funnel_deltas")
