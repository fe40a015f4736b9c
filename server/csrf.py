"""CSRF cookies that outlived their secret (a restart with a new key) are dropped, so a fresh one is issued."""
from __future__ import annotations

import hmac
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie

from litestar.enums import ScopeType
from litestar.middleware.csrf import CSRF_SECRET_LENGTH, generate_csrf_hash
from litestar.types import ASGIApp, Receive, Scope, Send

CSRF_COOKIE = "csrftoken"
CSRF_FAILED = "CSRF token verification failed"  # Litestar's detail on the exception it raises


def signed_by(token: str, secret: str) -> bool:
    """Whether a CSRF token carries a valid signature under `secret`."""
    if len(token) <= CSRF_SECRET_LENGTH:
        return False
    expected = generate_csrf_hash(token=token[:CSRF_SECRET_LENGTH], secret=secret)
    return hmac.compare_digest(token[CSRF_SECRET_LENGTH:].encode(), expected.encode())


def without_stale_token(cookie_header: bytes, secret: str) -> bytes | None:
    """The Cookie header minus a csrftoken this server did not sign; None when nothing needs removing."""
    text = cookie_header.decode("latin-1")
    parts = [part.strip() for part in text.split(";")]
    kept, dropped = [], False
    for part in parts:
        name, _, value = part.partition("=")
        if name.strip() == CSRF_COOKIE and not signed_by(_unquote(value.strip()), secret):
            dropped = True
            continue
        kept.append(part)
    return "; ".join(p for p in kept if p).encode("latin-1") if dropped else None


def _unquote(value: str) -> str:
    if value.startswith('"'):
        try:
            jar: SimpleCookie = SimpleCookie()
            jar.load(f"x={value}")
            return jar["x"].value
        except (CookieError, KeyError):
            return value
    return value


def stale_csrf_middleware(secret: str) -> Callable[[ASGIApp], ASGIApp]:
    """ASGI middleware factory: before Litestar's CSRF check, forget a csrftoken cookie signed with another key."""

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == ScopeType.HTTP and not scope.get("path", "").startswith(("/api", "/webhooks", "/static")):
                headers = scope.get("headers") or []
                for index, (name, value) in enumerate(headers):
                    if name == b"cookie" and CSRF_COOKIE.encode() in value:
                        cleaned = without_stale_token(value, secret)
                        if cleaned is not None:
                            headers = list(headers)
                            headers[index] = (b"cookie", cleaned)
                            scope["headers"] = headers
            await app(scope, receive, send)

        return middleware

    return factory
