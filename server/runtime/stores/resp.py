"""A small pipelining Redis client for the hot path.

Every call is queued on one connection and flushed once per event-loop pass, replies are matched
in order: many concurrent turns share one write syscall and nobody waits for a pool slot.
"""
from __future__ import annotations

import asyncio
import hashlib
import time
from collections import deque
from typing import Any
from urllib.parse import unquote, urlparse

from server.runtime.stores.base import StoreUnavailable


class RedisError(Exception):
    """An error reply from the server."""


class _Incomplete(Exception):
    pass


def pack(args: tuple[Any, ...]) -> bytes:
    """One command in RESP."""
    out = [b"*%d\r\n" % len(args)]
    append = out.append
    for arg in args:
        kind = arg.__class__
        if kind is str:
            arg = arg.encode()
        elif kind is not bytes:
            arg = str(arg).encode()
        append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def parse(buf: bytearray, pos: int) -> tuple[Any, int]:
    """One reply starting at `pos`; raises _Incomplete when the buffer ends first."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise _Incomplete
    kind = buf[pos]
    if kind == 36:  # $ bulk string
        size = int(buf[pos + 1 : end])
        if size < 0:
            return None, end + 2
        stop = end + 2 + size
        if len(buf) < stop + 2:
            raise _Incomplete
        return bytes(buf[end + 2 : stop]), stop + 2
    if kind == 58:  # : integer
        return int(buf[pos + 1 : end]), end + 2
    if kind == 42:  # * array
        count = int(buf[pos + 1 : end])
        if count < 0:
            return None, end + 2
        pos, items = end + 2, []
        for _ in range(count):
            value, pos = parse(buf, pos)
            items.append(value)
        return items, pos
    if kind == 43:  # + status
        return buf[pos + 1 : end].decode(), end + 2
    if kind == 45:  # - error
        return RedisError(buf[pos + 1 : end].decode()), end + 2
    raise RedisError(f"unexpected reply type {chr(kind)!r}")


class _Connection(asyncio.Protocol):
    """One socket: queued writes, a FIFO of waiting futures, incremental parsing."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiters: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.buf = bytearray()
        self.out: list[bytes] = []
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        while self.waiters:
            fut, _ = self.waiters.popleft()
            if not fut.done():
                fut.set_exception(StoreUnavailable(f"redis connection lost: {exc or 'closed'}"))

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos, size = 0, len(buf)
        while pos < size:
            try:
                value, pos = parse(buf, pos)
            except _Incomplete:
                break
            fut, _ = self.waiters.popleft()
            if fut.done():
                continue  # the caller gave up (cancelled); the reply is dropped
            if isinstance(value, RedisError):
                fut.set_exception(value)
            else:
                fut.set_result(value)
        del buf[:pos]

    def send(self, data: bytes, fut: asyncio.Future[Any]) -> None:
        if not self.out:
            asyncio.get_running_loop().call_soon(self.flush)
        self.out.append(data)
        self.waiters.append((fut, time.monotonic()))

    def flush(self) -> None:
        if self.out and not self.closed and self.transport is not None:
            self.transport.write(b"".join(self.out))
        self.out.clear()


class Script:
    """A Lua script called by SHA, loaded on first NOSCRIPT."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


class RespClient:
    """Pipelined calls over one lazily (re)connected socket; timeouts close the socket."""

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        parts = urlparse(url)
        if parts.scheme != "redis":
            raise ValueError("only redis:// URLs use the pipelined client")
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 6379
        self.db = int((parts.path or "/0").lstrip("/") or 0)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.timeout = timeout
        self._conn: _Connection | None = None
        self._connecting: asyncio.Lock | None = None
        self._watchdog: asyncio.Task[None] | None = None

    async def _connect(self) -> _Connection:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._conn is not None and not self._conn.closed:
                return self._conn
            loop = asyncio.get_running_loop()
            try:
                _, conn = await asyncio.wait_for(
                    loop.create_connection(_Connection, self.host, self.port), self.timeout)
            except (OSError, asyncio.TimeoutError) as exc:
                raise StoreUnavailable(f"redis at {self.host}:{self.port} unreachable: {exc}") from exc
            hello: list[tuple[Any, ...]] = []
            if self.password is not None:
                hello.append(("AUTH", self.username, self.password) if self.username else ("AUTH", self.password))
            if self.db:
                hello.append(("SELECT", self.db))
            for args in hello:
                fut = loop.create_future()
                conn.send(pack(args), fut)
                await asyncio.wait_for(fut, self.timeout)
            self._conn = conn
            if self._watchdog is None or self._watchdog.done():
                self._watchdog = asyncio.create_task(self._watch())
            return conn

    async def _watch(self) -> None:
        """Abort a connection whose oldest reply is overdue, failing every waiter (so callers answer 503)."""
        while True:
            await asyncio.sleep(min(1.0, self.timeout / 2))
            conn = self._conn
            if conn is not None and conn.waiters and time.monotonic() - conn.waiters[0][1] > self.timeout:
                if conn.transport is not None:
                    conn.transport.abort()
                conn.connection_lost(TimeoutError("reply overdue"))

    async def call(self, *args: Any) -> Any:
        """Send one command and wait for its reply."""
        conn = self._conn
        if conn is None or conn.closed:
            conn = await self._connect()
        fut = asyncio.get_running_loop().create_future()
        conn.send(pack(args), fut)
        return await fut

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA, loading the script once when the server does not know it."""
        try:
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except RedisError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            await self.call("SCRIPT", "LOAD", script.source)
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)

    async def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._conn is not None and self._conn.transport is not None:
            self._conn.transport.close()
        self._conn = None


class RedisPyClient:
    """The same two calls over redis-py, for URLs the pipelined client does not speak (TLS, sockets)."""

    def __init__(self, url: str) -> None:
        from redis.asyncio import Redis

        self.redis = Redis.from_url(url)

    async def call(self, *args: Any) -> Any:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import ResponseError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        try:
            return await self.redis.execute_command(*args)
        except ResponseError as exc:
            raise RedisError(str(exc)) from exc
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except RedisError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            return await self.call("EVAL", script.source, len(keys), *keys, *args)

    async def close(self) -> None:
        await self.redis.aclose()


def connect(url: str) -> RespClient | RedisPyClient:
    """The pipelined client for plain redis:// URLs, redis-py for the rest."""
    return RespClient(url) if url.startswith("redis://") else RedisPyClient(url)
