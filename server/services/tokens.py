"""API tokens: issued with an optional expiry, listed without their value, revoked one by one."""
from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from server.auth import RANK, CurrentUser, expired, hash_token
from server.db.models import TokenRow, UserRow
from server.errors import N_, Forbidden, NotFound, Unprocessable
from server.services import audit
from server.services.common import MAX_INT, iso

MIN_LIFETIME = 60
MAX_LABEL = 64
BOOTSTRAP_LABEL = "bootstrap"  # the server's own token (BOTFLOW_BOOTSTRAP_TOKEN); no one else may take the name
DEFAULT_LABEL = "issued"
CREATED_LABEL = "created"  # the token a new account comes with
MAX_LIFETIME = 10 * 366 * 24 * 3600


def new_token() -> str:
    """A fresh random API token."""
    return "bf_" + secrets.token_urlsafe(32)


def expiry(expires_in: Any = None, expires_at: Any = None, now: datetime | None = None) -> datetime | None:
    """When a new token stops working, from `expires_in` seconds or an ISO 8601 `expires_at`; None: never."""
    now = now or datetime.now(timezone.utc)
    if expires_in is not None and expires_at is not None:
        raise _bad("expires_in", "Give either expires_in or expires_at, not both.")
    if expires_in is not None:
        if isinstance(expires_in, bool) or not isinstance(expires_in, int) \
                or not MIN_LIFETIME <= expires_in <= MAX_LIFETIME:
            raise _bad("expires_in", f"expires_in must be a whole number of seconds from {MIN_LIFETIME} "
                                     f"to {MAX_LIFETIME} (ten years).")
        return now + timedelta(seconds=expires_in)
    if expires_at is not None:
        moment = _moment(expires_at)
        if moment is None:
            raise _bad("expires_at", "expires_at must be a date and time such as 2027-01-31T12:00:00Z.")
        if not now + timedelta(seconds=MIN_LIFETIME) <= moment <= now + timedelta(seconds=MAX_LIFETIME):
            raise _bad("expires_at", "expires_at must be at least a minute and at most ten years from now.")
        return moment
    return None


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _bad(path: str, message: str) -> Unprocessable:
    return Unprocessable(message, details=[{"path": path, "message": message}])


def within_scope(caller: CurrentUser, owner: UserRow, expires_at: datetime | None) -> datetime | None:
    """The expiry a token `caller` mints for `owner` may have; 403 for what the caller may not hand out.

    Nobody mints a token for a role above their own, and a token mints only tokens that end no later
    than itself (asked for none, the new one ends with it): a short-lived token stays short-lived.
    """
    if RANK.get(owner.role, len(RANK)) > RANK.get(caller.role, -1):
        raise Forbidden(f"A {caller.role} cannot create tokens for a {owner.role}.", code="token_scope")
    if caller.token_id is None or caller.token_expires is None:
        return expires_at
    if expires_at is None:
        return caller.token_expires
    if expires_at > caller.token_expires:
        raise Forbidden(f"This token ends at {iso(caller.token_expires)}; the tokens it creates must end no later.",
                        code="token_scope")
    return expires_at


def usable_label(label: str) -> bool:
    """Whether a person may give a token this (already trimmed) name."""
    return len(label) <= MAX_LABEL and label.lower() != BOOTSTRAP_LABEL


def add_token(session: AsyncSession, user: UserRow, label: str, expires_at: datetime | None = None) -> tuple[TokenRow, str]:
    """A token row for `user` in the caller's transaction, and the token in clear (shown once)."""
    token = new_token()
    row = TokenRow(user_id=user.id, token_hash=hash_token(token), label=label[:MAX_LABEL], expires_at=expires_at)
    session.add(row)
    return row, token


async def issue(session: AsyncSession, user: UserRow, actor: str | None, label: str = DEFAULT_LABEL,
                expires_at: datetime | None = None) -> dict[str, Any]:
    """Another API token for an existing user: its description plus the token this once."""
    row, token = add_token(session, user, label, expires_at)
    await session.flush()
    audit.record(session, actor, "user.token", f"user:{user.username}", token_id=row.id,
                 expires_at=iso(expires_at))
    await session.commit()
    return {"username": user.username, "token": token, **describe(row)}


def describe(row: TokenRow) -> dict[str, Any]:
    """What may be shown about a token: never its value."""
    return {"id": row.id, "label": row.label, "created_at": iso(row.created_at), "expires_at": iso(row.expires_at),
            "expired": expired(row.expires_at)}


async def listed(session: AsyncSession, user: UserRow) -> list[dict[str, Any]]:
    """The user's tokens, oldest first."""
    rows = (await session.execute(
        select(TokenRow).where(TokenRow.user_id == user.id).order_by(TokenRow.id))).scalars().all()
    return [describe(row) for row in rows]


async def revoke(session: AsyncSession, user: UserRow, token_id: int, actor: str | None) -> None:
    """Delete one token of the user; 404 when they have no token with that id."""
    # An id no database column can hold is simply not one of theirs (never a driver overflow).
    row = await session.get(TokenRow, token_id) if 1 <= token_id <= MAX_INT else None
    if row is None or row.user_id != user.id:
        raise NotFound.worded(N_("User '%(name)s' has no token %(id)s; list them to see the ids."),
                              {"name": user.username, "id": token_id})
    await session.delete(row)
    audit.record(session, actor, "user.token_revoke", f"user:{user.username}", token_id=token_id)
    await session.commit()
