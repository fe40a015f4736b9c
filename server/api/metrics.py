"""`GET /metrics`: the Prometheus registry in text format, optionally behind BOTFLOW_METRICS_TOKEN.

Served ahead of Litestar's middleware, like the webhook fast path: a scrape needs no session or user
lookup, so it keeps answering while the database is down (which is when it matters).
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import platform
from typing import Any

import msgspec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from server.errors import error_body
from server.api.health import dependencies_answer
from server.runtime.lifecycle import HasState, runtime_if_started
from server.metrics import BUILD, DEPENDENCY_UP, REGISTRY
from server.runtime.gauges import sample_gauges
from server.version import botflow_version

log = logging.getLogger("botflow.metrics")
PATH = "/metrics"
SAMPLE_SECONDS = 1.0  # a slow store costs a scrape at most this; the previous sample is shown then


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
        await self._sample(scope["app"])
        await self._answer(send, 200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST.encode(), [],
                           head=scope["method"] == "HEAD")

    async def _sample(self, app: HasState) -> None:
        await asyncio.gather(self._sample_store(app), self._sample_dependencies(app))

    @staticmethod
    async def _sample_store(app: HasState) -> None:
        runtime = runtime_if_started(app)
        if runtime is None:
            return
        try:
            await asyncio.wait_for(sample_gauges(runtime.store), SAMPLE_SECONDS)
        except Exception as exc:  # a scrape still answers with the counters and the previous sample
            log.warning("sampling dialogs and outbox for /metrics failed: %s", f"{type(exc).__name__}: {exc}")

    @staticmethod
    async def _sample_dependencies(app: HasState) -> None:
        """botflow_dependency_up from /readyz's own checks (each bounded, so a dead one costs 1.5 s at most)."""
        for name, up in (await dependencies_answer(app)).items():
            DEPENDENCY_UP.labels(dependency=name).set(1 if up else 0)

    @staticmethod
    async def _answer(send: Any, status: int, body: bytes, media: bytes, extra: list[tuple[bytes, bytes]],
                      head: bool = False) -> None:
        headers = [(b"content-type", media), (b"content-length", b"%d" % len(body)), *extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else body})


def install(app: Any) -> None:
    """Serve /metrics in front of the app and record the build."""
    BUILD.info({"version": botflow_version(), "python": platform.python_version()})
    app.asgi_handler = MetricsEndpoint(app.asgi_handler, app.state.settings.metrics_token)
