"""Core tables: flows, versions, bots, publications, users, API tokens, audit log, sandbox sessions.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "flows",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("revision", sa.String(64), nullable=False),
        sa.Column("version_seq", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flows")),
    )
    op.create_table(
        "flow_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("hash", sa.String(80), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("author", sa.String(64), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("validation", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name=op.f("fk_flow_versions_flow_id_flows"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flow_versions")),
        sa.UniqueConstraint("flow_id", "number", name="uq_flow_versions_flow_number"),
    )
    op.create_index("ix_flow_versions_flow_hash", "flow_versions", ["flow_id", "hash"])
    op.create_table(
        "bots",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("token", sa.Text(), nullable=True),
        sa.Column("webhook_secret", sa.String(256), nullable=True),
        sa.Column("flow_id", sa.String(64), nullable=True),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name=op.f("fk_bots_flow_id_flows"),
                                ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bots")),
    )
    op.create_index(op.f("ix_bots_flow_id"), "bots", ["flow_id"])
    op.create_table(
        "publications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("sessions", sa.String(16), nullable=False),
        sa.Column("published_by", sa.String(64), nullable=True),
        sa.Column("published_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_publications_bot_id_bots"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_publications")),
    )
    op.create_index(op.f("ix_publications_bot_id"), "publications", ["bot_id"])
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("username", name=op.f("uq_users_username")),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_api_tokens_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index(op.f("ix_api_tokens_user_id"), "api_tokens", ["user_id"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", TZ, nullable=False),
        sa.Column("actor", sa.String(64), nullable=True),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.String(200), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_at"), "audit_log", ["at"])
    op.create_table(
        "sandbox_sessions",
        sa.Column("flow_id", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("state", sa.Text(), nullable=True),
        sa.Column("clock_offset", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name=op.f("fk_sandbox_sessions_flow_id_flows"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("flow_id", "session_id", name=op.f("pk_sandbox_sessions")),
    )
    op.create_index(op.f("ix_sandbox_sessions_expires_at"), "sandbox_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_table("sandbox_sessions")
    op.drop_table("audit_log")
    op.drop_table("api_tokens")
    op.drop_table("users")
    op.drop_table("publications")
    op.drop_table("bots")
    op.drop_table("flow_versions")
    op.drop_table("flows")
