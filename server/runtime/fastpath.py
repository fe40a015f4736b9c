"""Plain-ASGI delivery of webhooks ahead of the Litestar router, for the throughput of the live path.

Routing, the middleware stack (sessions, CSRF, auth: none of which a webhook uses), handler signature
parsing and the Request/Response models cost more CPU per delivery than the turn itself (`bench/runtime.py
--http`: about 70% more server CPU per update through the route). Only a well-formed
`POST /webhooks/<channel>/<bot>` with a Content-Length within the body limit takes this path; it answers
with the route's function (`webhook.answer`), and everything else goes to Litestar (`routes.webhook_route`).
"""
from __future__ import annotations

import logging
from typing import Any

import msgspec

from server.errors import error_body
from server import metrics
from server.channels.base import Channel
from server.runtime.webhook import answer

log = logging.getLogger("botflow.runtime.webhook")

_JSON = (b"content-type", b"application/json")
_FAILED = msgspec.json.encode(error_body("internal_error", "Something went wrong on the server; the error is logged."))


class _Disconnected(Exception):
    """The client went away before sending the whole body."""


def _prefix(channel: Channel) -> str:
    """The path before the bot id in the channel's webhook route."""
    return f"/webhooks/{channel.name}/"


def _delivery_headers(headers: list[tuple[bytes, bytes]], secret_name: bytes) -> tuple[str | None, int | None]:
    """(secret header, declared body length) from ASGI's raw headers, names in lower case."""
    secret, length = None, None
    for name, value in headers:
        if name == secret_name and secret is None:
            secret = value.decode("latin-1")
        elif name == b"content-length" and value.isdigit():
            length = int(value)
    return secret, length


class FastWebhooks:
    """Wraps Litestar's ASGI handler; serves webhook deliveries directly and passes the rest through."""

    def __init__(self, inner: Any, max_body: int, channel: Channel) -> None:
        self.inner = inner
        self.max_body = max_body
        self.prefix = _prefix(channel)
        self.secret_name = channel.secret_header.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        start = self.prefix
        bot_id = path[len(start):] if path.startswith(start) and scope["method"] == "POST" else ""
        secret, length = _delivery_headers(scope["headers"], self.secret_name) if bot_id else (None, None)
        # Anything unusual (a NUL, a nested path, no or too large a Content-Length) gets Litestar's answer.
        if (not bot_id or "/" in bot_id or "\x00" in bot_id or length is None or length > self.max_body
                or b"%00" in scope.get("query_string", b"").lower()):
            await self.inner(scope, receive, send)
            return

        async def read_body() -> bytes:
            chunks = []
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Disconnected
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    return b"".join(chunks)

        try:
            status, content = await answer(scope["app"].state.runtime, bot_id, secret, read_body)
        except _Disconnected:
            return
        except Exception:  # noqa: BLE001 - as Litestar's handler for unexpected errors: 500, logged
            log.exception("unhandled error on POST %s", path)
            metrics.WEBHOOK_REQUESTS.labels(bot="-", status="500").inc()
            status, content = 500, _FAILED
        await send({"type": "http.response.start", "status": status,
                    "headers": [_JSON, (b"content-length", b"%d" % len(content))]})
        await send({"type": "http.response.body", "body": content})


def install(app: Any) -> None:
    """Put the fast path for `app.state.channel`'s webhooks in front of the app's ASGI handler; everything
    else reaches it unchanged."""
    app.asgi_handler = FastWebhooks(app.asgi_handler, app.state.settings.max_body, app.state.channel)
