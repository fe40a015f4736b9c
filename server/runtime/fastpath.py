"""Plain-ASGI delivery of MAX webhooks ahead of the Litestar router, for the throughput of the live path.

Routing, the middleware stack (sessions, CSRF, auth: none of which a webhook uses), handler signature
parsing and the Request/Response models cost more CPU per delivery than the turn itself. Only a
well-formed `POST /webhooks/max/<bot>` with a Content-Length within the body limit takes this path; it
answers exactly as `routes.max_webhook` does (same `webhook.answer`), and everything else goes to Litestar.
"""
from __future__ import annotations

import logging
from typing import Any

import msgspec

from server.errors import error_body
from server import metrics
from server.runtime.webhook import SECRET_HEADER, answer

log = logging.getLogger("botflow.runtime.webhook")

PREFIX = "/webhooks/max/"
_SECRET = SECRET_HEADER.encode()
_JSON = (b"content-type", b"application/json")
FAILED = msgspec.json.encode(error_body("internal_error", "Something went wrong on the server; the error is logged."))


class _Disconnected(Exception):
    """The client went away before sending the whole body."""


def delivery_headers(headers: list[tuple[bytes, bytes]]) -> tuple[str | None, int | None]:
    """(secret header, declared body length) from raw headers, names in lower case (ASGI's and uvicorn's)."""
    secret, length = None, None
    for name, value in headers:
        if name == _SECRET and secret is None:
            secret = value.decode("latin-1")
        elif name == b"content-length" and value.isdigit():
            length = int(value)
    return secret, length


class FastWebhooks:
    """Wraps Litestar's ASGI handler; serves webhook deliveries directly and passes the rest through."""

    def __init__(self, inner: Any, max_body: int) -> None:
        self.inner = inner
        self.max_body = max_body

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        bot_id = path[len(PREFIX):] if path.startswith(PREFIX) and scope["method"] == "POST" else ""
        secret, length = delivery_headers(scope["headers"]) if bot_id else (None, None)
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
            status, content = 500, FAILED
        await send({"type": "http.response.start", "status": status,
                    "headers": [_JSON, (b"content-length", b"%d" % len(content))]})
        await send({"type": "http.response.body", "body": content})


def install(app: Any) -> None:
    """Put the fast path in front of the app's ASGI handler; everything else reaches it unchanged."""
    app.asgi_handler = FastWebhooks(app.asgi_handler, app.state.settings.max_body)
