"""Users, roles and API tokens."""
from __future__ import annotations

import re
import secrets
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.auth import ROLES, CurrentUser, hash_password, hash_token, verify_password
from server.db.models import TokenRow, UserRow
from server.errors import Conflict, NotFound, Unprocessable
from server.services import audit
from server.services.common import iso

USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
BOOTSTRAP_USER = "admin"


def new_token() -> str:
    """A fresh random API token."""
    return "bf_" + secrets.token_urlsafe(32)


def check_username(username: Any) -> str:
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise Unprocessable(
            "username must be 1-64 characters of letters, digits, '_', '.', '@' or '-', starting with a letter or digit.",
            details=[{"path": "username", "message": "not a valid username"}])
    return username


def check_role(role: Any) -> str:
    if role not in ROLES:
        raise Unprocessable(f"role must be one of {', '.join(ROLES)}.",
                            details=[{"path": "role", "message": "unknown role"}])
    return role


async def create_user(session: AsyncSession, username: str, role: str, password: str | None,
                      actor: str | None) -> tuple[UserRow, str]:
    """A new user and their first API token (returned in clear this once)."""
    check_username(username)
    check_role(role)
    if (await session.execute(select(UserRow.id).where(UserRow.username == username))).first():
        raise Conflict(f"A user named '{username}' already exists.", code="user_exists")
    user = UserRow(username=username, role=role, password_hash=hash_password(password) if password else None)
    session.add(user)
    token = new_token()
    try:
        await session.flush()
        session.add(TokenRow(user_id=user.id, token_hash=hash_token(token), label="created"))
        audit.record(session, actor, "user.create", f"user:{username}", role=role)
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise Conflict(f"A user named '{username}' already exists.", code="user_exists") from None
    return user, token


async def list_users(session: AsyncSession) -> list[dict[str, Any]]:
    """Usernames and roles, alphabetically."""
    rows = (await session.execute(select(UserRow).order_by(UserRow.username))).scalars().all()
    return [{"username": r.username, "role": r.role, "created_at": iso(r.created_at)} for r in rows]


async def get_user(session: AsyncSession, username: str) -> UserRow:
    if not USERNAME.fullmatch(username):
        raise NotFound(f"There is no user '{username}'.")
    row = (await session.execute(select(UserRow).where(UserRow.username == username))).scalar_one_or_none()
    if row is None:
        raise NotFound(f"There is no user '{username}'.")
    return row


async def issue_token(session: AsyncSession, username: str, actor: str | None, label: str = "issued") -> str:
    """Another API token for an existing user, shown once."""
    user = await get_user(session, username)
    token = new_token()
    session.add(TokenRow(user_id=user.id, token_hash=hash_token(token), label=label[:64]))
    audit.record(session, actor, "user.token", f"user:{username}")
    await session.commit()
    return token


async def can_set_up(session: AsyncSession) -> bool:
    """Whether no user can log in yet, so the login page may create the first admin."""
    row = (await session.execute(select(UserRow.id).where(UserRow.password_hash.is_not(None)).limit(1))).first()
    return row is None


async def set_up_admin(session: AsyncSession, username: str, password: str) -> CurrentUser:
    """The first account that can log in: an admin (the bootstrap admin gets a password, or a new user)."""
    if not await can_set_up(session):
        raise Conflict("An account that can log in exists already; ask an admin for one.", code="already_set_up")
    check_username(username)
    existing = (await session.execute(select(UserRow).where(UserRow.username == username))).scalar_one_or_none()
    if existing is None:
        user, _ = await create_user(session, username, "admin", password, actor=None)
        return CurrentUser(user.id, user.username, user.role)
    existing.role = "admin"
    existing.password_hash = hash_password(password)
    audit.record(session, None, "user.set_up", f"user:{username}")
    await session.commit()
    return CurrentUser(existing.id, existing.username, existing.role)


async def authenticate(session: AsyncSession, username: str, password: str) -> CurrentUser | None:
    """The user whose password this is (for the login form), or None."""
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        return None
    row = (await session.execute(select(UserRow).where(UserRow.username == username))).scalar_one_or_none()
    if row is None or not verify_password(password, row.password_hash):
        return None
    return CurrentUser(row.id, row.username, row.role)


async def set_password(session: AsyncSession, username: str, password: str, actor: str | None) -> None:
    user = await get_user(session, username)
    user.password_hash = hash_password(password)
    audit.record(session, actor, "user.password", f"user:{username}")
    await session.commit()


async def update_user(session: AsyncSession, username: str, role: str | None, password: str | None,
                      actor: str | None) -> dict[str, Any]:
    """Change a user's role and/or password."""
    user = await get_user(session, username)
    changed = []
    if role is not None:
        user.role = check_role(role)
        changed.append("role")
    if password is not None:
        user.password_hash = hash_password(password)
        changed.append("password")
    audit.record(session, actor, "user.update", f"user:{username}", fields=changed)
    await session.commit()
    return {"username": user.username, "role": user.role, "created_at": iso(user.created_at)}


async def delete_user(session: AsyncSession, username: str, actor: str | None) -> None:
    """Remove a user and every token of theirs."""
    user = await get_user(session, username)
    await session.execute(delete(TokenRow).where(TokenRow.user_id == user.id))
    await session.delete(user)
    audit.record(session, actor, "user.delete", f"user:{username}")
    await session.commit()


async def ensure_bootstrap(session: AsyncSession, token: str) -> None:
    """Make `token` a valid admin token (BOTFLOW_BOOTSTRAP_TOKEN), replacing the previous bootstrap token."""
    digest = hash_token(token)
    for attempt in range(3):  # replicas starting together may race on the same rows
        try:
            user = (await session.execute(
                select(UserRow).where(UserRow.username == BOOTSTRAP_USER))).scalar_one_or_none()
            if user is None:
                user = UserRow(username=BOOTSTRAP_USER, role="admin")
                session.add(user)
                await session.flush()
            elif user.role != "admin":
                user.role = "admin"
            existing = (await session.execute(
                select(TokenRow).where(TokenRow.token_hash == digest))).scalar_one_or_none()
            if existing is not None and existing.user_id == user.id and existing.label == "bootstrap":
                await session.commit()
                return
            await session.execute(delete(TokenRow).where(
                (TokenRow.label == "bootstrap") | (TokenRow.token_hash == digest)))
            session.add(TokenRow(user_id=user.id, token_hash=digest, label="bootstrap"))
            audit.record(session, None, "user.bootstrap_token", f"user:{BOOTSTRAP_USER}")
            await session.commit()
            return
        except IntegrityError:
            await session.rollback()
            if attempt == 2:
                raise
