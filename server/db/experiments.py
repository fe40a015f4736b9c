"""A/B experiments between versions of one flow served by a bot."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from server.db.base import Base
from server.db.models import utcnow


class ExperimentRow(Base):
    """One experiment; it runs while `ended_at` is None, and `running_bot` (unique) allows one per bot."""

    __tablename__ = "experiments"
    __table_args__ = (Index("ix_experiments_bot_started", "bot_id", "started_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(64), ForeignKey("bots.id", ondelete="CASCADE"))
    # The bot's id while it runs, NULL after: a unique column many NULLs may share, so a second start loses.
    running_bot: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    # Plain values, not keys: the record outlives a deleted flow.
    flow_id: Mapped[str] = mapped_column(String(64))
    # [{"version": n, "weight": w}, ...] as JSON text, in the order given.
    arms: Mapped[str] = mapped_column(Text)
    goal_state: Mapped[str] = mapped_column(String(200))
    # Auto-promotion: both None when it is off.
    auto_confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    auto_min_dialogs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    started_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    ended_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Why it ended, a sentence (stopped, promoted, another publish, an arm's version deleted).
    end_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    promoted_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # How it ended: "auto" or "manual" (a version promoted), "stopped", "published" (another publish), "deleted".
    promoted_how: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # The auto-promotion check's lease: one replica at a time looks (epoch seconds it holds until).
    checker: Mapped[str | None] = mapped_column(String(64), nullable=True)
    checked_until: Mapped[float | None] = mapped_column(Float, nullable=True)
