"""The Redis listing across many SCAN batches: pages that end inside a batch resume without loss or repeats,
and a page that found nothing within its SCAN budget still hands out a cursor to go on."""
from __future__ import annotations

import asyncio

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


async def test_pages_lose_nothing_while_redis_rehashes_its_keys_between_them(store: RedisStore,
                                                                             monkeypatch) -> None:
    """Redis grows its key table as keys come (dialogs start) and moves keys into the new one a little at
    a time: a SCAN step from the same cursor then returns the same keys in another order, so a page must
    not count on walking one step again and skipping what it showed."""
    from dataclasses import replace

    monkeypatch.setattr(redis_listing, "SCAN_COUNT", 7)
    raw = Redis.from_url(REDIS_URL)
    filler = store.keys.base + "filler:"
    size = int(await raw.dbsize())
    grow = max(0, 2 ** (size.bit_length() + 1) - size + 1000)  # past the next power of two: the table doubles
    search, seen = Search(limit=4), []
    try:
        for start in range(0, grow, 5000):
            await raw.mset({f"{filler}{i}": 1 for i in range(start, min(grow, start + 5000))})
        while True:
            page = await store.dialog_page(BOT, search)
            seen += [d.user for d in page.dialogs]
            if page.next is None:
                break
            await asyncio.sleep(0.11)  # a cron pass (every 100 ms) moves keys into the new table
            search = replace(search, cursor=page.next)
    finally:
        async for key in raw.scan_iter(match=filler + "*", count=5000):
            await raw.delete(key)
        await raw.aclose()
    assert sorted(set(seen)) == [f"{n:03d}" for n in range(60)]


async def test_users_a_page_had_no_room_for_come_first_on_the_next_read_again(store: RedisStore) -> None:
    """A SCAN step is never split (a bucket of keys comes whole): a page that ends inside one carries the
    rest in its cursor, and the next page reads them again (one ended meanwhile, one moved on)."""
    raw = Redis.from_url(REDIS_URL)
    await raw.delete(store.keys.user(BOT, "004") + "d")
    await raw.aclose()
    held = redis_listing._cursor(0, ["003", "004", "005", "006"])  # the walk had ended: nothing after them
    page = await store.dialog_page(BOT, Search(state="b", cursor=held, limit=1))
    assert [d.user for d in page.dialogs] == ["003"] and page.next is not None
    page = await store.dialog_page(BOT, Search(state="b", cursor=page.next, limit=1))
    assert [d.user for d in page.dialogs] == ["006"] and page.next is None  # 004 ended, 005 is in state a


@pytest.mark.parametrize("cursor", ["", "x", "12.", "12.!!", "12.bm90IGpzb24", "12." + "A" * 9000,
                                    "12.eyJhIjogMX0=", "12.WzFd", "12.W10="])
async def test_a_cursor_the_listing_never_handed_out_is_refused(store: RedisStore, cursor: str) -> None:
    from server.runtime.stores.listing import BadSearch

    with pytest.raises(BadSearch, match="start again"):
        await store.dialog_page(BOT, Search(cursor=cursor or "-1"))
