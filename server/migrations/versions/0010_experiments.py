"""A/B experiments between versions of one flow, one running per bot.

Revision ID: 0010_experiments
Revises: 0009_bot_privacy
Create Date: 2026-12-06
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_experiments"
down_revision = "0009_bot_privacy"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bot_id", sa.String(64), sa.ForeignKey("bots.id", ondelete="CASCADE"), nullable=False),
        sa.Column("running_bot", sa.String(64), nullable=True, unique=True),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("arms", sa.Text(), nullable=False),
        sa.Column("goal_state", sa.String(200), nullable=False),
        sa.Column("auto_confidence", sa.Float(), nullable=True),
        sa.Column("auto_min_dialogs", sa.Integer(), nullable=True),
        sa.Column("started_by", sa.String(64), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_by", sa.String(64), nullable=True),
        sa.Column("end_reason", sa.Text(), nullable=True),
        sa.Column("promoted_version", sa.Integer(), nullable=True),
        sa.Column("promoted_how", sa.String(16), nullable=True),
        sa.Column("checker", sa.String(64), nullable=True),
        sa.Column("checked_until", sa.Float(), nullable=True),
    )
    op.create_index("ix_experiments_bot_started", "experiments", ["bot_id", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_experiments_bot_started", table_name="experiments")
    op.drop_table("experiments")
