"""Fixtures of the store suites (one per port, test_port_*.py), each run on every store kind:
memory, SQLite, PostgreSQL, and Redis on both clients."""
from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from server.db.engine import make_engine
from server.runtime.stores import DialogStore
from server.runtime.stores.memory import MemoryStore
from server.runtime.stores.redis import RedisStore
from server.runtime.stores.sql import sql_store
from server.runtime.stores.resp import RedisPyClient, connect
from tests.redis_cluster import LocalCluster
from tests.redis_server import RedisServer
from tests.integration.stores.suite import Clock
from tests.integration.runtime_support import REDIS_URL, pg_url, redis_prefix, sqlite_url  # noqa: F401

# "redis-py": the same Redis store over redis-py on a unix socket, the path non-redis:// URLs take.
# "redis-buckets": a cluster's key layout (bots spread over buckets) on the one Redis; "redis-cluster": a
# real Redis Cluster of 3 masters and 3 replicas.
KINDS = ["memory", "sqlite", "postgres", "redis", "redis-py", "redis-buckets", "redis-cluster"]


@pytest.fixture(scope="module")
def unix_redis():
    """A private redis-server listening only on a unix socket."""
    with RedisServer(unix=True) as server:
        yield server


@pytest.fixture(scope="session")
def redis_cluster():
    """A private Redis Cluster (6 nodes), started once for the session."""
    with LocalCluster() as cluster:
        yield cluster


@pytest.fixture(params=KINDS)
async def store(request, tmp_path) -> AsyncIterator[DialogStore]:
    clock = Clock()
    kind = request.param
    engine = None
    if kind == "memory":
        made: DialogStore = MemoryStore(clock)
    elif kind == "sqlite":
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = sql_store(engine, clock)
    elif kind == "postgres":
        engine = make_engine(request.getfixturevalue("pg_url"))
        made = sql_store(engine, clock)
    elif kind == "redis":  # timelines move on to a database (moved by hand here: `move_timeline`)
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = RedisStore(REDIS_URL, prefix=request.getfixturevalue("redis_prefix"), clock=clock, timeline_db=engine)
    elif kind == "redis-buckets":
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = RedisStore(REDIS_URL, prefix=request.getfixturevalue("redis_prefix"), clock=clock, timeline_db=engine,
                          buckets=4)
    elif kind == "redis-cluster":
        url = request.getfixturevalue("redis_cluster").url
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = RedisStore(url, prefix="bf" + uuid.uuid4().hex[:8], clock=clock, client=connect(url),
                          timeline_db=engine)
    else:  # redis-py, the client for rediss:// and unix:// URLs
        url = request.getfixturevalue("unix_redis").url
        engine = make_engine(request.getfixturevalue("sqlite_url"))
        made = RedisStore(url, prefix="bf" + uuid.uuid4().hex[:8], clock=clock, client=RedisPyClient(url),
                          timeline_db=engine)
    made.kind = kind  # type: ignore[attr-defined]
    made.test_clock = clock  # type: ignore[attr-defined]
    made.replicas = []  # type: ignore[attr-defined]  # other processes' stores a test made (`replica`)
    yield made
    for other in made.replicas:  # type: ignore[attr-defined]
        await other.close()
    await made.close()
    if engine is not None:
        await engine.dispose()


@pytest.fixture
def bot() -> str:
    # PostgreSQL is shared by the session's tests: each test gets its own bot.
    return "b" + uuid.uuid4().hex[:10]
