"""Dialogs and turns (`ports.DialogTurns`): locks, duplicates, expiry, erasure; run on every store kind."""
from __future__ import annotations

import asyncio

import pytest

from server.runtime.stores import BUSY, DUPLICATE, OK, DialogStore, LockLost, TurnCommit, new_token
from server.runtime.stores.base import LOCK_MS
from server.runtime.stores.redis import RedisStore
from tests.integration.stores.suite import begin_waiting, dialog, fill, save


async def test_a_dialog_round_trips_through_a_turn(store: DialogStore, bot: str) -> None:
    token = new_token()
    loaded = await store.begin(bot, "1", token)
    assert (loaded.status, loaded.dialog) == (OK, None)
    await store.commit(bot, "1", token, TurnCommit(dialog("ask", name="Иван")), loaded)
    assert await store.dialog(bot, "1") == dialog("ask", name="Иван")
    second = new_token()
    again = await begin_waiting(store, bot, "1", second)
    assert again.dialog == dialog("ask", name="Иван")
    await store.release(bot, "1", second, again)
    assert [u async for u in store.users(bot)] == ["1"]


async def test_a_second_turn_waits_for_the_first_and_sees_its_write(store: DialogStore, bot: str) -> None:
    first = new_token()
    loaded = await store.begin(bot, "7", first)
    second = asyncio.create_task(begin_waiting(store, bot, "7", token := new_token()))
    done, _ = await asyncio.wait({second}, timeout=0.3)
    assert not done, "a second turn must not start while the first holds the lock"
    await store.commit(bot, "7", first, TurnCommit(dialog("after_first")), loaded)
    seen = await asyncio.wait_for(second, 5)
    assert seen.dialog == dialog("after_first")
    await store.release(bot, "7", token, seen)


async def test_only_the_owner_releases_the_lock(store: DialogStore, bot: str) -> None:
    owner = new_token()
    loaded = await store.begin(bot, "8", owner)
    await store.release(bot, "8", "not-the-owner", type(loaded)(OK))
    waiting = asyncio.create_task(begin_waiting(store, bot, "8", token := new_token()))
    done, _ = await asyncio.wait({waiting}, timeout=0.3)
    assert not done
    await store.release(bot, "8", owner, loaded)
    later = await asyncio.wait_for(waiting, 5)
    assert later.status == OK
    await store.release(bot, "8", token, later)


async def test_a_commit_without_the_lock_writes_nothing(store: DialogStore, bot: str) -> None:
    owner = new_token()
    loaded = await store.begin(bot, "9", owner)
    with pytest.raises(LockLost):
        await store.commit(bot, "9", "stale-token", TurnCommit(dialog("stolen")), loaded)
    await store.commit(bot, "9", owner, TurnCommit(dialog("mine")), loaded)
    assert (await store.dialog(bot, "9"))["state"] == "mine"


async def test_duplicates_are_recognised_after_the_dialog_ended(store: DialogStore, bot: str) -> None:
    await save(store, bot, "2", TurnCommit(dialog("ask"), dedupe="m:mid.1"))
    await save(store, bot, "2", TurnCommit(None, dedupe="m:mid.2"))  # the dialog ended on this update
    assert (await store.begin(bot, "2", new_token(), "m:mid.1")).status == DUPLICATE
    assert (await store.begin(bot, "2", new_token(), "m:mid.2")).status == DUPLICATE
    fresh = await store.begin(bot, "2", token := new_token(), "m:mid.3")
    assert fresh.status == OK and fresh.dialog is None
    await store.release(bot, "2", token, fresh)


async def test_an_idle_dialog_expires_after_its_ttl(store: DialogStore, bot: str) -> None:
    await save(store, bot, "3", TurnCommit(dialog("ask"), ttl=1))
    assert await store.dialog(bot, "3") is not None
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]
        await asyncio.sleep(1.3)  # Redis keeps its own time
    else:
        store.test_clock.now += 1.5  # type: ignore[attr-defined]
    assert await store.dialog(bot, "3") is None
    loaded = await begin_waiting(store, bot, "3", token := new_token())
    assert loaded.dialog is None
    await store.release(bot, "3", token, loaded)


