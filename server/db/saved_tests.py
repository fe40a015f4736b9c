"""Saved dialog tests: one list per flow, outside the document so its hash never changes with them."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from server.db.base import Base
from server.db.models import utcnow


class FlowTestsRow(Base):
    """A flow's saved tests as JSON text, with a revision checked on every replace."""

    __tablename__ = "flow_tests"

    flow_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("flows.id", ondelete="CASCADE"), primary_key=True
    )
    # {"tests": [...]} (flows.testing.cases) as JSON text.
    document: Mapped[str] = mapped_column(Text)
    revision: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
