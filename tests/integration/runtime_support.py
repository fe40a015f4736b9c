"""Fixtures for the runtime tests: a unique Redis prefix and PostgreSQL database per test session."""
from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from collections.abc import Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

REDIS_URL = os.environ.get("BOTFLOW_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
PG_ADMIN_URL = os.environ.get("BOTFLOW_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")
RUN_ID = uuid.uuid4().hex[:10]


def in_thread(fn, *args):
    """Run blocking set-up (Alembic, asyncio.run) off the caller's event loop, if it has one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


async def delete_prefix(prefix: str) -> int:
    """Delete every key under `prefix` (never FLUSHDB: other people share this server)."""
    redis = Redis.from_url(REDIS_URL)
    deleted = 0
    try:
        batch: list[bytes] = []
        async for key in redis.scan_iter(match=prefix + "*", count=1000):
            batch.append(key)
            if len(batch) >= 500:
                deleted += await redis.unlink(*batch)
                batch.clear()
        if batch:
            deleted += await redis.unlink(*batch)
    finally:
        await redis.aclose()
    return deleted


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix no other test (or person) uses; its keys are deleted afterwards."""
    prefix = f"bftest:{RUN_ID}:{uuid.uuid4().hex[:8]}"
    yield prefix
    in_thread(asyncio.run, delete_prefix(prefix))


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def migrated_database(prefix: str) -> Iterator[str]:
    """A fresh PostgreSQL database named for `prefix` and this run, migrated to head, dropped afterwards."""
    from server.db.migrate import upgrade_blocking

    name = f"{prefix}_{RUN_ID}"
    in_thread(asyncio.run, _admin(f'CREATE DATABASE "{name}"'))
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    try:
        in_thread(upgrade_blocking, url)
        yield url
    finally:
        in_thread(asyncio.run, _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database, migrated to head, dropped after the session."""
    with migrated_database("bf_runtime") as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A migrated SQLite file for one test."""
    from server.db.migrate import upgrade_blocking

    url = f"sqlite+aiosqlite:///{tmp_path / 'runtime.db'}"
    in_thread(upgrade_blocking, url)
    return url


class TcpProxy:
    """A loopback TCP proxy that can be cut and restored, to make Redis unreachable on demand."""

    def __init__(self, target_port: int = 6379) -> None:
        self.target_port = target_port
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def __aenter__(self) -> TcpProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Refuse new connections and cut the open ones."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers.difference_update((writer, up_writer))


class Receiver:
    """An HTTP endpoint on loopback that records JSON POSTs (webhook actions); can refuse the first few."""

    def __init__(self, fail_first: int = 0) -> None:
        self.bodies: list[Any] = []
        self.attempts = 0
        self.fail_first = fail_first
        self.port = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.attempts += 1
        status = 500 if self.attempts <= self.fail_first else 200
        if status == 200:
            self.bodies.append(json.loads(body))
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})

    def __enter__(self) -> Receiver:
        import socket

        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(self, lifespan="off", log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        while not self._server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(5)


@pytest.fixture
def pg_fresh_url() -> Iterator[str]:
    """A PostgreSQL database for one test (the app migrates it at start-up), dropped afterwards."""
    name = f"bf_rt_{RUN_ID}_{uuid.uuid4().hex[:6]}"
    in_thread(asyncio.run, _admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        in_thread(asyncio.run, _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
