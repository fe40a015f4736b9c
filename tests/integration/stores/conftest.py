"""The one dialog-store suite's fixtures: every store kind (memory, SQLite, PostgreSQL, Redis on both clients)."""
from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from server.db.engine import make_engine
from server.runtime.stores import DialogStore
from server.runtime.stores.memory import MemoryStore
from server.runtime.stores.redis import RedisStore
from server.runtime.stores.sql import SqlStore
from server.runtime.stores.resp import RedisPyClient
from tests.redis_server import RedisServer
from tests.integration.stores.suite import Clock
from tests.integration.runtime_support import REDIS_URL, pg_url, redis_prefix, sqlite_url  # noqa: F401

# "redis-py": the same Redis store over redis-py on a unix socket, the path non-redis:// URLs take.
KINDS = ["memory", "sqlite", "postgres", "redis", "redis-py"]


@pytest.fixture(scope="module")
def unix_redis():
    """A private redis-server listening only on a unix socket."""
    with RedisServer(unix=True) as server:
        yield server


@pytest.fixture(params=KINDS)
async def store(request, tmp_path) -> AsyncIterator[DialogStore]:
    clock = Clock()
    kind = request.param
    engine = None
    if kind == "memory":
        made: DialogStore = MemoryStore(clock)
    elif kind == "sqlite":
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = SqlStore(engine, clock)
    elif kind == "postgres":
        engine = make_engine(request.getfixturevalue("pg_url"))
        made = SqlStore(engine, clock)
    elif kind == "redis":  # timelines move on to a database (moved by hand here: `move_timeline`)
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = RedisStore(REDIS_URL, prefix=request.getfixturevalue("redis_prefix"), clock=clock, timeline_db=engine)
    else:  # redis-py, the client for rediss:// and unix:// URLs
        url = request.getfixturevalue("unix_redis").url
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = RedisStore(url, prefix="bf" + uuid.uuid4().hex[:8], clock=clock, client=RedisPyClient(url),
                          timeline_db=engine)
    made.kind = kind  # type: ignore[attr-defined]
    made.test_clock = clock  # type: ignore[attr-defined]
    yield made
    await made.close()
    if engine is not None:
        await engine.dispose()


@pytest.fixture
def bot() -> str:
    # PostgreSQL is shared by the session's tests: each test gets its own bot.
    return "b" + uuid.uuid4().hex[:10]
