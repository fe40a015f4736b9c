"""One kept-alive HTTP/1.1 client connection as an asyncio protocol, its answers parsed by httptools.

A protocol costs a fraction of asyncio streams per call (no reader buffer, no waiter per read, no
timer per call): the answer's future is resolved from the parser's callback, and call deadlines are
checked by one `Deadlines` ticker for every connection instead of a timer each.
"""
from __future__ import annotations

import asyncio
from typing import Any

import httptools

# An answer's head (status line and headers, trailers included) larger than this is a broken server.
MAX_HEAD = 64 * 1024
MAX_HEADERS = 100
MAX_INTERIM = 10  # 1xx answers skipped before the real one

Answer = tuple[int, list[tuple[bytes, bytes]], bytes, bool]


class Broken(Exception):
    """The connection closed or failed before the whole answer came; `partial`: some of it had."""

    def __init__(self, message: str, partial: bool) -> None:
        super().__init__(message)
        self.partial = partial


class Malformed(Exception):
    """The answer is not HTTP/1.x, or larger than allowed."""


class Late(Exception):
    """The call's deadline passed (set by `Deadlines`)."""


class Connection(asyncio.Protocol):
    """A client connection: one request at a time, its answer delivered to `waiter`."""

    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.loop = asyncio.get_running_loop()
        self.waiter: asyncio.Future[Answer] | None = None
        self.drained: asyncio.Future[None] | None = None
        self.closed = False
        self.stray = False  # bytes or an end arrived while no request was waiting
        self.idle_since = 0.0
        self.head_request = False
        self._reset_answer()

    def _reset_answer(self) -> None:
        self.received = False  # any byte of the answer
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_size = 0
        self.head_done = False
        self.body: list[bytes] = []
        self.size = 0
        self.delimited = True  # by Content-Length or chunks; else by the server closing
        self.interim = 0
        self.error: Exception | None = None

    # --- the call
    def begin(self, head_request: bool) -> asyncio.Future[Answer]:
        """Expect an answer to the request about to be written."""
        self._reset_answer()
        self.head_request = head_request
        self.waiter = self.loop.create_future()
        return self.waiter

    def write(self, payload: bytes) -> bool | None:
        """True: the kernel has all of it; None: part waits in the buffer; False: the connection broke."""
        transport = self.transport
        if transport is None or self.closed or transport.is_closing():
            return False
        transport.write(payload)
        if transport.is_closing():  # the send itself failed: the peer had reset or closed the socket
            return False
        if transport.get_write_buffer_size():
            self.drained = self.loop.create_future()
            return None
        return True

    def expire(self) -> None:
        """The call's deadline passed: fail what it waits for and drop the connection."""
        for future in (self.drained, self.waiter):
            if future is not None and not future.done():
                future.set_exception(Late())
        self.abort()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def usable(self, now: float, expiry: float) -> bool:
        """Open, nothing unasked-for arrived, and not idle for longer than `expiry`."""
        return not self.closed and not self.stray and now - self.idle_since < expiry and self.transport is not None \
            and not self.transport.is_closing()

    # --- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        # Pause writing while anything is unsent, so `drained` resolves only once the kernel has it all:
        # that is what tells "not fully written" (safe to retry) from "written" (outcome unknown).
        self.transport.set_write_buffer_limits(high=0)  # type: ignore[union-attr]

    def data_received(self, data: bytes) -> None:
        if self.waiter is None or self.waiter.done():
            self.stray = True  # often a 408 before a close: this connection is not to be used again
            return
        self.received = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(self.error or Malformed(f"malformed answer ({exc})"))
            self.abort()
        except httptools.HttpParserUpgrade:
            self._fail(Malformed("the server switched protocols"))
            self.abort()

    def eof_received(self) -> bool:
        if self.waiter is not None and not self.waiter.done() and self.head_done and not self.delimited:
            self._finish(keep=False)  # the body ran until the server closed
        else:
            self.stray = True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(Broken(f"the connection closed ({exc!r})" if exc else "the connection closed", self.received))
        if self.drained is not None and not self.drained.done():
            self.drained.set_exception(Broken("the connection closed while sending", False))

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    # --- httptools callbacks
    def on_message_begin(self) -> None:
        if self.waiter is None or self.waiter.done():
            self.stray = True  # more bytes after the answer: its framing is off, the connection not to be reused

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_size += len(name) + len(value)
        if self.head_size > MAX_HEAD or len(self.headers) >= MAX_HEADERS:
            self.error = Malformed(f"the answer's head is larger than {MAX_HEAD} bytes or {MAX_HEADERS} headers")
            raise self.error
        if not self.head_done:
            self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:
            return
        self.head_done = True
        names = {name.lower() for name, _ in self.headers}
        self.delimited = b"content-length" in names or b"transfer-encoding" in names or status in (204, 304)
        if self.head_request:  # no body follows, whatever the headers say; the connection is not reused
            self._finish(keep=False)

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size > self.max_body:
            self.error = Malformed(f"the answer is larger than {self.max_body} bytes")
            raise self.error
        self.body.append(body)

    def on_message_complete(self) -> None:
        if not self.head_done:  # a 1xx interim answer: the real one follows
            self.interim += 1
            self.headers, self.head_size = [], 0
            if self.interim > MAX_INTERIM:
                self.error = Malformed(f"more than {MAX_INTERIM} interim answers")
                raise self.error
            return
        self._finish(keep=self.parser.should_keep_alive())

    def _finish(self, keep: bool) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            status = self.parser.get_status_code()
            waiter.set_result((status, self.headers, b"".join(self.body), keep and not self.head_request))

    def _fail(self, exc: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)


class Deadlines:
    """Call deadlines for many connections, checked every TICK by one timer while any call is waiting."""

    TICK = 0.05

    def __init__(self) -> None:
        self._calls: dict[Connection, float] = {}
        self._ticking = False

    def watch(self, conn: Connection, deadline: float) -> None:
        self._calls[conn] = deadline
        if not self._ticking:
            self._ticking = True
            conn.loop.call_later(self.TICK, self._tick, conn.loop)

    def done(self, conn: Connection) -> None:
        self._calls.pop(conn, None)

    def _tick(self, loop: Any) -> None:
        now = loop.time()
        late = [conn for conn, deadline in self._calls.items() if deadline <= now]
        for conn in late:
            del self._calls[conn]
            conn.expire()
        if self._calls:
            loop.call_later(self.TICK, self._tick, loop)
        else:
            self._ticking = False
