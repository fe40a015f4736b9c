"""Funnel counters per bot, flow version, hour and field, kept past Redis and past dialog retention.

Revision ID: 0007_funnel_counters
Revises: 0006_outbox_claims
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_funnel_counters"
down_revision = "0006_outbox_claims"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "funnel_counters",
        sa.Column("bot_id", sa.String(64), primary_key=True),
        sa.Column("flow_id", sa.String(64), primary_key=True),
        sa.Column("version", sa.String(16), primary_key=True),
        sa.Column("hour", sa.Integer, primary_key=True),
        sa.Column("field", sa.String(200), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("funnel_counters")
