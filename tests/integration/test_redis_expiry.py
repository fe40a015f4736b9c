"""Redis finds expired dialogs through the timers zset: the timer pass counts them, with no index of their own."""
from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from server.runtime.funnel_counts import Counts, group
from server.runtime.stores import OK, TurnCommit, new_token
from server.runtime.stores.redis import RedisStore
from tests.integration.runtime_support import REDIS_URL, redis_prefix  # noqa: F401


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def save(store: RedisStore, user: str, write: TurnCommit) -> None:
    token = new_token()
    loaded = await store.begin("bot", user, token)
    assert loaded.status == OK
    await store.commit("bot", user, token, write, loaded)


def hours(now: float) -> range:
    return range(int(now // 3600) - 1, int(now // 3600) + 2)


@pytest.fixture
async def made(redis_prefix: str) -> AsyncIterator[tuple[RedisStore, Redis, Clock]]:
    """The store under a fresh prefix on a settable clock, and a plain client to look at its keys."""
    clock = Clock()
    store, raw = RedisStore(REDIS_URL, prefix=redis_prefix, clock=clock), Redis.from_url(REDIS_URL)
    yield store, raw, clock
    await store.close()
    await raw.aclose()


async def test_the_timer_pass_counts_an_expired_dialog_without_a_sweep(made: tuple[RedisStore, Redis, Clock]) -> None:
    store, raw, clock = made
    now = clock.now
    dialog = {"flow": "f", "version": 1, "state": "ask"}
    await save(store, "1", TurnCommit(dialog, ttl=600, counts=Counts([(group("f", 1, now), "e:ask")])))
    await save(store, "2", TurnCommit(dialog, ttl=600, timer_due=now + 30, counts=Counts([])))
    # One entry per dialog: at its expiry, or at its timer when that comes first.
    assert await raw.zscore(store.keys.timers, "bot|1") == now + 600 + 0.25
    assert await raw.zscore(store.keys.timers, "bot|2") == now + 30
    await raw.delete(store.keys.user("bot", "1") + "d")  # as Redis does when the TTL runs out
    clock.now = now + 601
    assert await store.timers_due(clock.now, lease=5) == [("bot", "2")]  # 1 is gone: counted, not fired
    assert await store.funnel("bot", "f", "1", hours(clock.now)) == {"e:ask": 1, "x:ask": 1}
    assert await raw.zscore(store.keys.timers, "bot|1") is None
    assert await raw.hget(store.keys.expiry_info, "bot|1") is None
    await store.sweep(clock.now)
    assert await store.funnel("bot", "f", "1", hours(clock.now)) == {"e:ask": 1, "x:ask": 1}


async def test_the_sweep_folds_in_the_expiry_zset_of_earlier_releases(made: tuple[RedisStore, Redis, Clock]) -> None:
    store, raw, clock = made
    now = clock.now
    # As an earlier release left them: a zset entry and its info for a dialog Redis has since dropped,
    # and one for a dialog still running whose timer comes later.
    await raw.zadd(store.keys.legacy_expiry, {"bot|7": now - 10, "bot|8": now + 100})
    await raw.hset(store.keys.expiry_info, mapping={"bot|7": "f|1\task", "bot|8": "f|1\twait"})
    await save(store, "8", TurnCommit({"flow": "f", "version": 1, "state": "wait"}, ttl=600, timer_due=now + 500))
    await store.sweep(now)
    assert await raw.exists(store.keys.legacy_expiry) == 0
    assert await store.funnel("bot", "f", "1", hours(now)) == {"x:ask": 1}
    assert await raw.zscore(store.keys.timers, "bot|8") == now + 100  # the earlier of the two times
