"""A dialog row carries its turn's lease (owner token, end): the SQL store no longer holds a transaction open
across a turn.

Revision ID: 0013_dialog_leases
Revises: 0012_sealed_secrets
Create Date: 2026-12-06
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_dialog_leases"
down_revision = "0012_sealed_secrets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runtime_dialogs") as batch:
        batch.add_column(sa.Column("owner", sa.String(64), nullable=True))
        batch.add_column(sa.Column("held_until", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runtime_dialogs") as batch:
        batch.drop_column("held_until")
        batch.drop_column("owner")
