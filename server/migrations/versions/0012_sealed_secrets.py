"""Bot secrets are stored encrypted (server/db/sealed.py): the webhook secret's column holds the longer text.

The values themselves are encrypted at start-up, where the key is (never in the database).

Revision ID: 0012_sealed_secrets
Revises: 0011_uploads
Create Date: 2026-12-06
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_sealed_secrets"
down_revision = "0011_uploads"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.alter_column("webhook_secret", type_=sa.Text(), existing_type=sa.String(256), existing_nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.alter_column("webhook_secret", type_=sa.String(256), existing_type=sa.Text(), existing_nullable=True)
