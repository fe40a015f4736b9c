"""A Redis that lost dialogs is noticed: the user is told (the flow's `lost_place`) and starts again."""
from __future__ import annotations

import asyncio
import logging

from redis import Redis

from flows.model import DEFAULT_LOST_PLACE
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, registration, replicas, running, texts
from tests.integration.runtime_support import sqlite_url  # noqa: F401 (fixture)
from tests.redis_server import RedisServer

BOT = "lostbot"
HELLO = "Привет! Как вас зовут?"
ASK_PHONE = "Введите телефон в формате +7XXXXXXXXXX"


def lost_metric(body: str, reason: str) -> float:
    for line in body.splitlines():
        if line.startswith(f'botflow_store_lost_total{{reason="{reason}"}}'):
            return float(line.split()[-1])
    return 0.0


async def test_a_redis_restarted_empty_tells_each_running_user_once_and_starts_again(
        sqlite_url: str, fake_max: FakeMax, caplog) -> None:  # noqa: F811
    server = RedisServer().start()  # no persistence: a restart loses everything
    try:
        async with running(sqlite_url, fake_max.url, server.url) as h:
            await h.bot(BOT)
            await h.publish(BOT, registration())
            assert "data-store-lost" not in (await h.api("GET", "/bots/")).text
            for user in (9301, 9302):
                assert (await h.deliver(BOT, msg(user, "/start"))).status_code == 200
                assert (await h.deliver(BOT, msg(user, "Иван"))).status_code == 200
                await fake_max.wait_for(lambda f, u=user: texts(f, u) == [HELLO, ASK_PHONE], timeout=5)
            before = lost_metric((await h.api("GET", "/metrics")).text, "restarted_empty")
            server.kill()
            server.start()  # empty
            caplog.set_level(logging.ERROR, logger="botflow.runtime.store")
            for user in (9301, 9302):
                answer = await h.deliver(BOT, msg(user, "+79991234567"))
                for _ in range(20):  # the connection is made again within a few tries (503s meanwhile)
                    if answer.status_code == 200:
                        break
                    await asyncio.sleep(0.25)
                    answer = await h.deliver(BOT, msg(user, "+79991234567"))
                assert answer.status_code == 200
                await fake_max.wait_for(lambda f, u=user: len(texts(f, u)) >= 4, timeout=5)
                assert texts(fake_max, user) == [HELLO, ASK_PHONE, DEFAULT_LOST_PLACE, HELLO]
            # the next turn goes on in the new dialog, nothing lost again
            assert (await h.deliver(BOT, msg(9301, "Пётр"))).status_code == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9301)) >= 5, timeout=5)
            await asyncio.sleep(0.3)
            assert texts(fake_max, 9301) == [HELLO, ASK_PHONE, DEFAULT_LOST_PLACE, HELLO, ASK_PHONE]
            metrics = (await h.api("GET", "/metrics")).text
            assert lost_metric(metrics, "restarted_empty") == before + 1  # once, for both users
            assert sum("lost its data" in r.getMessage() for r in caplog.records) == 1
            russian = (await h.api("GET", "/bots/", headers={"Accept-Language": "ru"})).text
            english = (await h.api("GET", "/bots/", headers={"Accept-Language": "en"})).text
            assert "data-store-lost" in russian and "потеряло идущие диалоги" in russian
            assert "lost running dialogs" in english and "appendfsync everysec" in english
    finally:
        server.stop()
        server.cleanup()


async def test_a_dialog_older_than_this_replica_wrote_it_is_told_and_started_again(
        sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    server = RedisServer().start()
    client = Redis.from_url(server.url)
    try:
        async with running(sqlite_url, fake_max.url, server.url) as h:
            await h.bot(BOT)
            await h.publish(BOT, registration())
            assert (await h.deliver(BOT, msg(9311, "/start"))).status_code == 200
            key = next(iter(client.scan_iter(match="*{" + BOT + ":9311}:d")))
            older = client.get(key)
            assert (await h.deliver(BOT, msg(9311, "Иван"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9311) == [HELLO, ASK_PHONE], timeout=5)
            # what a promoted replica that missed the last write holds: the dialog one turn back
            client.set(key, older, keepttl=True)
            assert (await h.deliver(BOT, msg(9311, "+79991234567"))).status_code == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9311)) >= 4, timeout=5)
            assert texts(fake_max, 9311) == [HELLO, ASK_PHONE, DEFAULT_LOST_PLACE, HELLO]
            metrics = (await h.api("GET", "/metrics")).text
            assert lost_metric(metrics, "rewound") >= 1
            assert 'botflow_dialogs_lost_total{reason="rewound"}' in metrics
    finally:
        client.close()
        server.stop()
        server.cleanup()


