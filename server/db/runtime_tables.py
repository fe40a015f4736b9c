"""Runtime tables for the SQL store (used when no Redis is configured)."""
from __future__ import annotations

from sqlalchemy import Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from server.db.base import Base


class DialogRow(Base):
    """One running dialog; `due` is its next timer, `expires_at` its session_ttl deadline."""

    __tablename__ = "runtime_dialogs"
    __table_args__ = (Index("ix_runtime_dialogs_due", "due"),)

    bot_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    # flows.dialog.Dialog.to_dict() as JSON text; None only while a turn holds a row it created.
    session: Mapped[str | None] = mapped_column(Text, nullable=True)
    expires_at: Mapped[float] = mapped_column(Float, default=0.0)
    due: Mapped[float | None] = mapped_column(Float, nullable=True)
    # The lease of the turn working on the dialog (PostgreSQL): its owner token and end, on the store's clock.
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    held_until: Mapped[float | None] = mapped_column(Float, nullable=True)


class TimelineRow(Base):
    """One handled update of a user: what came in, what fired, what was sent."""

    __tablename__ = "runtime_timeline"
    __table_args__ = (Index("ix_runtime_timeline_user", "bot_id", "user_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64))
    at: Mapped[float] = mapped_column(Float, index=True)
    record: Mapped[str] = mapped_column(Text)
    # The Redis stream entry it was moved from (None for the SQL store's own records): moving twice is harmless.
    stream_id: Mapped[str | None] = mapped_column(String(40), nullable=True, unique=True)


class DedupeRow(Base):
    """A delivery already handled (mid, callback id, or user + timestamp), kept past a day."""

    __tablename__ = "runtime_dedupe"

    bot_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class OutboxRow(Base):
    """A reply or button answer the messenger has not accepted yet; sent in `id` order per user."""

    __tablename__ = "runtime_outbox"
    __table_args__ = (Index("ix_runtime_outbox_user", "bot_id", "user_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64))
    item_id: Mapped[str] = mapped_column(String(64))
    item: Mapped[str] = mapped_column(Text)


class OutboxQueueRow(Base):
    """When a user's outbox is looked at next: a retry, or the end of a sender's claim (one row per user)."""

    __tablename__ = "runtime_outbox_queue"

    bot_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    next_at: Mapped[float] = mapped_column(Float, index=True)
    # Token of the sender working on the queue now; set while claimed, None while it waits for a retry.
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ActionRow(Base):
    """A webhook action waiting for (another) delivery attempt."""

    __tablename__ = "runtime_actions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    item: Mapped[str] = mapped_column(Text)
    next_at: Mapped[float] = mapped_column(Float, index=True)
