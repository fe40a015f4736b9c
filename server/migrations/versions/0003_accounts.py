"""Accounts: session versions, case-insensitive usernames, expiring tokens, login failures.

Revision ID: 0003_accounts
Revises: 0002
Create Date: 2026-12-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_accounts"
down_revision = "0002"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("session_version", sa.Integer(), nullable=False, server_default="0"))
    # `Admin` and `admin` are one person: the index refuses the second even if two requests race.
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("expires_at", TZ, nullable=True))
    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    op.create_index("ix_login_failures_key_at", "login_failures", ["key", "at"])


def downgrade() -> None:
    op.drop_index("ix_login_failures_key_at", table_name="login_failures")
    op.drop_table("login_failures")
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("expires_at")
    op.drop_index("uq_users_username_lower", table_name="users")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("session_version")
