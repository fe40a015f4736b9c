"""Redis behind Sentinel: the store follows a failover to the promoted replica; webhooks between answer 503."""
from __future__ import annotations

import asyncio
import time


from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, registration, running, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401 (fixture)
from tests.integration.test_redis_replicas import replicas_up
from tests.redis_server import RedisServer, SentinelServer

BOT = "sentbot"
HELLO = "Привет! Как вас зовут?"
ASK_PHONE = "Введите телефон в формате +7XXXXXXXXXX"


def role(server: RedisServer) -> str | None:
    """The server's replication role; None while it drops its clients (the sentinels' CLIENT KILL that
    comes with turning a master into a replica)."""
    client = Redis.from_url(server.url, socket_timeout=2)
    try:
        return client.info("replication")["role"]
    except RedisConnectionError:
        return None
    finally:
        client.close()


async def test_the_store_follows_a_failover_to_the_promoted_replica(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    master = RedisServer().start()
    replicas = [RedisServer(extra=("--replicaof", "127.0.0.1", str(master.port))).start() for _ in range(2)]
    sentinels = [SentinelServer(master) for _ in range(3)]
    try:
        replicas_up(master, 2)
        for each in sentinels:
            each.start()
        url = "redis+sentinel://" + ",".join(f"127.0.0.1:{s.port}" for s in sentinels) + "/mymaster"
        # every turn held by a replica before its webhook answers: nothing acknowledged is lost (after the
        # failover the other replica follows the promoted one, and confirms again)
        async with running(sqlite_url, fake_max.url, url, redis_min_replicas=1) as h:
            await h.bot(BOT)
            await h.publish(BOT, registration())
            assert (await h.deliver(BOT, msg(9401, "/start"))).status_code == 200
            assert (await h.deliver(BOT, msg(9401, "Иван"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9401) == [HELLO, ASK_PHONE], timeout=5)
            master.kill()
            killed = time.monotonic()
            phone = msg(9401, "+79991234567")
            statuses = []
            while time.monotonic() - killed < 20:  # MAX delivers again until it gets a 200
                statuses.append((await h.deliver(BOT, phone)).status_code)
                if statuses[-1] == 200:
                    break
                await asyncio.sleep(0.25)
            followed = time.monotonic() - killed
            assert statuses[-1] == 200 and set(statuses[:-1]) <= {503}, statuses
            assert followed < 10, f"the failover was followed after {followed:.1f} s"
            # The sentinels end with one master and its replica. On a loaded host a failover can outlast
            # their 3 s failover-timeout and be tried again, and for a while both replicas say "master"
            # (seen twice in CI runs) until the sentinels turn the one they did not choose back.
            settled = time.monotonic() + 15
            roles = sorted(str(role(each)) for each in replicas)
            while roles != ["master", "slave"] and time.monotonic() < settled:
                await asyncio.sleep(0.25)
                roles = sorted(str(role(each)) for each in replicas)
            assert roles == ["master", "slave"], roles
            # and the one turned back has caught up, so a turn can be held by a replica again (MIN_REPLICAS=1)
            replicas_up(next(each for each in replicas if role(each) == "master"), 1)
            await fake_max.wait_for(lambda f: len(texts(f, 9401)) >= 3, timeout=5)
            # the dialog went on where it was: the promoted replica held every acknowledged turn
            assert texts(fake_max, 9401)[:2] == [HELLO, ASK_PHONE]
            assert texts(fake_max, 9401)[2] not in (HELLO, ASK_PHONE)
            assert (await h.deliver(BOT, msg(9402, "/start"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9402) == [HELLO], timeout=5)
    finally:
        for server in (*sentinels, *replicas, master):
            server.cleanup()


async def test_a_master_demoted_while_alive_is_left_for_the_promoted_one(sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    master = RedisServer().start()
    replica = RedisServer(extra=("--replicaof", "127.0.0.1", str(master.port))).start()
    sentinels = [SentinelServer(master) for _ in range(3)]
    try:
        replicas_up(master, 1)
        for each in sentinels:
            each.start()
        url = "redis+sentinel://" + ",".join(f"127.0.0.1:{s.port}" for s in sentinels) + "/mymaster"
        # A forced failover does not wait for the replica to catch up: a turn only the old master held
        # is lost, and the store rightly says so. Held by the replica before its webhook answers, the
        # dialog must go on (and must not be taken for lost while the sentinels move the master).
        async with running(sqlite_url, fake_max.url, url, redis_min_replicas=1) as h:
            await h.bot(BOT)
            await h.publish(BOT, registration())
            assert (await h.deliver(BOT, msg(9411, "/start"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9411) == [HELLO], timeout=5)
            # the old master stays up and becomes a replica: the open connection to it must not stay
            asked = Redis(port=sentinels[0].port, socket_timeout=2)
            asked.execute_command("SENTINEL", "FAILOVER", "mymaster")
            asked.close()
            started = time.monotonic()
            while role(replica) != "master" or role(master) != "slave":
                assert time.monotonic() - started < 15, "the sentinels did not fail over"
                await asyncio.sleep(0.1)
            name = msg(9411, "Иван")
            while (status := (await h.deliver(BOT, name)).status_code) != 200:
                assert status == 503 and time.monotonic() - started < 15
                await asyncio.sleep(0.25)
            await fake_max.wait_for(lambda f: texts(f, 9411) == [HELLO, ASK_PHONE], timeout=5)
            client = Redis(port=replica.port, socket_timeout=2)
            assert any(key.endswith(b"{" + BOT.encode() + b":9411}:d") for key in client.scan_iter())
            client.close()
    finally:
        for server in (*sentinels, replica, master):
            server.cleanup()
