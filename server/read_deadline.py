"""Slow or idle clients cannot hold a process: read deadlines for a request's head and body, and a cap on
the connections one process keeps open; a request HTTP cannot read is refused in the JSON error shape.
Mixed into uvicorn's httptools protocol, which `botflow serve` runs (tests/integration/test_read_deadlines.py
and test_webhook_serve.py check it against the uvicorn release in the lock)."""
from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from server.errors import error_body

HEAD_SECONDS = 10.0  # from connecting (or the request's first byte) until its headers are all in
BODY_SECONDS = 30.0  # from the headers until the whole body is in
DEFAULT_MAX_CONNECTIONS = 1000

_SLOW = msgspec.json.encode(error_body(
    "request_timeout", "The request did not arrive in time (headers within 10 s, the body within 30 s); send it again."))
_FULL = msgspec.json.encode(error_body(
    "unavailable", "This server has as many connections open as it takes; try again in a moment."))
# uvicorn answers a request its parser refuses in plain text; every other answer is JSON.
_UNREADABLE = msgspec.json.encode(error_body(
    "bad_request", "The request cannot be read as HTTP: its address or a header is too long, or holds characters"
                   " HTTP does not allow (control characters, or spaces inside the address). Send it again without"
                   " them."))


def _answer(status: bytes, body: bytes) -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n" % len(body)) + body


class ReadDeadline:
    """For a uvicorn httptools protocol class: close what does not arrive in time, refuse past the cap, answer
    what HTTP cannot read in JSON."""

    max_connections = DEFAULT_MAX_CONNECTIONS
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        if len(self.connections) > self.max_connections:  # type: ignore[attr-defined]
            transport.write(_answer(b"503 Service Unavailable", _FULL))
            transport.close()
            return
        self._arm(HEAD_SECONDS)

    def _arm(self, seconds: float) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(seconds, self._too_slow)  # type: ignore[attr-defined]

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        transport = self.transport  # type: ignore[attr-defined]
        if transport.is_closing():
            return
        cycle = self.cycle  # type: ignore[attr-defined]
        if cycle is None or not getattr(cycle, "response_started", False):
            transport.write(_answer(b"408 Request Timeout", _SLOW))
        transport.close()

    def send_400_response(self, msg: str) -> None:
        """A request the parser refused (uvicorn has logged `msg`): a JSON 400, then the connection closes."""
        self.transport.write(_answer(b"400 Bad Request", _UNREADABLE))  # type: ignore[attr-defined]
        self.transport.close()  # type: ignore[attr-defined]

    def on_message_begin(self) -> None:
        self._arm(HEAD_SECONDS)
        super().on_message_begin()  # type: ignore[misc]

    def on_headers_complete(self) -> None:
        self._arm(BODY_SECONDS)
        super().on_headers_complete()  # type: ignore[misc]

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


def with_deadlines(protocol: type, max_connections: int) -> type:
    """`protocol` with read deadlines and at most `max_connections` open connections."""
    return type("DeadlineProtocol", (ReadDeadline, protocol), {"max_connections": max_connections})
