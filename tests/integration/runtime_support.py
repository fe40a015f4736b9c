"""Fixtures for the runtime tests: a unique Redis prefix and PostgreSQL database per test session."""
from __future__ import annotations

import asyncio
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator

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


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database, migrated to head, dropped after the session."""
    from server.db.migrate import upgrade_blocking

    name = f"bf_runtime_{RUN_ID}"
    in_thread(asyncio.run, _admin(f'CREATE DATABASE "{name}"'))
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    try:
        in_thread(upgrade_blocking, url)
        yield url
    finally:
        in_thread(asyncio.run, _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A migrated SQLite file for one test."""
    from server.db.migrate import upgrade_blocking

    url = f"sqlite+aiosqlite:///{tmp_path / 'runtime.db'}"
    in_thread(upgrade_blocking, url)
    return url
