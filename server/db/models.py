"""Core tables: flows, versions, bots, publications, users, tokens, audit log, sandbox sessions."""
from __future__ import annotations

import secrets
from datetime import datetime, timezone

from sqlalchemy import (
    Boolean, DateTime, false, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text,
)
from sqlalchemy.orm import Mapped, mapped_column

from server.db.base import Base
from server.db.sealed import Sealed


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class FlowRow(Base):
    """A flow and its editable draft; `revision` changes on every save."""

    __tablename__ = "flows"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(String(500), default="")
    # The draft document as JSON text.
    document: Mapped[str] = mapped_column(Text)
    revision: Mapped[str] = mapped_column(String(64))
    # Highest version number handed out so far; bumping it serialises concurrent freezes.
    version_seq: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


class VersionRow(Base):
    """An immutable frozen copy of a draft."""

    __tablename__ = "flow_versions"
    __table_args__ = (
        UniqueConstraint("flow_id", "number", name="uq_flow_versions_flow_number"),
        Index("ix_flow_versions_flow_hash", "flow_id", "hash"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    flow_id: Mapped[str] = mapped_column(String(64), ForeignKey("flows.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    document: Mapped[str] = mapped_column(Text)
    hash: Mapped[str] = mapped_column(String(80))
    note: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # validation_result() of the frozen document, as JSON text.
    validation: Mapped[str] = mapped_column(Text)


class BotRow(Base):
    """A MAX bot; token and webhook secret are stored but never returned by the API."""

    __tablename__ = "bots"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(String(500), default="")
    # Encrypted at rest (server/db/sealed.py); read and written in clear.
    token: Mapped[str | None] = mapped_column(Sealed, nullable=True)
    webhook_secret: Mapped[str | None] = mapped_column(Sealed, nullable=True)
    # What the bot serves now (mirrors its newest publication); the FK keeps a served flow undeletable.
    flow_id: Mapped[str | None] = mapped_column(
        String(64), ForeignKey("flows.id", ondelete="RESTRICT"), nullable=True, index=True
    )
    version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # A publish to this bot needs the flow's saved tests to pass on the version (migration 0004).
    require_tests: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Personal data (migration 0009): days transcripts are kept, and what they never show (JSON lists).
    retention_days: Mapped[int] = mapped_column(Integer, default=30, server_default=text("30"))
    mask_keys: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    mask_inputs: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PublicationRow(Base):
    """One publish (or rollback) of a version to a bot; history is never rewritten."""

    __tablename__ = "publications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bot_id: Mapped[str] = mapped_column(String(64), ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    # Plain values, not keys: history outlives a later deleted flow.
    flow_id: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    sessions: Mapped[str] = mapped_column(String(16))
    published_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # What the publish foresaw for the dialogs running at that moment (None: before 0008, or storage away).
    dialogs_running: Mapped[int | None] = mapped_column(Integer, nullable=True)
    dialogs_continuing: Mapped[int | None] = mapped_column(Integer, nullable=True)
    dialogs_dropped: Mapped[int | None] = mapped_column(Integer, nullable=True)


class UserRow(Base):
    """A person or robot with a role."""

    __tablename__ = "users"
    __table_args__ = (Index("uq_users_username_lower", text("lower(username)"), unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    # An argon2id (or older scrypt) hash, or None when the user can only use API tokens.
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # Part of every session cookie; bumping it (logout, password change) ends every session of the user.
    # It starts at random, so a cookie of a deleted user never fits a new user given the same id.
    session_version: Mapped[int] = mapped_column(Integer, default=lambda: secrets.randbelow(2**30),
                                                 server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The designer's language this person chose with the switch ("ru", "en"); None follows the browser.
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)


class TokenRow(Base):
    """An API token, stored as its sha256 only."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # "bootstrap" marks the token BOTFLOW_BOOTSTRAP_TOKEN refreshes.
    label: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # None: the token works until it is revoked.
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LoginFailureRow(Base):
    """One wrong password, keyed by username or client, so the login limit holds across replicas."""

    __tablename__ = "login_failures"
    __table_args__ = (Index("ix_login_failures_key_at", "key", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(200))
    # Epoch seconds.
    at: Mapped[float] = mapped_column(Float)


class AuditRow(Base):
    """Who changed what, when."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    actor: Mapped[str | None] = mapped_column(String(64), nullable=True)
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200))
    # JSON text with whatever the action needs to be understood later.
    details: Mapped[str] = mapped_column(Text, default="{}")


class SandboxRow(Base):
    """A simulator dialog, kept in the database so every replica sees it."""

    __tablename__ = "sandbox_sessions"

    flow_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("flows.id", ondelete="CASCADE"), primary_key=True
    )
    session_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    # flows.dialog.Dialog.to_dict() as JSON text, or None once the dialog ended.
    state: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Seconds the sandbox clock runs ahead of the wall clock (advanced by `idle`).
    clock_offset: Mapped[float] = mapped_column(Float, default=0.0)
    # Wall-clock epoch seconds after which the row is stale.
    expires_at: Mapped[float] = mapped_column(Float, index=True)
