"""`GET /metrics`: the Prometheus registry in text format, optionally behind BOTFLOW_METRICS_TOKEN.

Served ahead of Litestar's middleware, like the webhook fast path: a scrape needs no session or user
lookup, so it keeps answering while the database is down (which is when it matters).
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import msgspec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from server.errors import error_body
from server.metrics import BUILD, REGISTRY
from server.runtime.gauges import sample_gauges

log = logging.getLogger("botflow.metrics")
PATH = "/metrics"
SAMPLE_SECONDS = 1.0  # a slow store costs a scrape at most this; the previous sample is shown then


def build_version() -> str:
    """The installed package's version."""
    try:
        return version("botflow")
    except PackageNotFoundError:
        return "unknown"


def _authorised(scope: dict[str, Any], token: str | None) -> bool:
    if token is None:
        return True
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, given = value.decode("latin-1").strip().partition(" ")
            return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())
    return False


class MetricsEndpoint:
    """Wraps the app's ASGI handler; answers GET /metrics and passes everything else through."""

    def __init__(self, inner: Any, token: str | None) -> None:
        self.inner = inner
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] not in ("GET", "HEAD"):
            await self.inner(scope, receive, send)
            return
        if not _authorised(scope, self.token):
            body = msgspec.json.encode(error_body(
                "unauthorized", "Send the metrics token as 'Authorization: Bearer <BOTFLOW_METRICS_TOKEN>'."))
            await self._answer(send, 401, body, b"application/json", [(b"www-authenticate", b"Bearer")])
            return
        await self._sample(scope["app"].state)
        await self._answer(send, 200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST.encode(), [],
                           head=scope["method"] == "HEAD")

    async def _sample(self, state: Any) -> None:
        runtime = getattr(state, "runtime", None)
        if runtime is None:
            return
        try:
            await asyncio.wait_for(sample_gauges(runtime.store), SAMPLE_SECONDS)
        except Exception as exc:  # a scrape still answers with the counters and the previous sample
            log.warning("sampling dialogs and outbox for /metrics failed: %s", f"{type(exc).__name__}: {exc}")

    @staticmethod
    async def _answer(send: Any, status: int, body: bytes, media: bytes, extra: list[tuple[bytes, bytes]],
                      head: bool = False) -> None:
        headers = [(b"content-type", media), (b"content-length", b"%d" % len(body)), *extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else body})


def install(app: Any) -> None:
    """Serve /metrics in front of the app and record the build."""
    BUILD.info({"version": build_version(), "python": platform.python_version()})
    app.asgi_handler = MetricsEndpoint(app.asgi_handler, app.state.settings.metrics_token)
