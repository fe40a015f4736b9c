"""Files uploaded in the editor for messages to show, and each bot's MAX token for each file.

Revision ID: 0011_uploads
Revises: 0010_experiments
Create Date: 2026-12-06
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_uploads"
down_revision = "0010_experiments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "uploads",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("content_type", sa.String(100), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_uploads")),
        sa.UniqueConstraint("sha256", name=op.f("uq_uploads_sha256")),
    )
    op.create_table(
        "upload_tokens",
        sa.Column("bot_id", sa.String(64), nullable=False),
        sa.Column("upload_id", sa.String(40), nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_upload_tokens_bot_id_bots"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["upload_id"], ["uploads.id"], name=op.f("fk_upload_tokens_upload_id_uploads"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("bot_id", "upload_id", name=op.f("pk_upload_tokens")),
    )


def downgrade() -> None:
    op.drop_table("upload_tokens")
    op.drop_table("uploads")