async def test_a_lock_is_short_renewable_and_taken_over_once_it_lapses(store: DialogStore, bot: str) -> None:
    first = new_token()
    loaded = await store.begin(bot, "11", first)
    assert (await store.begin(bot, "11", new_token())).status == BUSY
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]  # Redis keeps its own clock
        await asyncio.sleep(LOCK_MS / 1000 * 0.6)
        assert await store.renew(bot, "11", first) is True
        await asyncio.sleep(LOCK_MS / 1000 * 0.6)  # past the first expiry: renewed, so still held
        assert (await store.begin(bot, "11", new_token())).status == BUSY
        await asyncio.sleep(LOCK_MS / 1000 + 0.1)
    else:
        store.test_clock.now += LOCK_MS / 1000 * 0.6  # type: ignore[attr-defined]
        assert await store.renew(bot, "11", first) is True
        store.test_clock.now += LOCK_MS / 1000 * 0.6  # type: ignore[attr-defined]
        assert (await store.begin(bot, "11", new_token())).status == BUSY
        store.test_clock.now += LOCK_MS / 1000 + 0.1  # type: ignore[attr-defined]
    # The holder crashed: the next turn takes the lock, and the old holder can neither renew nor commit.
    later = await store.begin(bot, "11", second := new_token())
    assert later.status == OK
    assert await store.renew(bot, "11", first) is False
    with pytest.raises(LockLost):
        await store.commit(bot, "11", first, TurnCommit(dialog("stale")), loaded)
    await store.commit(bot, "11", second, TurnCommit(dialog("fresh")), later)
    assert (await store.dialog(bot, "11"))["state"] == "fresh"


async def test_erasure_leaves_nothing_of_the_user_and_keeps_the_others(store: DialogStore, bot: str) -> None:
    from tests.integration.privacy_support import leftovers

    await fill(store, bot, "1", 3)
    await fill(store, bot, "2", 2)
    assert await leftovers(store, bot, "1"), "the helper must see what a filled user leaves"
    token = new_token()
    loaded = await begin_waiting(store, bot, "1", token)
    erased = await store.erase(bot, "1", token, loaded)
    assert erased["dialog"] == 1 and erased["timeline"] == 3 and erased["outbox"] == 3 and erased["actions"] == 3
    assert erased["timer"] == 1
    assert await leftovers(store, bot, "1") == []
    assert await store.dialog(bot, "1") is None and await store.timeline(bot, "1") == []
    assert await store.outbox_head(bot, "1") is None
    # The other user keeps everything; the erased one's lock is free again.
    assert (await store.dialog(bot, "2"))["data"] == {"phone": "+79161234567"}
    assert len(await store.timeline(bot, "2")) == 2 and await store.outbox_head(bot, "2") is not None
    again = await begin_waiting(store, bot, "1", second := new_token())
    assert again.status == OK and again.dialog is None
    await store.release(bot, "1", second, again)


async def test_erasure_needs_the_users_lock(store: DialogStore, bot: str) -> None:
    await fill(store, bot, "5", 1)
    token = new_token()
    loaded = await store.begin(bot, "5", token)
    if isinstance(store, RedisStore):  # Redis keeps time by its own clock: another holder took the lock over
        await store.release(bot, "5", token, loaded)
        loaded = await begin_waiting(store, bot, "5", holder := new_token())
    else:
        store.test_clock.now += LOCK_MS / 1000 + 1  # type: ignore[attr-defined]
    with pytest.raises(LockLost):
        await store.erase(bot, "5", token, loaded)
    assert (await store.dialog(bot, "5"))["state"] == "ask", "a lost lock erases nothing of the dialog"
    if isinstance(store, RedisStore):
        await store.release(bot, "5", holder, loaded)
