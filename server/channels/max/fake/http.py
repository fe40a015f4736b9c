"""The fake MAX's HTTP/1.1 server: httptools parsing on an asyncio protocol, requests answered in order.

The fake stands in for a remote service, so on a benchmark machine it should cost next to nothing: under
uvicorn and ASGI it spent more CPU per reply than the runtime it was answering. Here a call the fake can
answer at once is answered from the parser's callback, without a task; only held calls and long polls
become tasks. A caller hanging up is seen by the connection itself (`Request.gone`), not by a task
waiting on it.
"""
from __future__ import annotations

import asyncio
import collections
import socket
import struct
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Callable, Coroutine

import httptools

# Like uvicorn's default: an idle kept-alive connection is closed after this long.
KEEP_ALIVE = 5.0
# A request body larger than this is refused as a bad request, 400 (the real API takes far less).
MAX_BODY = 16 * 1024 * 1024
_PHRASES = {status.value: status.phrase.encode() for status in HTTPStatus}


@dataclass(slots=True)
class Request:
    """One parsed request; `gone` resolves when the caller hangs up before its answer was written."""

    method: str
    path: str
    query: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes
    gone: asyncio.Future[None]


@dataclass(slots=True)
class Answer:
    """What to write back: a status, extra headers and a JSON body; `cut` resets the connection instead."""

    status: int
    body: bytes = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    cut: bool = False
    # Called with whether the caller had hung up by the time the answer was ready.
    written: Callable[[bool], None] | None = None


Handler = Callable[[Request], "Answer | Coroutine[Any, Any, Answer]"]


def head(answer: Answer, close: bool) -> bytes:
    """The status line and headers of an answer."""
    lines = [b"HTTP/1.1 %d %s\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: %d\r\n"
             % (answer.status, _PHRASES.get(answer.status, b"Error"), len(answer.body))]
    lines += [b"%s: %s\r\n" % pair for pair in answer.headers]
    if close:
        lines.append(b"connection: close\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


class Connection(asyncio.Protocol):
    """One client connection: requests are parsed as they arrive and answered strictly in order."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.queue: collections.deque[tuple[Request, bool]] = collections.deque()
        self.busy = False  # an answer is being awaited; later requests wait in `queue`
        self.closed = False
        self.idle_since = 0.0
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._size = 0
        self._gone: asyncio.Future[None] | None = None

    # --- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.idle_since = self.server.loop.time()
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self._refuse(400)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.connections.discard(self)
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)

    # --- httptools callbacks
    def on_message_begin(self) -> None:
        self._url, self._headers, self._body, self._size = b"", [], [], 0

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        if (b"expect", b"100-continue") in self._headers and self.transport is not None:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_BODY:
            raise httptools.HttpParserError("body too large")
        self._body.append(body)

    def on_message_complete(self) -> None:
        path, _, query = self._url.partition(b"?")
        if self._gone is None or self._gone.done():
            self._gone = self.server.loop.create_future()
        request = Request(self.parser.get_method().decode("latin-1"), path.decode("latin-1"), query,
                          self._headers, b"".join(self._body), self._gone)
        keep = self.parser.should_keep_alive()
        if self.busy:
            self.queue.append((request, keep))
            self.transport.pause_reading()  # type: ignore[union-attr]
            return
        self._serve(request, keep)

    # --- answering
    def _serve(self, request: Request, keep: bool) -> None:
        answer = self.server.handler(request)
        if isinstance(answer, Answer):
            self._write(answer, keep)
            return
        self.busy = True
        task = self.server.loop.create_task(answer)
        self.server.tasks.add(task)
        task.add_done_callback(lambda done: self._answered(done, keep))

    def _answered(self, task: asyncio.Task[Answer], keep: bool) -> None:
        self.server.tasks.discard(task)
        self.busy = False
        if task.cancelled():
            self._abort()
            return
        error = task.exception()
        self._write(Answer(500, b'{"code":"internal.error","message":"fake MAX failed"}') if error else task.result(),
                    keep)
        while self.queue and not self.busy and not self.closed:
            request, keep = self.queue.popleft()
            self._serve(request, keep)
        if not self.queue and not self.closed:
            self.transport.resume_reading()  # type: ignore[union-attr]

    def _write(self, answer: Answer, keep: bool) -> None:
        if answer.written is not None:
            answer.written(self.closed)
        if self.closed:
            return
        if answer.cut:
            self._abort()
            return
        close = not keep or self.server.closing
        self.transport.write(head(answer, close) + answer.body)  # type: ignore[union-attr]
        self.idle_since = self.server.loop.time()
        if close:
            self.transport.close()  # type: ignore[union-attr]

    def _refuse(self, status: int) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(head(Answer(status), True))
            self.transport.close()

    def _abort(self) -> None:
        """Reset the connection (RST, not FIN): the caller sees it broken, with no answer."""
        if self.transport is None or self.closed:
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.transport.abort()


class Server:
    """Serves `handler` on a listening socket in the running loop until `close`."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.loop = asyncio.get_running_loop()
        self.connections: set[Connection] = set()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.closing = False
        self._server: asyncio.AbstractServer | None = None
        self._sweeper: asyncio.TimerHandle | None = None

    async def start(self, sock: socket.socket) -> None:
        self._server = await self.loop.create_server(lambda: Connection(self), sock=sock, backlog=2048)
        self._sweeper = self.loop.call_later(1.0, self._sweep)

    def _sweep(self) -> None:
        """Close kept-alive connections idle for KEEP_ALIVE, as uvicorn does."""
        now = self.loop.time()
        for conn in list(self.connections):
            if not conn.busy and not conn.queue and now - conn.idle_since > KEEP_ALIVE and conn.transport:
                conn.transport.close()
        self._sweeper = self.loop.call_later(1.0, self._sweep)

    async def close(self, grace: float = 1.0) -> None:
        """Stop listening, give calls in flight `grace` seconds, then cut what is left."""
        self.closing = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=grace)
        for task in list(self.tasks):
            task.cancel()
        for conn in list(self.connections):
            if conn.transport is not None:
                conn.transport.close()
        await asyncio.sleep(0)
