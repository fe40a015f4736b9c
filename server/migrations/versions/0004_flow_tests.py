"""Saved dialog tests per flow, and the per-bot rule that a publish needs them to pass.

Revision ID: 0004_flow_tests
Revises: 0003_accounts
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_flow_tests"
down_revision = "0003_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flow_tests",
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("revision", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name=op.f("fk_flow_tests_flow_id_flows"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("flow_id", name=op.f("pk_flow_tests")),
    )
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("require_tests", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("require_tests")
    op.drop_table("flow_tests")
