"""BOTFLOW_REDIS_MIN_REPLICAS: a turn is acknowledged only once Redis replicas hold it."""
from __future__ import annotations

import asyncio
import time

from redis import Redis

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, registration, running, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401 (fixture)
from tests.redis_server import RedisServer

BOT = "replbot"
HELLO = "Привет! Как вас зовут?"
ASK_PHONE = "Введите телефон в формате +7XXXXXXXXXX"


def replicas_up(master: RedisServer, count: int) -> None:
    client = Redis.from_url(master.url, socket_timeout=2)
    deadline = time.monotonic() + 20
    try:
        while sum(1 for key, value in client.info("replication").items()
                  if key.startswith("slave") and isinstance(value, dict) and value.get("state") == "online") < count:
            assert time.monotonic() < deadline, "the replica did not connect"
            time.sleep(0.1)
    finally:
        client.close()


async def test_a_turn_waits_for_its_replica_and_answers_503_when_none_confirms(
        sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    master = RedisServer().start()
    replica = RedisServer(extra=("--replicaof", "127.0.0.1", str(master.port))).start()
    try:
        replicas_up(master, 1)
        async with running(sqlite_url, fake_max.url, master.url, redis_min_replicas=1) as h:
            await h.bot(BOT)
            await h.publish(BOT, registration())
            assert (await h.deliver(BOT, msg(9201, "/start"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9201) == [HELLO], timeout=5)
            replica.pause()  # the replica stops confirming
            name = msg(9201, "Иван")
            started = time.monotonic()
            refused = await h.deliver(BOT, name)
            assert refused.status_code == 503 and time.monotonic() - started < 3
            await asyncio.sleep(0.5)
            assert texts(fake_max, 9201) == [HELLO]  # nothing leaves before a replica holds the turn
            replica.resume()
            # MAX delivers it again: the turn was saved, so this is a duplicate and nothing runs twice.
            assert (await h.deliver(BOT, name)).status_code == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9201)) == 2, timeout=10)
            await asyncio.sleep(0.6)
        assert texts(fake_max, 9201) == [HELLO, ASK_PHONE]
    finally:
        replica.resume()
        replica.stop()
        master.stop()
        replica.cleanup()
        master.cleanup()
