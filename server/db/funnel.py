"""Funnel counters kept for good: per bot, flow version, hour and counter field (see runtime.funnel_counts)."""
from __future__ import annotations

from sqlalchemy import BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from server.db.base import Base


class FunnelCounterRow(Base):
    """One counter field of one hour: `e:<state>` entered, `f:<transition>` fired, `x:<state>` expired..."""

    __tablename__ = "funnel_counters"

    bot_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    flow_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[str] = mapped_column(String(16), primary_key=True)
    # Hours since the Unix epoch (UTC).
    hour: Mapped[int] = mapped_column(Integer, primary_key=True)
    field: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger, default=0)


class FunnelDeltaRow(Base):
    """A turn's increment of one counter on PostgreSQL, added to `funnel_counters` by the next fold.

    Every turn of a bot raises the same few counter rows: updated in place, each turn waited for the one
    before it to commit (its row lock lasts until then), so turns went one at a time. Inserted rows take
    no lock anyone else waits for.
    """

    __tablename__ = "funnel_deltas"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(64))
    flow_id: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(16))
    hour: Mapped[int] = mapped_column(Integer)
    field: Mapped[str] = mapped_column(String(200))
    value: Mapped[int] = mapped_column(BigInteger)
