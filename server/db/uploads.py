"""Files uploaded in the editor (pictures a message shows) and the token MAX gave each bot for each."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, Text, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from server.db.base import Base
from server.db.models import utcnow


class UploadRow(Base):
    """One uploaded file; the same bytes uploaded twice are one row (found by their sha256)."""

    __tablename__ = "uploads"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    filename: Mapped[str] = mapped_column(String(255), default="")
    content_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    created_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


class UploadTokenRow(Base):
    """What MAX answered when a bot uploaded a file: the token its messages attach it by."""

    __tablename__ = "upload_tokens"

    bot_id: Mapped[str] = mapped_column(String(64), ForeignKey("bots.id", ondelete="CASCADE"), primary_key=True)
    upload_id: Mapped[str] = mapped_column(String(40), ForeignKey("uploads.id", ondelete="CASCADE"),
                                           primary_key=True)
    token: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


@dataclass(frozen=True, slots=True)
class StoredFile:
    """An uploaded file as a sender needs it."""

    id: str
    filename: str
    content_type: str
    data: bytes


class UploadFiles:
    """The runtime's view of uploads: a file's bytes, and each bot's MAX token for it."""

    def __init__(self, sessionmaker: Any) -> None:
        self.sessionmaker = sessionmaker

    async def file(self, upload_id: str) -> StoredFile | None:
        """The file with this id, or None."""
        async with self.sessionmaker() as session:
            row = await session.get(UploadRow, upload_id)
            return None if row is None else StoredFile(row.id, row.filename, row.content_type, row.data)

    async def token(self, bot_id: str, upload_id: str) -> str | None:
        """The token MAX gave this bot for this file, or None when it was not uploaded yet."""
        async with self.sessionmaker() as session:
            return await session.scalar(select(UploadTokenRow.token).where(
                (UploadTokenRow.bot_id == bot_id) & (UploadTokenRow.upload_id == upload_id)))

    async def remember(self, bot_id: str, upload_id: str, token: str) -> None:
        """Keep the token; when another replica kept one first, theirs stays (either works)."""
        async with self.sessionmaker() as session:
            session.add(UploadTokenRow(bot_id=bot_id, upload_id=upload_id, token=token))
            try:
                await session.commit()
            except IntegrityError:
                await session.rollback()
