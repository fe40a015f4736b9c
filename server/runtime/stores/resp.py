"""A small pipelining Redis client for the hot path.

Every call is queued on one connection and flushed once per event-loop pass, replies are matched
in order: many concurrent turns share one write syscall and nobody waits for a pool slot.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

from hiredis import Reader, pack_command

from server.lua_script import Script
from server.runtime.stores.base import StoreUnavailable

# Redis's own default for proto-max-bulk-len, and some room for the reply around such a string: more
# unparsed than this is a broken stream, not data.
MAX_BUFFER = 512 * 1024 * 1024 + 64 * 1024
_PENDING = object()  # what the reader answers while a reply is incomplete


class RedisError(Exception):
    """An error reply from the server."""


class ProtocolError(StoreUnavailable):
    """The byte stream is not RESP; the connection is dropped."""


_PACKED = frozenset({str, bytes, int, float})  # what hiredis takes as it is (a bool it refuses)


def pack(args: tuple[Any, ...]) -> bytes:
    """One command in RESP: hiredis's encoder in C (a third of the time of ours in Python, which was a
    tenth of a turn); any other argument type is sent as its str()."""
    try:
        return pack_command(args)
    except TypeError:
        # hiredis's stub types the command as a 1-tuple; it takes any number of arguments.
        return pack_command(tuple(a if type(a) in _PACKED else str(a) for a in args))  # type: ignore[arg-type]


class Parser:
    """Incremental RESP2 parsing by hiredis's reader (C, keeps its place in a partial reply, so a large
    reply in many packets costs time in proportion to its size): bytes go in with `feed`, whole replies
    come out. Ours in Python took 13 times as long per reply, a few per cent of a turn.

    Error replies come out as RedisError values (also inside arrays), status replies as bytes. A stream
    that is not RESP raises ProtocolError, as does one holding back more than `limit` unparsed bytes;
    a reply that never completes is the client's timeout to catch.
    """

    __slots__ = ("reader", "limit")

    def __init__(self, limit: int = MAX_BUFFER) -> None:
        self.reader = Reader(protocolError=ProtocolError, replyError=RedisError, notEnoughData=_PENDING)
        self.limit = limit

    def feed(self, data: bytes) -> list[Any]:
        """Take more bytes; return the replies they complete, in order (errors as RedisError values)."""
        reader = self.reader
        reader.feed(data)
        out = []
        while (value := reader.gets()) is not _PENDING:
            out.append(value)
        if reader.len() > self.limit:
            raise ProtocolError(f"redis sent {reader.len()} bytes without finishing a reply")
        return out


def parse(buf: bytes) -> list[Any]:
    """Every whole reply in `buf` (tests and tools; the connection feeds its own Parser)."""
    return Parser().feed(buf)


class _Connection(asyncio.Protocol):
    """One socket: queued writes, a FIFO of waiting futures, incremental parsing."""

    def __init__(self) -> None:
        # Made by create_connection inside the running loop; kept, as asking for it costs a getpid() a call.
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.waiters: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.parser = Parser()
        self.out: list[bytes] = []
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(StoreUnavailable(f"redis connection lost: {exc or 'closed by the server'}"))

    def fail(self, error: Exception) -> None:
        """Drop the socket and fail every caller still waiting, each with its own copy of `error`."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
        while self.waiters:
            fut, _ = self.waiters.popleft()
            if not fut.done():
                fut.set_exception(type(error)(*error.args))

    def data_received(self, data: bytes) -> None:
        try:
            replies = self.parser.feed(data)
        except ProtocolError as exc:
            self.fail(exc)
            return
        waiters = self.waiters
        for value in replies:
            if not waiters:
                self.fail(ProtocolError("redis sent a reply nobody asked for"))
                return
            fut, _ = waiters.popleft()
            if fut.done():
                continue  # the caller gave up (cancelled); the reply is dropped
            if isinstance(value, RedisError):
                fut.set_exception(value)
            else:
                fut.set_result(value)

    def send(self, data: bytes, fut: asyncio.Future[Any]) -> None:
        if self.closed:
            fut.set_exception(StoreUnavailable("redis connection lost"))
            return
        if not self.out:
            self.loop.call_soon(self.flush)
        self.out.append(data)
        self.waiters.append((fut, time.monotonic()))

    def flush(self) -> None:
        if self.out and not self.closed and self.transport is not None:
            self.transport.write(b"".join(self.out))
        self.out.clear()


