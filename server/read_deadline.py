"""Slow or idle clients cannot hold a process: read deadlines for a request's head and body, and a cap on
the connections one process keeps open; a request HTTP cannot read is refused in the JSON error shape.

A protocol of its own around the HTTP protocol uvicorn runs (handed to uvicorn through its `http=` option):
it reads the bytes on their way in with an httptools parser of its own (the library's public callbacks:
a request began, its headers ended, it ended), sees the answer's bytes on their way out through a thin
transport, and passes every byte on unchanged. Nothing of uvicorn's is subclassed or reached into.
"""
from __future__ import annotations

import asyncio
from typing import Any, cast

import httptools
import msgspec

from server.errors import error_body

HEAD_SECONDS = 10.0  # from connecting (or the request's first byte) until its headers are all in
BODY_SECONDS = 30.0  # from the headers until the whole body is in
# How often the open connections' deadlines are looked at: one timer per process instead of a timer set and
# cancelled at each step of every request (a deadline is kept to within this much).
SWEEP_EVERY = 1.0
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


class _Watched:
    """The transport the inner protocol writes to: notes that an answer began, and sends what one loop
    pass wrote in one call (an answer's head and body are two writes; a system call each costs more)."""

    __slots__ = ("transport", "loop", "answered", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport, self.loop = transport, loop
        self.answered = False  # bytes of an answer went out since the current request began
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.answered = True
        if not self._pending:
            self.loop.call_soon(self.flush)
        self._pending.append(data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self.transport.is_closing():
            self.transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def write_eof(self) -> None:
        self.flush()
        self.transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size() + sum(map(len, self._pending))

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def __getattr__(self, name: str) -> Any:  # pause_reading, set_protocol, abort, ...: the transport's own
        return getattr(self.transport, name)


class Guarded(asyncio.Protocol):
    """An HTTP protocol (`inner`) with read deadlines, a cap on open connections and JSON for unreadable
    requests; `guarded()` makes the class for one inner protocol class and cap."""

    inner_class: type[Any]
    max_connections = DEFAULT_MAX_CONNECTIONS
    watching: set[Guarded] = set()  # connections of this class open now (`guarded()` gives each class its own)
    sweeping: asyncio.TimerHandle | None = None  # the next look at their deadlines

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.inner = self.inner_class(*args, **kwargs)
        self.loop = kwargs.get("_loop") or asyncio.get_event_loop()
        self.parser = httptools.HttpRequestParser(self)
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)  # as uvicorn's own parser
        self.watched: _Watched | None = None
        self.upgraded = False
        self.url = b""
        self.deadline = 0.0  # (loop time) when the request being read is too late; 0: nothing is awaited

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, transport)  # a stream's (uvloop's too): write, close, pause_reading
        cls = type(self)
        if len(cls.watching) >= cls.max_connections:
            transport.write(_answer(b"503 Service Unavailable", _FULL))
            transport.close()
            return
        cls.watching.add(self)
        self.watched = _Watched(transport, self.loop)
        self.inner.connection_made(self.watched)
        self._arm(HEAD_SECONDS)
        if cls.sweeping is None:
            cls.sweeping = self.loop.call_later(SWEEP_EVERY, cls.sweep, self.loop)

    def data_received(self, data: bytes) -> None:
        if self.watched is None or self.watched.transport.is_closing():  # refused at the cap, or answered 400
            return
        if not self.upgraded:
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                self.upgraded = True  # the inner protocol takes the connection over (or refuses it)
                self._disarm()
            except httptools.HttpParserError:
                self._disarm()
                self.watched.flush()
                self.watched.transport.write(_answer(b"400 Bad Request", _UNREADABLE))
                self.watched.transport.close()
                return
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        result: bool | None = self.inner.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self.watched is None:
            return
        type(self).watching.discard(self)
        self.watched.flush()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # httptools' callbacks: where the request being read is
    def on_message_begin(self) -> None:
        if self.watched is not None:
            self.watched.answered = False
        self.url = b""
        self._arm(HEAD_SECONDS)

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_headers_complete(self) -> None:
        # A target that is not an ASCII URL cannot be routed: refused here, in JSON, like any unreadable request.
        if not self.parser.should_upgrade():
            httptools.parse_url(self.url).path.decode("ascii")
        self._arm(BODY_SECONDS)

    def on_message_complete(self) -> None:
        self._disarm()

    def _arm(self, seconds: float) -> None:
        self.deadline = self.loop.time() + seconds

    def _disarm(self) -> None:
        self.deadline = 0.0

    @classmethod
    def sweep(cls, loop: asyncio.AbstractEventLoop) -> None:
        """Close the connections whose request is late; look again in SWEEP_EVERY while any is open."""
        now = loop.time()
        for late in [conn for conn in cls.watching if conn.deadline and now >= conn.deadline]:
            late._too_slow()
        cls.sweeping = loop.call_later(SWEEP_EVERY, cls.sweep, loop) if cls.watching else None

    def _too_slow(self) -> None:
        self.deadline = 0.0
        watched = self.watched
        if watched is None or watched.transport.is_closing():
            return
        watched.flush()
        if not watched.answered:  # an answer already begun is not followed by another
            watched.transport.write(_answer(b"408 Request Timeout", _SLOW))
        watched.transport.close()


def guarded(inner: type, max_connections: int) -> type[Guarded]:
    """The protocol class for uvicorn's `http=`: `inner` with read deadlines and at most `max_connections`
    connections open."""
    return type("GuardedHttp", (Guarded,), {"inner_class": inner, "max_connections": max_connections,
                                           "watching": set(), "sweeping": None})
