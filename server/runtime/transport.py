"""An httpx transport with a plain keep-alive pool for the runtime's outgoing calls.

httpcore's pool scans every connection (with a socket-readability syscall each) for every queued
request, so with dozens of replies in flight it serialises them (measured here: ~50 requests/s at 64
in flight against ~3,000 with one idle-connection stack per host). This transport keeps a LIFO stack of
idle HTTP/1.1 connections per (scheme, host, port) and costs O(1) per request.
"""
from __future__ import annotations

import asyncio
import ssl
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import msgspec

Origin = tuple[str, str, int]


class OutcomeUnknown(httpx.TransportError):
    """The request was written but no answer came: the call may or may not have happened."""


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def close(self) -> None:
        self.writer.transport.abort()


async def _read_body(reader: asyncio.StreamReader, headers: dict[bytes, bytes], status: int,
                     method: str) -> tuple[bytes, bool]:
    """(body, whether the connection can be reused)."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b"", True
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers
                return b"".join(parts), True
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    if b"content-length" in headers:
        return await reader.readexactly(int(headers[b"content-length"])), True
    return await reader.read(), False  # delimited by the server closing the connection


class PooledTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive connections, reused newest first; TLS for https origins."""

    def __init__(self, max_idle_per_host: int = 64) -> None:
        self.max_idle = max_idle_per_host
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
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=tls, server_hostname=host if tls else None), timeout)
        except asyncio.TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}") from exc
        return _Conn(reader, writer)

    async def exchange(self, origin: Origin, method: str, payload: bytes, connect_timeout: float | None,
                       read_timeout: float | None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Send one serialised request and read its response on a pooled connection."""
        idle = self._idle.setdefault(origin, [])
        while True:
            reused = bool(idle)
            conn = idle.pop() if reused else await self._connect(origin, connect_timeout)
            try:
                conn.writer.write(payload)
                # asyncio.timeout arms one timer; wait_for would also wrap the read in a task of its own.
                async with asyncio.timeout(read_timeout):
                    response = await self._response(conn, method)
            except asyncio.TimeoutError as exc:
                conn.close()
                raise httpx.ReadTimeout(f"{method} {origin[1]}:{origin[2]} got no answer in time") from exc
            except (OSError, asyncio.IncompleteReadError, ValueError, asyncio.LimitOverrunError) as exc:
                conn.close()
                if reused and isinstance(exc, (asyncio.IncompleteReadError, ConnectionError)) and not getattr(
                        exc, "partial", b""):
                    continue  # the server had closed an idle connection: try a fresh one
                raise httpx.ReadError(f"{method} {origin[1]}:{origin[2]} failed: {exc!r}") from exc
            status, headers, content, keep = response
            if keep and len(idle) < self.max_idle:
                idle.append(conn)
            else:
                conn.close()
            return status, headers, content

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        body = await request.aread()
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode(), url.raw_path)]
        # This transport does not decompress, so it asks for plain bodies.
        head += [b"%s: %s\r\n" % (k, b"identity" if k.lower() == b"accept-encoding" else v)
                 for k, v in request.headers.raw]
        payload = b"".join(head) + b"\r\n" + body
        status, headers, content = await self.exchange(origin, request.method, payload, timeouts.get("connect"),
                                                       timeouts.get("read"))
        return httpx.Response(status, headers=headers, content=content, request=request)

    async def _response(self, conn: _Conn, method: str) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
        while True:
            head = await conn.reader.readuntil(b"\r\n\r\n")
            lines = head[:-4].split(b"\r\n")
            version, status = lines[0][:8], int(lines[0][9:12])
            if status != 100:
                break
        pairs = []
        index = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            value = value.strip()
            pairs.append((name, value))
            index[name.lower()] = value
        content, reusable = await _read_body(conn.reader, index, status, method)
        keep = reusable and version == b"HTTP/1.1" and index.get(b"connection", b"").lower() != b"close"
        return status, pairs, content, keep  # type: ignore[return-value]

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
    """

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.pool = PooledTransport()
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
        lines = [b"%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n" % (method.encode(), path, host, len(body))]
        lines += [f"{k}: {v}\r\n".encode() for k, v in (headers or {}).items()]
        lines.append(b"\r\n")
        lines.append(body)
        wait = self.timeout if timeout is None else timeout
        status, pairs, data = await self.pool.exchange(origin, method, b"".join(lines), wait, wait)
        return LeanResponse(status, pairs, data)

    async def aclose(self) -> None:
        await self.pool.aclose()


def make_client(timeout: float = 10.0, **kwargs: Any) -> httpx.AsyncClient:
    """An httpx client on the pooled transport."""
    return httpx.AsyncClient(transport=PooledTransport(), timeout=timeout, **kwargs)
