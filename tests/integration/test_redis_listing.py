"""The Redis listing across many SCAN batches: pages that end inside a batch resume without loss or repeats,
and a page that found nothing within its SCAN budget still hands out a cursor to go on."""
from __future__ import annotations


import msgspec
import pytest
from redis.asyncio import Redis

from server.runtime.stores import redis_listing
from server.runtime.stores.listing import Search
from server.runtime.stores.redis import RedisStore
from tests.integration.runtime_support import REDIS_URL, redis_prefix  # noqa: F401
from tests.integration.stores.suite import all_pages

BOT = "scanbot"


@pytest.fixture
async def store(redis_prefix: str):  # noqa: F811
    made = RedisStore(REDIS_URL, prefix=redis_prefix)
    raw = Redis.from_url(REDIS_URL)
    for n in range(60):
        session = {"flow": "f", "version": 1 + n % 2, "state": "a" if n % 3 else "b", "data": {}, "updated_at": 1.0}
        await raw.set(made.keys.user(BOT, f"{n:03d}") + "d", msgspec.msgpack.encode(session), ex=600)
        await raw.set(made.keys.user(BOT + "x", f"{n:03d}") + "d", msgspec.msgpack.encode(session), ex=600)
    await raw.aclose()
    yield made
    await made.close()


async def test_pages_cross_scan_batches_without_loss_or_repeats(store: RedisStore, monkeypatch) -> None:
    monkeypatch.setattr(redis_listing, "SCAN_COUNT", 7)
    seen, pages = await all_pages(store, BOT, Search(limit=4))
    assert sorted(seen) == [f"{n:03d}" for n in range(60)]
    assert pages >= 15
    states, _ = await all_pages(store, BOT, Search(state="b", version=1, limit=3))
    assert sorted(states) == [f"{n:03d}" for n in range(60) if n % 3 == 0 and n % 2 == 0]
    prefixed, _ = await all_pages(store, BOT, Search(user="01", limit=4))
    assert sorted(prefixed) == [f"{n:03d}" for n in range(10, 20)]


async def test_a_page_within_its_scan_budget_may_be_empty_but_goes_on(store: RedisStore, monkeypatch) -> None:
    monkeypatch.setattr(redis_listing, "SCAN_COUNT", 2)
    monkeypatch.setattr(redis_listing, "SCAN_STEPS", 1)
    page = await store.dialog_page(BOT, Search(user="059", limit=5))
    # ~2 keys of the whole database a page: the shared server may hold other tenants' keys too.
    keys = await store.client.call("DBSIZE")
    seen, _ = await all_pages(store, BOT, Search(user="059", limit=5), most=1000 + keys)
    assert seen == ["059"]
    assert page.next is not None  # 2 keys looked at out of 120+: the walk is not over
