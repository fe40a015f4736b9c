"""An httpx transport with a plain keep-alive pool for the runtime's outgoing calls.

httpcore's pool scans every connection (with a socket-readability syscall each) for every queued
request, so with dozens of replies in flight it serialises them (measured here: ~50 requests/s at 64
in flight against ~3,000 with one idle-connection stack per host). This transport keeps a LIFO stack of
idle HTTP/1.1 connections per (scheme, host, port) and costs O(1) per request.

A request is never sent twice without the caller knowing: once it was fully written, a broken
connection or a missing answer raises OutcomeUnknown (the call may have happened); only a request that
could not be written at all, or an idempotent one on a reused connection that answered nothing, is
tried once more on a fresh connection.
"""
from __future__ import annotations

import asyncio
import re
import ssl
import time
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import msgspec

Origin = tuple[str, str, int]

# MAX answers are a few kilobytes; anything far larger is a broken or hostile server.
DEFAULT_MAX_BODY = 8 * 1024 * 1024
# Below the 5 s keep-alive of common servers (uvicorn, many proxies), so a pooled connection is
# dropped by us before the server closes it under a request.
DEFAULT_IDLE_EXPIRY = 4.0
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_UNSAFE_VALUE = re.compile(rb"[\r\n\x00]")
_UNSAFE_TARGET = re.compile(rb"[\x00-\x20\x7f]")


class OutcomeUnknown(httpx.TransportError):
    """The request was written but no answer came: the call may or may not have happened."""


class AnswerTimeout(OutcomeUnknown, httpx.ReadTimeout):
    """The request was written and no answer came within the read timeout."""


class UnsafeRequest(httpx.LocalProtocolError):
    """A header or the request target holds CR, LF or other bytes that would change the request's framing."""


