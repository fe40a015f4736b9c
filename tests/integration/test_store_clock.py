"""One clock: a replica whose own clock is off writes and compares every time on the store's clock."""
from __future__ import annotations

import asyncio
import logging
import time

import pytest

from server import metrics
from server.runtime.store_clock import StoreClock
from server.runtime.stores.redis import RedisStore
from tests.fakemax import FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)
from tests.integration.runtime_app import msg, running, texts
from tests.integration.runtime_support import REDIS_URL, redis_prefix, sqlite_url  # noqa: F401 (fixtures)
from tests.integration.test_runtime_timers import waiting_flow

BOT = "clockbot"


async def test_the_offset_to_redis_is_measured_exported_and_warned_about(
        redis_prefix: str, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    store = RedisStore(REDIS_URL, prefix=redis_prefix)
    try:
        clock = StoreClock(store, wall=lambda: time.time() + 300)  # this host 5 minutes ahead
        with caplog.at_level(logging.WARNING, logger="botflow.runtime.clock"):
            offset = await clock.measure()
            await clock.measure()
        assert abs(offset + 300) < 0.05 and abs(clock() - time.time()) < 0.05
        assert metrics.REGISTRY.get_sample_value("botflow_clock_offset_seconds") == clock.offset
        warned = [r for r in caplog.records if getattr(r, "event", "") == "clock_offset"]
        assert len(warned) == 1 and abs(float(warned[0].getMessage().split()[4]) - 300) < 0.05  # once, not every measurement
        honest = StoreClock(store)
        assert abs(await honest.measure()) < 0.05
    finally:
        await store.close()


@pytest.mark.parametrize("skew", [300.0, -60.0])
async def test_a_replica_whose_clock_is_off_fires_reminders_neither_early_nor_twice(
        skew: float, sqlite_url: str, fake_max: FakeMax, redis_prefix: str, monkeypatch) -> None:  # noqa: F811
    """Two replicas over one Redis, one of them `skew` seconds off: dialogs opened on either, a reminder
    after 1 s and a timeout after 2 s, each polled by both."""
    monkeypatch.setenv("BOTFLOW_REDIS_PREFIX", redis_prefix)
    async with running(sqlite_url, fake_max.url, REDIS_URL) as a, running(sqlite_url, fake_max.url, REDIS_URL) as b:
        b.runtime.clock.wall = lambda: time.time() + skew
        await b.runtime.clock.measure()
        await a.bot(BOT)
        await a.publish(BOT, waiting_flow(timeout=2))
        users = list(range(8300, 8310))
        opened = time.time()
        await asyncio.gather(*((a if u % 2 else b).deliver(BOT, msg(u, "hi")) for u in users))
        await fake_max.wait_for(lambda f: all("Время вышло" in texts(f, u) for u in users), timeout=10)
        await asyncio.sleep(0.6)  # a second firing, if any, would land within a couple of timer passes
    for user in users:
        assert texts(fake_max, user) == ["Ждём оплату", "Напоминаем: ждём оплату", "Время вышло"], user
    reminders = [c["time"] for c in fake_max.calls
                 if c["path"] == "/messages" and "Напоминаем" in str(c.get("json"))]
    assert len(reminders) == len(users) and min(reminders) - opened >= 0.9  # none early
