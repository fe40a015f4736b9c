"""Who is calling: bearer tokens for the API, the session cookie for the browser, role guards and CSRF."""
from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from litestar.connection import ASGIConnection, Request
from litestar.enums import ScopeType
from litestar.handlers.base import BaseRouteHandler
from litestar.types import ASGIApp, HTTPResponseStartEvent, Receive, Scope, Send
from sqlalchemy import select

from server.errors import Forbidden, Unauthorized

ROLES = ("viewer", "editor", "publisher", "admin")
RANK = {role: rank for rank, role in enumerate(ROLES)}
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SESSION_KEY = "uid"
SESSION_VERSION_KEY = "sv"
# Paths that never need to know the caller; skipping them saves a database query per request.
ANONYMOUS_PREFIXES = ("/static/", "/webhooks/", "/healthz", "/readyz", "/schema")


@dataclass(frozen=True, slots=True)
class CurrentUser:
    """The authenticated caller, detached from any database session."""

    id: int
    username: str
    role: str
    # The users.session_version a session cookie must carry to stay valid.
    session_version: int = 0
    # Set when the caller came with an API token: its row id, and when it stops working (None: never).
    token_id: int | None = None
    token_expires: datetime | None = None

    def has_role(self, role: str) -> bool:
        """Whether this user's role is `role` or above."""
        return RANK.get(self.role, -1) >= RANK[role]


def hash_token(token: str) -> str:
    """sha256 hex of an API token: the only form of it the database keeps."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


async def user_for_token(db: Any, token: str) -> CurrentUser | None:
    """The owner of an API token, or None."""
    from server.db.models import TokenRow, UserRow

    digest = hash_token(token)
    async with db.session() as session:
        row = (await session.execute(
            select(TokenRow.id.label("token_id"), TokenRow.token_hash, TokenRow.expires_at, UserRow.id,
                   UserRow.username, UserRow.role)
            .join(UserRow, UserRow.id == TokenRow.user_id)
            .where(TokenRow.token_hash == digest)
        )).first()
    if row is None or not hmac.compare_digest(row.token_hash, digest) or expired(row.expires_at):
        return None
    ends = row.expires_at.replace(tzinfo=timezone.utc) if row.expires_at and not row.expires_at.tzinfo \
        else row.expires_at
    return CurrentUser(row.id, row.username, row.role, token_id=row.token_id, token_expires=ends)


def expired(expires_at: datetime | None) -> bool:
    """Whether a token's expiry time has passed (SQLite hands back naive UTC datetimes)."""
    if expires_at is None:
        return False
    if expires_at.tzinfo is None:
        expires_at = expires_at.replace(tzinfo=timezone.utc)
    return expires_at <= datetime.now(timezone.utc)


async def user_for_session(db: Any, cookie: dict[str, Any]) -> CurrentUser | None:
    """The user a session cookie names, or None when the user is gone or their sessions were ended."""
    from server.db.models import UserRow

    user_id, version = cookie.get(SESSION_KEY), cookie.get(SESSION_VERSION_KEY)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (user_id, version)):
        return None
    async with db.session() as session:
        row = await session.get(UserRow, user_id)
    if row is None or row.session_version != version:
        return None
    return CurrentUser(row.id, row.username, row.role, row.session_version)


def bearer(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer` header; "" when the header is there but malformed."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return None


def has_nul(scope: Scope) -> bool:
    """Whether the path or query carries a NUL, which no id can contain and PostgreSQL cannot store."""
    return "\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b"").lower()


async def refuse_nul(send: Send) -> None:
    body = json.dumps({"error": "bad_request", "details": [],
                       "message": "The address contains a NUL character (%00); remove it."}).encode()
    start: HTTPResponseStartEvent = {
        "type": "http.response.start", "status": 400,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]}
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})


def auth_middleware(app: ASGIApp) -> ASGIApp:
    """Put the caller in scope["user"] (None when anonymous) and how they authenticated in scope["auth"]."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and has_nul(scope):
            await refuse_nul(send)
            return
        if scope["type"] == ScopeType.HTTP:
            user, how = None, None
            path = scope.get("path", "")
            if not path.startswith(ANONYMOUS_PREFIXES):
                db = scope["app"].state.db
                token = bearer(scope)
                if token is not None:
                    # A bad token is an error, never a silent fall-back to the cookie.
                    user, how = (await user_for_token(db, token) if token else None), "token"
                else:
                    session = scope.get("session") or {}
                    if isinstance(session, dict) and SESSION_KEY in session:
                        user = await user_for_session(db, session)
                        how = "session" if user else None
            scope["user"] = user
            scope["auth"] = how
        await app(scope, receive, send)

    return middleware


def check_csrf(request: ASGIConnection) -> None:
    """Unsafe API calls riding on the browser cookie must send the csrftoken cookie's value in X-CSRFToken,
    and that value must carry this server's signature: a pair invented by whoever can plant cookies fails."""
    from server.csrf import signed_by

    if request.scope.get("auth") != "session" or request.scope.get("method") not in UNSAFE:
        return
    header = request.headers.get("x-csrftoken", "")
    cookie = request.cookies.get("csrftoken", "")
    secret = request.scope["app"].state.settings.secret_key
    if not header or not cookie or not hmac.compare_digest(header.encode(), cookie.encode()) \
            or not signed_by(header, secret):
        raise Forbidden("Send the csrftoken cookie's value in the X-CSRFToken header.", code="csrf_failed")


def requires_role(role: str) -> Callable[[ASGIConnection, BaseRouteHandler], None]:
    """A guard: 401 for an anonymous caller or a bad token, 403 for a role below `role`."""
    if role not in RANK:
        raise ValueError(f"unknown role {role!r}")

    def guard(connection: ASGIConnection, _: BaseRouteHandler) -> None:
        user: CurrentUser | None = connection.scope.get("user")
        if user is None:
            if connection.scope.get("auth") == "token":
                raise Unauthorized("The API token is not valid; ask an admin for a new one.")
            raise Unauthorized()
        check_csrf(connection)
        if not user.has_role(role):
            raise Forbidden(f"This needs the {role} role or above; you are {user.role}.")

    guard.__name__ = f"requires_{role}"
    return guard


def current_user(request: Request) -> CurrentUser | None:
    """The caller, or None; for pages that also show something to anonymous visitors."""
    return request.scope.get("user")


def login_session(request: Request, user: CurrentUser) -> None:
    """Remember `user` in the browser session cookie."""
    request.set_session({SESSION_KEY: user.id, SESSION_VERSION_KEY: user.session_version})


def logout_session(request: Request) -> None:
    """Forget the browser session."""
    request.clear_session()