async def test_a_user_whose_next_update_reaches_another_replica_is_told_too(
        sqlite_url: str, fake_max: FakeMax) -> None:  # noqa: F811
    server = RedisServer().start()
    try:
        async with replicas(2, sqlite_url, fake_max.url, server.url) as (a, b):
            await a.bot(BOT)
            await a.publish(BOT, registration())
            assert (await a.deliver(BOT, msg(9321, "/start"))).status_code == 200
            assert (await a.deliver(BOT, msg(9321, "Иван"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9321) == [HELLO, ASK_PHONE], timeout=5)
            server.kill()
            server.start()  # empty; only replica a wrote the dialog
            # replica a notices within a second and notes the dialogs it wrote, for every replica
            noted, client = a.runtime.store.lost.users_key, Redis.from_url(server.url)
            for _ in range(40):
                if client.scard(noted):
                    break
                await asyncio.sleep(0.1)
            client.close()
            phone = msg(9321, "+79991234567")
            for _ in range(20):
                status = (await b.deliver(BOT, phone)).status_code
                if status == 200:
                    break
                await asyncio.sleep(0.25)
            assert status == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9321)) >= 4, timeout=5)
            assert texts(fake_max, 9321) == [HELLO, ASK_PHONE, DEFAULT_LOST_PLACE, HELLO]
            # told once: the next update, on the replica that wrote it, goes on in the new dialog
            assert (await a.deliver(BOT, msg(9321, "Пётр"))).status_code == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9321)) >= 5, timeout=5)
            await asyncio.sleep(0.3)
            assert texts(fake_max, 9321) == [HELLO, ASK_PHONE, DEFAULT_LOST_PLACE, HELLO, ASK_PHONE]
    finally:
        server.stop()
        server.cleanup()


async def test_a_dialog_read_on_the_first_connection_to_an_emptied_redis_is_not_taken_for_a_new_user(
        sqlite_url: str, fake_max: FakeMax, monkeypatch) -> None:  # noqa: F811
    from server.runtime import lifecycle
    from server.runtime.stores import lost

    # Widened windows, so the race is met every time: replica b read the epoch record just before Redis
    # restarted and would not read it again for a minute; only its new connection tells it to.
    monkeypatch.setattr(lost, "RECHECK", 60.0)
    monkeypatch.setattr(lifecycle, "LOST_EVERY", 600.0)
    server = RedisServer().start()
    try:
        async with replicas(2, sqlite_url, fake_max.url, server.url) as (a, b):
            await a.bot(BOT)
            await a.publish(BOT, registration())
            assert (await a.deliver(BOT, msg(9331, "/start"))).status_code == 200
            assert (await a.deliver(BOT, msg(9331, "Иван"))).status_code == 200
            await fake_max.wait_for(lambda f: texts(f, 9331) == [HELLO, ASK_PHONE], timeout=5)
            await b.runtime.store.check_lost()
            server.kill()
            server.start()  # empty; only replica a wrote the dialog
            for _ in range(40):  # replica a notices (its every-second look, here made by hand) and notes it
                try:
                    await a.runtime.store.check_lost()
                    break
                except Exception:  # noqa: BLE001 - the connection is made again within a few tries
                    await asyncio.sleep(0.1)
            phone = msg(9331, "+79991234567")
            for _ in range(20):
                status = (await b.deliver(BOT, phone)).status_code
                if status == 200:
                    break
                await asyncio.sleep(0.25)
            assert status == 200
            await fake_max.wait_for(lambda f: len(texts(f, 9331)) >= 4, timeout=5)
            assert texts(fake_max, 9331) == [HELLO, ASK_PHONE, DEFAULT_LOST_PLACE, HELLO]
    finally:
        server.stop()
        server.cleanup()