class RespClient:
    """Pipelined calls over one lazily (re)connected socket; an overdue reply closes the socket.

    `timeout` is how long the oldest call may wait for its reply, `connect_timeout` how long connecting
    (with AUTH and SELECT) may take; both raise StoreUnavailable.
    """

    def __init__(self, url: str, timeout: float = 5.0, connect_timeout: float | None = None) -> None:
        parts = urlparse(url)
        if parts.scheme != "redis":
            raise ValueError("only redis:// URLs use the pipelined client")
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 6379
        self.db = int((parts.path or "/0").lstrip("/") or 0)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.timeout = timeout
        self.connect_timeout = timeout if connect_timeout is None else connect_timeout
        self._conn: _Connection | None = None
        self._connecting: asyncio.Lock | None = None
        self._watchdog: asyncio.Task[None] | None = None
        # Connections made so far: the server behind a new one may have restarted empty (`stores.lost`).
        self.connects = 0

    async def _connect(self) -> _Connection:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._conn is not None and not self._conn.closed:
                return self._conn
            where = f"redis at {self.host}:{self.port}"
            conn: _Connection | None = None
            try:
                async with asyncio.timeout(self.connect_timeout):
                    _, conn = await asyncio.get_running_loop().create_connection(_Connection, self.host, self.port)
                    await self._hello(conn)
            except (OSError, TimeoutError) as exc:
                if conn is not None:
                    conn.fail(StoreUnavailable("connection abandoned"))
                raise StoreUnavailable(f"{where} unreachable: {str(exc) or 'no answer in time'}") from None
            except RedisError as exc:
                conn.fail(StoreUnavailable("connection refused by the server"))  # type: ignore[union-attr]
                # The server's words (WRONGPASS, NOAUTH, DB index out of range) never include the password.
                raise StoreUnavailable(f"{where} refused the connection set-up: {exc}") from None
            except StoreUnavailable:
                conn.fail(StoreUnavailable("connection lost during set-up"))  # type: ignore[union-attr]
                raise
            self._conn = conn
            self.connects += 1
            if self._watchdog is None or self._watchdog.done():
                self._watchdog = asyncio.create_task(self._watch())
            return conn

    async def _hello(self, conn: _Connection) -> None:
        """AUTH and SELECT on a new connection, before anyone else may use it."""
        calls: list[tuple[Any, ...]] = []
        if self.password is not None:
            calls.append(("AUTH", self.username, self.password) if self.username else ("AUTH", self.password))
        if self.db:
            calls.append(("SELECT", self.db))
        loop = asyncio.get_running_loop()
        for args in calls:
            fut = loop.create_future()
            conn.send(pack(args), fut)
            await fut

    async def _watch(self) -> None:
        """Abort a connection whose oldest reply is overdue, failing every waiter (so callers answer 503)."""
        while True:
            await asyncio.sleep(min(1.0, self.timeout / 2))
            conn = self._conn
            if conn is not None and conn.waiters and time.monotonic() - conn.waiters[0][1] > self.timeout:
                conn.fail(StoreUnavailable(f"redis gave no reply within {self.timeout:g} s"))

    async def call(self, *args: Any) -> Any:
        """Send one command and wait for its reply."""
        conn = self._conn
        if conn is None or conn.closed:
            conn = await self._connect()
        fut = conn.loop.create_future()
        conn.send(pack(args), fut)
        return await fut

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA, loading the script once when the server does not know it."""
        conn = self._conn  # `call` written out: this is every turn's call, one coroutine fewer
        if conn is None or conn.closed:
            conn = await self._connect()
        fut = conn.loop.create_future()
        conn.send(pack(("EVALSHA", script.sha, len(keys), *keys, *args)), fut)
        try:
            return await fut
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

    def __init__(self, url: str, timeout: float = 5.0, connect_timeout: float | None = None) -> None:
        from redis.asyncio import Redis

        self.redis = Redis.from_url(url, socket_timeout=timeout,
                                    socket_connect_timeout=timeout if connect_timeout is None else connect_timeout)
        # The store reads raw RESP replies (as the pipelined client gives them); redis-py's per-command
        # callbacks would turn XRANGE into dicts, SET NX into booleans and so on.
        self.redis.response_callbacks.clear()
        # Calls that failed for the connection: the next is made on a new one (`RespClient.connects`).
        self.connects = 0

    async def call(self, *args: Any) -> Any:
        from redis.exceptions import AuthenticationError, NoScriptError, ResponseError
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        try:
            return await self.redis.execute_command(*args)
        except (AuthenticationError, RedisConnectionError, RedisTimeoutError, OSError) as exc:
            self.connects += 1
            raise StoreUnavailable(str(exc)) from None
        except NoScriptError as exc:  # redis-py strips the NOSCRIPT word that run() looks for
            raise RedisError(f"NOSCRIPT {exc}") from exc
        except ResponseError as exc:
            raise RedisError(str(exc)) from exc

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except RedisError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            return await self.call("EVAL", script.source, len(keys), *keys, *args)

    async def close(self) -> None:
        await self.redis.aclose()


class Client(Protocol):
    """What the Redis store asks of a client: commands, scripts, and closing."""

    async def call(self, *args: Any) -> Any: ...

    async def run(self, script: Script, keys: list[str], args: list[Any]) -> Any: ...

    async def close(self) -> None: ...


def connect(url: str, timeout: float = 5.0, connect_timeout: float | None = None) -> Client:
    """The pipelined client for plain redis:// URLs (and the master a redis+sentinel:// URL's sentinels
    name), redis-py for the rest."""
    if url.startswith("redis://"):
        return RespClient(url, timeout, connect_timeout)
    if url.startswith("redis+cluster://"):
        from server.runtime.stores.cluster import ClusterClient

        return ClusterClient(url, timeout, connect_timeout)
    if url.startswith("redis+sentinel://"):
        from server.runtime.stores.sentinel import SentinelClient

        return SentinelClient(url, timeout, connect_timeout)
    return RedisPyClient(url, timeout, connect_timeout)
