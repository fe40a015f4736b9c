"""Optimistic reads (`begin(optimistic=True)`): a store may skip the lock for a dialog it wrote last, and its
commit then saves only what was read from a dialog nobody changed, on every store kind (Redis and PostgreSQL
read unlocked; memory and SQLite, one process each, lock as usual)."""
from __future__ import annotations

import asyncio

import pytest

from server.runtime.keys import FORMAT_VERSION
from server.runtime.stores import BUSY, DUPLICATE, OK, DialogStore, TurnCommit, new_token
from server.runtime.stores.base import Changed
from server.runtime.stores.postgres import PostgresStore
from server.runtime.stores.redis import MARK_BUCKET, RedisStore
from server.runtime.stores.sql import sql_store
from tests.integration.stores.suite import begin_waiting, dialog, save


def replica(store: DialogStore) -> DialogStore:
    """A second process's store over the same Redis and prefix, or the same database (its own memory of
    what it wrote); the fixture closes it."""
    if isinstance(store, PostgresStore):
        other: DialogStore = sql_store(store.engine, store.clock)
        store.replicas.append(other)  # type: ignore[attr-defined]
        return other
    assert isinstance(store, RedisStore)
    return RedisStore("", prefix=store.keys.base.removesuffix(f":{FORMAT_VERSION}:"), clock=store.clock,
                      client=store.client, buckets=store.keys.buckets)


def reads_unlocked(store: DialogStore) -> bool:
    return store.kind.startswith("redis") or store.kind == "postgres"  # type: ignore[attr-defined]


async def test_a_dialog_this_store_wrote_is_read_without_its_lock_and_saved(store: DialogStore, bot: str) -> None:
    first = await store.begin(bot, "1", opener := new_token(), optimistic=True)
    assert first.locked, "nothing written yet: there is nothing to read unlocked"
    await store.release(bot, "1", opener, first)
    await save(store, bot, "1", TurnCommit(dialog("ask", n=1)))
    token = new_token()
    loaded = await store.begin(bot, "1", token, "m:mid.1", optimistic=True)
    assert (loaded.status, loaded.dialog) == (OK, dialog("ask", n=1))
    assert loaded.locked is not reads_unlocked(store)
    if not loaded.locked:  # nobody is kept waiting meanwhile
        other = await store.begin(bot, "1", probe := new_token())
        assert other.status == OK
        await store.release(bot, "1", probe, other)
    await store.commit(bot, "1", token, TurnCommit(dialog("ask", n=2), dedupe="m:mid.1"), loaded)
    assert await store.dialog(bot, "1") == dialog("ask", n=2)
    again = await store.begin(bot, "1", new_token(), "m:mid.1", optimistic=True)
    if again.locked:
        assert again.status == DUPLICATE
    else:  # the mark is checked by the commit
        with pytest.raises(Changed) as seen:
            await store.commit(bot, "1", new_token(), TurnCommit(dialog("twice"), dedupe="m:mid.1"), again)
        assert seen.value.loaded.status == DUPLICATE
    assert await store.dialog(bot, "1") == dialog("ask", n=2)


async def test_another_replicas_write_is_never_overwritten_by_a_stale_read(store: DialogStore, bot: str) -> None:
    if not reads_unlocked(store):
        pytest.skip("this store locks on every read")
    await save(store, bot, "2", TurnCommit(dialog("ask", step=1)))
    await save(replica(store), bot, "2", TurnCommit(dialog("ask", step=2)))  # the user's next update, elsewhere
    token = new_token()
    stale = await store.begin(bot, "2", token, optimistic=True)
    assert not stale.locked and stale.dialog == dialog("ask", step=1)
    with pytest.raises(Changed) as seen:
        await store.commit(bot, "2", token, TurnCommit(dialog("ask", step=2)), stale)
    fresh = seen.value.loaded
    assert (fresh.status, fresh.dialog, fresh.locked) == (OK, dialog("ask", step=2), True)
    assert (await store.begin(bot, "2", new_token())).status == BUSY, "the commit took the lock for the re-step"
    await store.commit(bot, "2", token, TurnCommit(dialog("ask", step=3)), fresh)
    assert await store.dialog(bot, "2") == dialog("ask", step=3)


async def test_a_stale_read_waits_behind_a_held_lock_and_saves_nothing(store: DialogStore, bot: str) -> None:
    if not reads_unlocked(store):
        pytest.skip("this store locks on every read")
    await save(store, bot, "3", TurnCommit(dialog("ask")))
    holder = await replica(store).begin(bot, "3", held := new_token())  # say, an erasure elsewhere
    assert holder.status == OK
    loaded = await store.begin(bot, "3", token := new_token(), optimistic=True)
    with pytest.raises(Changed) as seen:
        await store.commit(bot, "3", token, TurnCommit(dialog("mine")), loaded)
    assert seen.value.loaded.status == BUSY and seen.value.loaded.retry_ms > 0
    await store.release(bot, "3", held, holder)
    assert await store.dialog(bot, "3") == dialog("ask")
    assert (await begin_waiting(store, bot, "3", new_token())).status == OK


async def test_a_duplicate_of_an_older_bucket_and_an_expired_dialog_are_seen_by_the_commit(
        store: DialogStore, bot: str) -> None:
    if not reads_unlocked(store):
        pytest.skip("this store locks on every read")
    await save(store, bot, "4", TurnCommit(dialog("ask"), dedupe="m:mid.7"))
    store.test_clock.now += MARK_BUCKET  # type: ignore[attr-defined]  # the mark is in last bucket's set now
    loaded = await store.begin(bot, "4", token := new_token(), optimistic=True)
    with pytest.raises(Changed) as seen:
        await store.commit(bot, "4", token, TurnCommit(dialog("again"), dedupe="m:mid.7"), loaded)
    assert seen.value.loaded.status == DUPLICATE
    assert (await store.begin(bot, "4", new_token())).status == OK, "a duplicate leaves no lock behind"


async def test_an_expired_or_erased_dialog_is_not_brought_back(store: DialogStore, bot: str) -> None:
    if not reads_unlocked(store):
        pytest.skip("this store locks on every read")
    await save(store, bot, "5", TurnCommit(dialog("ask"), ttl=1))
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]
        await asyncio.sleep(1.3)  # Redis keeps its own time
    else:
        store.test_clock.now += 1.3  # type: ignore[attr-defined]
    loaded = await store.begin(bot, "5", token := new_token(), optimistic=True)
    assert loaded.dialog == dialog("ask")  # as this process wrote it
    with pytest.raises(Changed) as seen:
        await store.commit(bot, "5", token, TurnCommit(dialog("ask", again=True)), loaded)
    assert (seen.value.loaded.status, seen.value.loaded.dialog) == (OK, None)
    await store.release(bot, "5", token, seen.value.loaded)
    await save(store, bot, "6", TurnCommit(dialog("ask")))
    other = replica(store)
    loaded = await other.begin(bot, "6", token := new_token())
    await other.erase(bot, "6", token, loaded)
    loaded = await store.begin(bot, "6", token := new_token(), optimistic=True)
    with pytest.raises(Changed) as seen:
        await store.commit(bot, "6", token, TurnCommit(dialog("ask", again=True)), loaded)
    assert seen.value.loaded.dialog is None
    await store.release(bot, "6", token, seen.value.loaded)
    assert await store.dialog(bot, "6") is None