class _Conn:
    __slots__ = ("reader", "writer", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.idle_since = 0.0
        # Pause writing while anything is unsent, so drain() returns only once the kernel has it all:
        # that is what tells "not fully written" (safe to retry) from "written" (outcome unknown).
        writer.transport.set_write_buffer_limits(high=0)

    def usable(self, now: float, expiry: float) -> bool:
        """Still open, nothing unexpected buffered, and not idle for longer than `expiry`."""
        # Bytes on an idle connection are an answer nobody asked for (often a 408 before a close).
        return (not self.writer.is_closing() and not self.reader.at_eof() and not self.reader._buffer
                and now - self.idle_since < expiry)

    def close(self) -> None:
        self.writer.transport.abort()


def check_request(method: bytes, target: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """Refuse a request whose method, target or headers would break HTTP/1.1 framing (header injection)."""
    if not _TOKEN.match(method):
        raise UnsafeRequest(f"the method {method[:20]!r} is not an HTTP token")
    if not target or _UNSAFE_TARGET.search(target):
        raise UnsafeRequest("the request path holds spaces or control characters")
    for name, value in headers:
        if not _TOKEN.match(name):
            raise UnsafeRequest(f"the header name {name[:40]!r} is not an HTTP token")
        if _UNSAFE_VALUE.search(value):
            raise UnsafeRequest(f"the value of header {name.decode('latin-1')} holds CR, LF or NUL")


async def _read_body(reader: asyncio.StreamReader, headers: dict[bytes, bytes], status: int,
                     method: str, cap: int) -> tuple[bytes, bool]:
    """(body, whether the connection can be reused); more than `cap` bytes is a protocol error."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b"", True
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        parts, total = [], 0
        while True:
            line = (await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip()
            try:
                size = int(line, 16)
            except ValueError:
                raise httpx.RemoteProtocolError(f"bad chunk size {line[:20]!r}") from None
            if size < 0:
                raise httpx.RemoteProtocolError("negative chunk size")
            if size == 0:
                for _ in range(100):
                    if (await reader.readuntil(b"\r\n")) == b"\r\n":  # trailers end with an empty line
                        return b"".join(parts), True
                raise httpx.RemoteProtocolError("more than 100 trailer lines")
            total += size
            if total > cap:
                raise httpx.RemoteProtocolError(f"the answer is larger than {cap} bytes")
            parts.append(await reader.readexactly(size))
            if await reader.readexactly(2) != b"\r\n":
                raise httpx.RemoteProtocolError("a chunk does not end with CRLF")
    if b"content-length" in headers:
        raw = headers[b"content-length"]
        if not raw.isdigit():
            raise httpx.RemoteProtocolError(f"bad Content-Length {raw[:20]!r}")
        length = int(raw)
        if length > cap:
            raise httpx.RemoteProtocolError(f"the answer is larger than {cap} bytes ({length})")
        return await reader.readexactly(length), True
    parts, total = [], 0  # delimited by the server closing the connection
    while chunk := await reader.read(65536):
        total += len(chunk)
        if total > cap:
            raise httpx.RemoteProtocolError(f"the answer is larger than {cap} bytes")
        parts.append(chunk)
    return b"".join(parts), False


class PooledTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive connections, reused newest first; TLS for https origins."""

    def __init__(self, max_idle_per_host: int = 64, *, max_body: int = DEFAULT_MAX_BODY,
                 idle_expiry: float = DEFAULT_IDLE_EXPIRY) -> None:
        self.max_idle = max_idle_per_host
        self.max_body = max_body
        self.idle_expiry = idle_expiry
        self._idle: dict[Origin, list[_Conn]] = {}
        self._tls: ssl.SSLContext | None = None

    async def _connect(self, origin: Origin, timeout: float | None) -> _Conn:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, ssl=tls,
                                                               server_hostname=host if tls else None)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}") from exc
        return _Conn(reader, writer)

    def _checkout(self, origin: Origin) -> _Conn | None:
        """The newest idle connection still fit to use; stale ones are closed on the way."""
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.usable(now, self.idle_expiry):
                return conn
            conn.close()
        return None

    async def exchange(self, origin: Origin, method: str, payload: bytes, connect_timeout: float | None,
                       read_timeout: float | None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Send one serialised request and read its response on a pooled connection."""
        where = f"{method} {origin[1]}:{origin[2]}"
        for attempt in (1, 2):
            conn = self._checkout(origin) if attempt == 1 else None
            reused = conn is not None
            if conn is None:
                conn = await self._connect(origin, connect_timeout)
            written = False
            try:
                async with asyncio.timeout(read_timeout):
                    # asyncio.timeout arms one timer; wait_for would also wrap the read in a task of its own.
                    if not await self._write(conn, payload):
                        conn.close()
                        if attempt == 1:
                            continue  # nothing reached the server: once more on a fresh connection
                        raise httpx.WriteError(f"{where}: the connection broke while sending")
                    written = True
                    response = await self._response(conn, method)
            except TimeoutError:
                conn.close()
                if not written:  # the server stopped reading before it had the whole request
                    raise httpx.WriteTimeout(f"{where}: could not send within {read_timeout:g} s") from None
                raise AnswerTimeout(f"{where} got no answer in {read_timeout:g} s") from None
            except (OSError, asyncio.IncompleteReadError) as exc:
                conn.close()
                silent = not getattr(exc, "partial", b"")
                if attempt == 1 and reused and silent and method in IDEMPOTENT:
                    continue  # the server had closed a kept-alive connection; repeating is harmless
                raise OutcomeUnknown(f"{where}: the connection broke before the answer ({exc!r})") from None
            except (ValueError, asyncio.LimitOverrunError, httpx.RemoteProtocolError) as exc:
                conn.close()
                if isinstance(exc, httpx.RemoteProtocolError):
                    raise
                raise httpx.RemoteProtocolError(f"{where}: malformed answer ({exc})") from None
            status, headers, content, keep = response
            idle = self._idle.setdefault(origin, [])
            if keep and len(idle) < self.max_idle:
                conn.idle_since = time.monotonic()
                idle.append(conn)
            else:
                conn.close()
            return status, headers, content
        raise AssertionError("unreachable")

    @staticmethod
    async def _write(conn: _Conn, payload: bytes) -> bool:
        """Hand the whole request to the kernel; False if the connection broke before all of it went."""
        writer = conn.writer
        writer.write(payload)
        if writer.is_closing():  # the send itself failed: the peer had reset or closed the socket
            return False
        if writer.transport.get_write_buffer_size():
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                return False
        return True

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        body = await request.aread()
        # This transport does not decompress, so it asks for plain bodies.
        headers = [(k, b"identity" if k.lower() == b"accept-encoding" else v) for k, v in request.headers.raw]
        check_request(request.method.encode(), url.raw_path, headers)
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode(), url.raw_path)]
        head += [b"%s: %s\r\n" % pair for pair in headers]
        payload = b"".join(head) + b"\r\n" + body
        status, pairs, content = await self.exchange(origin, request.method, payload, timeouts.get("connect"),
                                                     timeouts.get("read"))
        return httpx.Response(status, headers=pairs, content=content, request=request)

    async def _response(self, conn: _Conn, method: str) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
        for _ in range(10):
            head = await conn.reader.readuntil(b"\r\n\r\n")
            lines = head[:-4].split(b"\r\n")
            version, code = lines[0][:8], lines[0][9:12]
            if version not in (b"HTTP/1.1", b"HTTP/1.0") or not code.isdigit():
                raise httpx.RemoteProtocolError(f"not an HTTP/1.x status line: {lines[0][:40]!r}")
            status = int(code)
            if status != 100:
                break
        else:
            raise httpx.RemoteProtocolError("more than 10 interim answers")
        pairs = []
        index = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                raise httpx.RemoteProtocolError(f"a header line without a colon: {line[:40]!r}")
            value = value.strip()
            pairs.append((name, value))
            index[name.lower()] = value
        content, reusable = await _read_body(conn.reader, index, status, method, self.max_body)
        keep = reusable and version == b"HTTP/1.1" and index.get(b"connection", b"").lower() != b"close"
        return status, pairs, content, keep

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()


class LeanResponse:
    """The parts of an httpx.Response that MaxClient reads."""

    __slots__ = ("status_code", "headers", "content")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], content: bytes) -> None:
        self.status_code = status
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        self.content = content

    @property
    def reason_phrase(self) -> str:
        try:
            return HTTPStatus(self.status_code).phrase
        except ValueError:
            return ""

    def json(self) -> Any:
        return msgspec.json.decode(self.content)  # DecodeError is a ValueError, as json's is


class LeanClient:
    """Just `request()` and `aclose()` of httpx.AsyncClient, serialising the request by hand.

    httpx builds URL, header and response models per call, which costs more than the reply itself;
    MaxClient only needs status, headers and JSON, and catches httpx's exception types, which this raises.
    `timeout` bounds waiting for an answer, `connect_timeout` (default: the same) opening a connection.
    """

    def __init__(self, timeout: float = 10.0, *, connect_timeout: float | None = None,
                 max_body: int = DEFAULT_MAX_BODY, idle_expiry: float = DEFAULT_IDLE_EXPIRY) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.pool = PooledTransport(max_body=max_body, idle_expiry=idle_expiry)
        self._origins: dict[str, tuple[Origin, bytes, bytes]] = {}

    def _split(self, url: str) -> tuple[Origin, bytes, bytes]:
        scheme, rest = url.split("://", 1)
        netloc, slash, path = rest.partition("/")
        key = f"{scheme}://{netloc}"
        known = self._origins.get(key)
        if known is None:
            parts = urlsplit(key)
            port = parts.port or (443 if scheme == "https" else 80)
            known = ((scheme, parts.hostname or "", port), netloc.encode(), b"")
            self._origins[key] = known
        return known[0], known[1], (slash + path).encode() or b"/"

    async def request(self, method: str, url: str, *, params: dict[str, Any] | None = None,
                      content: bytes | None = None, headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> LeanResponse:
        origin, host, path = self._split(url)
        if params:
            path += (b"&" if b"?" in path else b"?") + urlencode(params).encode()
        body = content or b""
        extra = [(k.encode("latin-1"), v.encode("utf-8")) for k, v in (headers or {}).items()]
        check_request(method.encode(), path, [(b"Host", host), *extra])
        lines = [b"%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n" % (method.encode(), path, host, len(body))]
        lines += [b"%s: %s\r\n" % pair for pair in extra]
        lines.append(b"\r\n")
        lines.append(body)
        wait = self.timeout if timeout is None else timeout
        connect = wait if self.connect_timeout is None else self.connect_timeout
        status, pairs, data = await self.pool.exchange(origin, method, b"".join(lines), connect, wait)
        return LeanResponse(status, pairs, data)

    async def aclose(self) -> None:
        await self.pool.aclose()


def make_client(timeout: float = 10.0, **kwargs: Any) -> httpx.AsyncClient:
    """An httpx client on the pooled transport."""
    return httpx.AsyncClient(transport=PooledTransport(), timeout=timeout, **kwargs)
