"""MAX webhook deliveries answered by uvicorn's own HTTP protocol, ahead of ASGI.

uvicorn spends more on a request than the turn it carries: a scope dict and a copy of the app state,
an asyncio.Event and a cycle object, the proxy-headers and Litestar wrappers, two `send` calls each
checking every header against two regexes, and the head and the body written in two syscalls. A
well-formed `POST /webhooks/max/<bot>` with a Content-Length within the body limit is answered here
instead: its body is collected from the parser, `webhook.answer` runs as a task, and the answer leaves in
one write. Everything else (a query string, an escaped or nested path, a chunked body, a request behind
another on the same connection) is served through ASGI exactly as before, by the same answer function
(`fastpath.py`, `routes.py`). `bench/instructions.py --http` measures the difference.
"""
from __future__ import annotations

import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

import msgspec

from server import metrics
from server.errors import error_body
from server.runtime.fastpath import FAILED, PREFIX, delivery_headers
from server.runtime.webhook import answer

log = logging.getLogger("botflow.runtime.webhook")

_PREFIX = PREFIX.encode()
_JSON = b"content-type: application/json\r\ncontent-length: %d\r\n"
# What a request the HTTP parser refuses gets: the JSON error shape of every answer (uvicorn sends plain text).
_UNREADABLE = msgspec.json.encode(error_body(
    "bad_request", "The request cannot be read as HTTP: its address or a header is too long, or holds characters"
                   " HTTP does not allow (control characters, or spaces inside the address). Send it again without"
                   " them."))


class _Quiet:
    """What uvicorn's connection code sets on a cycle's event (nothing waits for a delivery's)."""

    @staticmethod
    def set() -> None:
        pass


class Delivery:
    """A webhook request read by the protocol: the stand-in for uvicorn's cycle while it is answered."""

    __slots__ = ("bot", "secret", "keep_alive", "body", "reading", "response_complete", "disconnected")

    message_event = _Quiet()

    def __init__(self, bot: str, secret: str | None, keep_alive: bool) -> None:
        self.bot, self.secret, self.keep_alive = bot, secret, keep_alive
        self.body: list[bytes] = []  # at most the Content-Length checked against the body limit
        self.reading = True  # body parts still arrive
        self.response_complete = False
        self.disconnected = False


def _target(url: bytes) -> str | None:
    """The bot id of a plain `/webhooks/max/<bot>` target; None for anything ASGI should see."""
    if not url.startswith(_PREFIX):
        return None
    bot = url[len(_PREFIX):]
    if not bot or not bot.isascii() or any(c in bot for c in b"/?%#"):
        return None
    text = bot.decode("ascii")
    return text if text.isprintable() else None


class WebhookProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol; `bound(app)` makes the class uvicorn is given for one Litestar app."""

    litestar: Any = None  # set on the bound subclass
    max_body = 0
    runtime: Any = None  # the app's runtime, looked up on the first delivery (it starts with the app)

    @classmethod
    def bound(cls, app: Any) -> type[WebhookProtocol]:
        """This protocol serving `app`'s runtime (uvicorn's Config takes a protocol class as `http`)."""
        return type("WebhookProtocolFor", (cls,), {"litestar": app, "max_body": app.state.settings.max_body})

    def send_400_response(self, msg: str) -> None:
        """A request the parser refused (uvicorn logs `msg`): answered in JSON, then the connection closes."""
        head = [STATUS_LINE[400]]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.extend([_JSON % len(_UNREADABLE), b"connection: close\r\n\r\n", _UNREADABLE])
        self.transport.write(b"".join(head))
        self.transport.close()

    def on_message_begin(self) -> None:
        # uvicorn builds the ASGI scope (and copies the app state) here; only a request ASGI serves needs
        # one, so it is built in on_headers_complete once the target is known.
        self.url = b""
        self.expect_100_continue = False
        self.headers = []

    def _asgi(self) -> None:
        """Serve the request through uvicorn's cycle and ASGI, as the plain protocol would."""
        url, headers, expect = self.url, self.headers, self.expect_100_continue
        super().on_message_begin()
        self.url, self.expect_100_continue = url, expect
        self.headers.extend(headers)  # the list the scope holds
        super().on_headers_complete()

    def on_headers_complete(self) -> None:
        previous = self.cycle
        # With `--access-log` every request goes through uvicorn's cycle, which writes the log line.
        bot = _target(self.url) if self.parser.get_method() == b"POST" and not self.access_log else None
        if bot is None or (previous is not None and not previous.response_complete) or self.parser.should_upgrade():
            self._asgi()
            return
        secret, length = delivery_headers(self.headers)
        if length is None or length > self.max_body or self.expect_100_continue:
            self._asgi()
            return
        keep = self.parser.get_http_version() != "1.0" and self.parser.should_keep_alive()
        self.cycle = Delivery(bot, secret, keep)  # type: ignore[assignment]

    def on_body(self, body: bytes) -> None:
        delivery = self.cycle
        if type(delivery) is not Delivery or not delivery.reading:
            super().on_body(body)
            return
        delivery.body.append(body)

    def on_message_complete(self) -> None:
        delivery = self.cycle
        if type(delivery) is not Delivery or not delivery.reading:
            super().on_message_complete()
            return
        delivery.reading = False
        task = self.loop.create_task(self._answer(delivery))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    async def _answer(self, delivery: Delivery) -> None:
        body = b"".join(delivery.body)
        try:
            runtime = self.runtime
            if runtime is None:
                runtime = type(self).runtime = self.litestar.state.runtime  # Litestar's State is slow to read
            status, content = await answer(runtime, delivery.bot, delivery.secret, body)
        except Exception:  # noqa: BLE001 - as Litestar's handler for unexpected errors: 500, logged
            log.exception("unhandled error on POST %s%s", PREFIX, delivery.bot)
            metrics.WEBHOOK_REQUESTS.labels(bot="-", status="500").inc()
            status, content = 500, FAILED
        delivery.response_complete = True
        if delivery.disconnected or self.transport.is_closing():
            return
        head = [STATUS_LINE[status], _JSON % len(content)]
        for name, value in self.server_state.default_headers:
            head.append(b"%s: %s\r\n" % (name, value))
        if not delivery.keep_alive:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        head.append(content)
        self.transport.write(b"".join(head))
        if not delivery.keep_alive:
            self.transport.close()
        self.on_response_complete()
