"""Security headers on every answer; pages also get a Content-Security-Policy with a per-request nonce."""
from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

NONCE_KEY = "csp_nonce"
# Pages load only our own files (pictures also from https addresses: a message's image link, previewed);
# an inline script runs only with the nonce of the answer that carries it.
PAGE_POLICY = ("default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'; "
               "img-src 'self' data: blob: https:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
# Anything that is not a page (JSON, files) must never run or be framed even if a browser renders it.
OTHER_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"
# A script's own policy binds only when it runs as a worker (the layout worker loads ELK from our files).
SCRIPT_POLICY = "default-src 'none'; script-src 'self'; frame-ancestors 'none'"
HSTS = b"max-age=31536000; includeSubDomains"


def csp_nonce(scope: Scope) -> str:
    """The nonce of this request's Content-Security-Policy (made on first use)."""
    state = scope.setdefault("state", {})
    nonce = state.get(NONCE_KEY)
    if nonce is None:
        nonce = state[NONCE_KEY] = secrets.token_urlsafe(16)
    return nonce


def template_nonce(context: Mapping[str, Any]) -> str:
    """`{{ csp_nonce() }}` in templates: the nonce an inline <script> or <style> needs to run."""
    return csp_nonce(context["request"].scope)


def content_type(headers: list[tuple[bytes, bytes]]) -> bytes:
    return next((value.lower() for name, value in headers if name.lower() == b"content-type"), b"")


def is_html(headers: list[tuple[bytes, bytes]]) -> bool:
    return content_type(headers).startswith(b"text/html")


def policy_for(scope: Scope, headers: list[tuple[bytes, bytes]]) -> str:
    """Pages get nonces, scripts what a worker needs, anything else runs nothing."""
    kind = content_type(headers)
    if kind.startswith(b"text/html"):
        return PAGE_POLICY.format(nonce=csp_nonce(scope))
    # A 304 names no type, and the browser puts its headers on the copy it keeps: a script's 304 must carry
    # the script's policy, or a worker started again from that copy may load nothing (no importScripts).
    if b"javascript" in kind or (not kind and str(scope.get("path", "")).endswith((".js", ".mjs"))):
        return SCRIPT_POLICY
    return OTHER_POLICY


def security_headers_middleware(https: bool) -> Callable[[ASGIApp], ASGIApp]:
    """ASGI middleware factory; `https`: the public address is https, so browsers are told to stay on it."""

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return

            async def send_with_headers(message: Message) -> None:
                if message["type"] == "http.response.start":
                    headers = list(message.get("headers") or [])
                    names = {name.lower() for name, _ in headers}
                    policy = policy_for(scope, headers)
                    extra = [(b"content-security-policy", policy.encode()),
                             (b"x-frame-options", b"DENY"),
                             (b"x-content-type-options", b"nosniff"),
                             (b"referrer-policy", b"same-origin"),
                             (b"cross-origin-opener-policy", b"same-origin")]
                    if https:
                        extra.append((b"strict-transport-security", HSTS))
                    headers.extend((name, value) for name, value in extra if name not in names)
                    message = {**message, "headers": headers}
                await send(message)

            await app(scope, receive, send_with_headers)

        return middleware

    return factory
