"""An httpx transport with a plain keep-alive pool for the runtime's outgoing calls.

httpcore's pool scans every connection (with a socket-readability syscall each) for every queued
request, so with dozens of replies in flight it serialises them (measured here: ~50 requests/s at 64
in flight against ~3,000 with one idle-connection stack per host). This transport keeps a LIFO stack of
idle HTTP/1.1 connections per (scheme, host, port) and costs O(1) per request; each connection is an
asyncio protocol whose answers httptools parses (`http_connection.py`).

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

from server.channels.http_connection import Broken, Connection, Deadlines, Late, Malformed

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


def check_request(method: bytes, target: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """Refuse a request whose method, target or headers would break HTTP/1.1 framing (header injection)."""
    if not _TOKEN.match(method):
        raise UnsafeRequest(f"the method {method[:20]!r} is not an HTTP token")
    check_target(target)
    for name, value in headers:
        if not _TOKEN.match(name):
            raise UnsafeRequest(f"the header name {name[:40]!r} is not an HTTP token")
        if _UNSAFE_VALUE.search(value):
            raise UnsafeRequest(f"the value of header {name.decode('latin-1')} holds CR, LF or NUL")


def _call(method: str, origin: Origin) -> str:
    """A call as error messages name it: method, host and port."""
    return f"{method} {origin[1]}:{origin[2]}"


def check_target(target: bytes) -> None:
    """Refuse a request target holding spaces or control characters."""
    if not target or _UNSAFE_TARGET.search(target):
        raise UnsafeRequest("the request path holds spaces or control characters")


class PooledTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive connections, reused newest first; TLS for https origins."""

    def __init__(self, max_idle_per_host: int = 64, *, max_body: int = DEFAULT_MAX_BODY,
                 idle_expiry: float = DEFAULT_IDLE_EXPIRY) -> None:
        self.max_idle = max_idle_per_host
        self.max_body = max_body
        self.idle_expiry = idle_expiry
        self._idle: dict[Origin, list[Connection]] = {}
        self._tls: ssl.SSLContext | None = None
        self._deadlines = Deadlines()

    async def _connect(self, origin: Origin, timeout: float | None) -> Connection:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(lambda: Connection(self.max_body), host, port, ssl=tls,
                                                       server_hostname=host if tls else None)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}") from exc
        return conn

    def _checkout(self, origin: Origin) -> Connection | None:
        """The newest idle connection still fit to use; stale ones are closed on the way."""
        idle = self._idle.get(origin)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.usable(now, self.idle_expiry):
                return conn
            conn.abort()
        return None

    async def exchange(self, origin: Origin, method: str, payload: bytes, connect_timeout: float | None,
                       read_timeout: float | None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Send one serialised request and read its response on a pooled connection."""
        for attempt in (1, 2):
            conn = self._checkout(origin) if attempt == 1 else None
            reused = conn is not None
            if conn is None:
                conn = await self._connect(origin, connect_timeout)
            answer = conn.begin(method == "HEAD")
            written = conn.write(payload)
            if written is False:
                conn.abort()
                if attempt == 1:
                    continue  # nothing reached the server: once more on a fresh connection
                raise httpx.WriteError(f"{_call(method, origin)}: the connection broke while sending")
            if read_timeout is not None:
                self._deadlines.watch(conn, conn.loop.time() + read_timeout)
            try:
                if written is None:  # the kernel has not taken all of it yet
                    assert conn.drained is not None  # a partial write always leaves a drain to wait for
                    await conn.drained
                    written = True
                status, headers, content, keep = await answer
            except Late:
                where = _call(method, origin)
                if not written:  # the server stopped reading before it had the whole request
                    raise httpx.WriteTimeout(f"{where}: could not send within {read_timeout:g} s") from None
                raise AnswerTimeout(f"{where} got no answer in {read_timeout:g} s") from None
            except Broken as exc:
                conn.abort()
                if not written:
                    if attempt == 1:
                        continue
                    raise httpx.WriteError(f"{_call(method, origin)}: {exc}") from None
                if attempt == 1 and reused and not exc.partial and method in IDEMPOTENT:
                    continue  # the server had closed a kept-alive connection; repeating is harmless
                raise OutcomeUnknown(f"{_call(method, origin)}: the connection broke before the answer "
                                     f"({exc})") from None
            except Malformed as exc:
                conn.abort()
                raise httpx.RemoteProtocolError(f"{_call(method, origin)}: {exc}") from None
            except asyncio.CancelledError:
                conn.abort()  # its answer would arrive with nobody to take it: the connection is not reused
                raise
            finally:
                if read_timeout is not None:
                    self._deadlines.done(conn)
            idle = self._idle.get(origin)
            if idle is None:
                idle = self._idle[origin] = []
            if keep and not conn.closed and len(idle) < self.max_idle:
                conn.idle_since = time.monotonic()
                idle.append(conn)
            else:
                conn.abort()
            return status, headers, content
        raise AssertionError("unreachable")

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

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.abort()
        self._idle.clear()


class LeanResponse:
    """The parts of an httpx.Response that MaxClient reads."""

    __slots__ = ("status_code", "_pairs", "_headers", "content")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], content: bytes) -> None:
        self.status_code = status
        self._pairs = headers
        self._headers: dict[str, str] | None = None
        self.content = content

    @property
    def headers(self) -> dict[str, str]:
        """Header names in lower case; decoded when first read (most answers are only status and JSON)."""
        if self._headers is None:
            self._headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in self._pairs}
        return self._headers

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
        # (method, host, headers) -> the request's checked header lines: the same few recur on every call.
        self._heads: dict[tuple[str, bytes, tuple[tuple[str, str], ...]], bytes] = {}

    def _split(self, url: str) -> tuple[Origin, bytes, bytes]:
        """(origin, Host header value, request target) of a URL; the few URLs a client calls are kept."""
        known = self._origins.get(url)
        if known is None:
            scheme, rest = url.split("://", 1)
            netloc, slash, path = rest.partition("/")
            parts = urlsplit(f"{scheme}://{netloc}")
            port = parts.port or (443 if scheme == "https" else 80)
            known = ((scheme, parts.hostname or "", port), netloc.encode(), (slash + path).encode() or b"/")
            if len(self._origins) >= 1024:  # callers with ever-new URLs: a bounded cache is enough
                self._origins.clear()
            self._origins[url] = known
        return known

    async def request(self, method: str, url: str, *, params: dict[str, Any] | None = None,
                      content: bytes | None = None, headers: dict[str, str] | None = None,
                      timeout: float | None = None) -> LeanResponse:
        origin, host, path = self._split(url)
        if params:
            path += (b"&" if b"?" in path else b"?") + query_string(params).encode()
        check_target(path)
        key = (method, host, tuple(headers.items()) if headers else ())
        head = self._heads.get(key)
        if head is None:
            extra = [(k.encode("latin-1"), v.encode("utf-8")) for k, v in key[2]]
            check_request(method.encode(), b"/", [(b"Host", host), *extra])
            head = b"".join(b"%s: %s\r\n" % pair for pair in [(b"Host", host), *extra])
            if len(self._heads) >= 256:  # tokens come and go; a bounded cache is enough
                self._heads.clear()
            self._heads[key] = head
        body = content or b""
        payload = b"%s %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (method.encode(), path, head, len(body), body)
        wait = self.timeout if timeout is None else timeout
        connect = wait if self.connect_timeout is None else self.connect_timeout
        status, pairs, data = await self.pool.exchange(origin, method, payload, connect, wait)
        return LeanResponse(status, pairs, data)

    async def aclose(self) -> None:
        await self.pool.aclose()


def query_string(params: dict[str, Any]) -> str:
    """`urlencode(params)`, without its quoting work for the usual integer ids under plain names."""
    parts = []
    for name, value in params.items():
        if type(value) is not int or not (name.isascii() and name.isidentifier()):
            return urlencode(params)
        parts.append(f"{name}={value}")
    return "&".join(parts)


def make_client(timeout: float = 10.0, **kwargs: Any) -> httpx.AsyncClient:
    """An httpx client on the pooled transport."""
    return httpx.AsyncClient(transport=PooledTransport(), timeout=timeout, **kwargs)
