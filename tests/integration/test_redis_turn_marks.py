"""A failover to a replica that was behind is told whichever replica the user's next update reaches."""
from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from redis import Redis

from flows.model import DEFAULT_LOST_PLACE
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.faults.lag_proxy import LagProxy
from tests.integration.runtime_app import msg, registration, replicas, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401 (fixture)
from tests.integration.test_redis_replicas import replicas_up
from tests.integration.test_redis_sentinel import role
from tests.redis_server import RedisServer, SentinelServer

BOT = "markbot"
HELLO = "Привет! Как вас зовут?"
ASK_PHONE = "Введите телефон в формате +7XXXXXXXXXX"
ASK_EMAIL = "Введите email"


def offset(server: RedisServer) -> int:
    client = Redis.from_url(server.url, socket_timeout=2)
    try:
        return int(client.info("replication")["master_repl_offset"])
    finally:
        client.close()


async def test_a_dialog_rewound_by_a_failover_is_told_by_a_replica_that_did_not_write_it(
        sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    master = RedisServer().start()
    proxy = LagProxy(master.port).__enter__()  # holds back the replica's stream alone, on demand
    replica = RedisServer(extra=("--replicaof", "127.0.0.1", str(proxy.port))).start()
    sentinels = [SentinelServer(SimpleNamespace(port=proxy.port)) for _ in range(3)]  # type: ignore[arg-type]
    try:
        replicas_up(master, 1)
        for each in sentinels:
            each.start()
        url = "redis+sentinel://" + ",".join(f"127.0.0.1:{s.port}" for s in sentinels) + "/mymaster"
        async with replicas(2, sqlite_url, fake_max.url, url) as (a, b):
            await a.bot(BOT)
            await a.publish(BOT, registration())
            assert (await a.deliver(BOT, msg(9421, "/start"))).status_code == 200
            assert (await a.deliver(BOT, msg(9421, "Иван"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9421) == [HELLO, ASK_PHONE], timeout=5)
            await asyncio.sleep(0.5)  # the sends' acknowledgements written too
            while offset(replica) < offset(master):  # the replica holds turn 2 and everything before
                await asyncio.sleep(0.05)
            proxy.hold()
            # turn 3, on the master alone, written by replica a
            assert (await a.deliver(BOT, msg(9421, "+79991234567"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9421) == [HELLO, ASK_PHONE, ASK_EMAIL], timeout=5)
            master.kill()
            killed = time.monotonic()
            while role(replica) != "master":
                assert time.monotonic() - killed < 30, "the sentinels did not promote the replica"
                await asyncio.sleep(0.1)
            # the next update reaches replica b, which never saw turn 3: told all the same
            email = msg(9421, "ivan@example.com")
            while (status := (await b.deliver(BOT, email)).status_code) != 200:
                assert status == 503 and time.monotonic() - killed < 40, status
                await asyncio.sleep(0.25)
            await fake_max.wait_for(lambda f: len(texts(f, 9421)) >= 5, timeout=5)
            assert texts(fake_max, 9421) == [HELLO, ASK_PHONE, ASK_EMAIL, DEFAULT_LOST_PLACE, HELLO], texts(fake_max, 9421)
            # told once: the next turn goes on in the dialog begun again
            assert (await b.deliver(BOT, msg(9421, "Пётр"))).status_code == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9421)) >= 6, timeout=5)
            assert texts(fake_max, 9421)[5] == ASK_PHONE
    finally:
        for server in (*sentinels, replica, master):
            server.cleanup()
        proxy.__exit__(None, None, None)
