"""The designer's language a user chose, so it follows them to another browser.

Revision ID: 0005_user_language
Revises: 0004_flow_tests
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_user_language"
down_revision = "0004_flow_tests"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("language", sa.String(8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("language")
