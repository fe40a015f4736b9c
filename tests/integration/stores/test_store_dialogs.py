"""The dialog-store suite, run on every store kind: turns, locks, timers, outbox, listing, erasure, retention."""
from __future__ import annotations

import asyncio
import uuid

import pytest

from server.runtime.bot_counts import bot_counts
from server.runtime.stores import BUSY, DUPLICATE, OK, DialogStore, LockLost, Write, new_token
from server.runtime.stores.base import LOCK_MS
from server.runtime.stores.listing import CURSOR_MAX, BadSearch, Search
from server.runtime.stores.redis import RedisStore
from tests.integration.stores.suite import all_pages, begin_waiting, dialog, save


async def test_a_dialog_round_trips_through_a_turn(store: DialogStore, bot: str) -> None:
    token = new_token()
    loaded = await store.begin(bot, "1", token)
    assert (loaded.status, loaded.session) == (OK, None)
    await store.commit(bot, "1", token, Write(dialog("ask", name="Иван")), loaded)
    assert await store.session(bot, "1") == dialog("ask", name="Иван")
    second = new_token()
    again = await begin_waiting(store, bot, "1", second)
    assert again.session == dialog("ask", name="Иван")
    await store.release(bot, "1", second, again)
    assert [u async for u in store.users(bot)] == ["1"]


async def test_a_second_turn_waits_for_the_first_and_sees_its_write(store: DialogStore, bot: str) -> None:
    first = new_token()
    loaded = await store.begin(bot, "7", first)
    second = asyncio.create_task(begin_waiting(store, bot, "7", token := new_token()))
    done, _ = await asyncio.wait({second}, timeout=0.3)
    assert not done, "a second turn must not start while the first holds the lock"
    await store.commit(bot, "7", first, Write(dialog("after_first")), loaded)
    seen = await asyncio.wait_for(second, 5)
    assert seen.session == dialog("after_first")
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
    if store.kind == "postgres":  # type: ignore[attr-defined]
        pytest.skip("PostgreSQL's lock is the turn's own transaction: there is no token to lose")
    owner = new_token()
    loaded = await store.begin(bot, "9", owner)
    with pytest.raises(LockLost):
        await store.commit(bot, "9", "stale-token", Write(dialog("stolen")), loaded)
    await store.commit(bot, "9", owner, Write(dialog("mine")), loaded)
    assert (await store.session(bot, "9"))["state"] == "mine"


async def test_duplicates_are_recognised_after_the_dialog_ended(store: DialogStore, bot: str) -> None:
    await save(store, bot, "2", Write(dialog("ask"), dedupe="m:mid.1"))
    await save(store, bot, "2", Write(None, dedupe="m:mid.2"))  # the dialog ended on this update
    assert (await store.begin(bot, "2", new_token(), "m:mid.1")).status == DUPLICATE
    assert (await store.begin(bot, "2", new_token(), "m:mid.2")).status == DUPLICATE
    fresh = await store.begin(bot, "2", token := new_token(), "m:mid.3")
    assert fresh.status == OK and fresh.session is None
    await store.release(bot, "2", token, fresh)


async def test_an_idle_dialog_expires_after_its_ttl(store: DialogStore, bot: str) -> None:
    await save(store, bot, "3", Write(dialog("ask"), ttl=1))
    assert await store.session(bot, "3") is not None
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]
        await asyncio.sleep(1.3)  # Redis keeps its own time
    else:
        store.test_clock.now += 1.5  # type: ignore[attr-defined]
    assert await store.session(bot, "3") is None
    loaded = await begin_waiting(store, bot, "3", token := new_token())
    assert loaded.session is None
    await store.release(bot, "3", token, loaded)


async def test_a_due_timer_is_claimed_once_until_its_lease_ends(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "5", Write(dialog("wait"), timer_due=now + 10))
    await save(store, bot, "6", Write(dialog("wait"), timer_due=now + 20))
    mine = lambda claimed: sorted(u for b, u in claimed if b == bot)  # noqa: E731
    assert mine(await store.timers_due(now + 5, lease=30)) == []
    first, second = await asyncio.gather(store.timers_due(now + 15, lease=30), store.timers_due(now + 15, lease=30))
    assert sorted(mine(first) + mine(second)) == ["5"]
    assert mine(await store.timers_due(now + 16, lease=30)) == []
    assert mine(await store.timers_due(now + 46, lease=30)) == ["5", "6"]
    await save(store, bot, "5", Write(None))  # a dropped dialog has no timer
    assert mine(await store.timers_due(now + 100, lease=30)) == ["6"]


async def test_outbox_keeps_order_and_retries_the_head(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    items = [{"id": f"i{n}", "op": "send", "text": str(n)} for n in range(3)]
    first, second = new_token(), new_token()
    loaded = await begin_waiting(store, bot, "7", first)
    claimed = await store.commit(bot, "7", first, Write(dialog("s"), outbox=items[:2], outbox_lease=5), loaded)
    assert claimed is not None and claimed.item == items[0]
    loaded = await begin_waiting(store, bot, "7", second)
    # The first turn's sender still works on the queue: the second turn's replies wait behind it.
    assert await store.commit(bot, "7", second, Write(dialog("s"), outbox=items[2:], outbox_lease=5), loaded) is None
    mine = lambda claimed: [(c.user, c.taken_over) for c in claimed if c.bot == bot]  # noqa: E731
    assert mine(await store.outbox_claim(now, 30, "poller")) == []  # claimed by the first committer
    head = await store.outbox_head(bot, "7")
    assert head == items[0]
    head["attempts"] = 1
    await store.outbox_later(bot, "7", head, now + 5, "someone-else")  # not the claimer: ignored
    assert mine(await store.outbox_claim(now + 4, 30, "poller")) == []
    await store.outbox_later(bot, "7", head, now + 5, first)  # ends the claim, retried at now + 5
    assert mine(await store.outbox_claim(now + 4.99, 30, "poller")) == []  # never early
    # at most a second late: the Redis queue keeps whole seconds (see stores.redis_outbox.retry_at)
    assert mine(await store.outbox_claim(now + 6, 30, "poller")) == [("7", False)]
    assert (await store.outbox_head(bot, "7"))["attempts"] == 1
    assert await store.outbox_done(bot, "7", "i0", first) is None  # the claim moved on to the poller
    assert (await store.outbox_done(bot, "7", "i0", "poller")).item["id"] == "i1"
    assert (await store.outbox_done(bot, "7", "i0", "poller")).item["id"] == "i1"  # a repeated ack drops no more
    assert [(await store.outbox_head(bot, "7"))["id"]] == ["i1"]
    assert (await store.outbox_done(bot, "7", "i1", "poller")).item == items[2]
    assert await store.outbox_done(bot, "7", "i2", "poller") is None
    assert await store.outbox_head(bot, "7") is None
    assert mine(await store.outbox_claim(now + 10_000, 30, "poller")) == []
    loaded = await begin_waiting(store, bot, "7", third := new_token())
    assert await store.commit(bot, "7", third, Write(dialog("s"), outbox=items[:1]), loaded) is not None


async def test_a_lapsed_outbox_claim_is_taken_over_and_renewals_keep_it(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    token = new_token()
    loaded = await begin_waiting(store, bot, "10", token)
    item = {"id": "r1", "op": "send", "text": "hi"}
    assert await store.commit(bot, "10", token, Write(dialog("s"), outbox=[item], outbox_lease=5), loaded) is not None
    mine = lambda claimed: [(c.user, c.taken_over) for c in claimed if c.bot == bot]  # noqa: E731
    if store.kind not in ("redis", "redis-py"):  # type: ignore[attr-defined]  (Redis leases run on its own clock)
        store.test_clock.now = now + 4  # type: ignore[attr-defined]
    assert await store.outbox_hold([(bot, "10")], token, now + 9) == [(bot, "10")]
    assert await store.outbox_hold([(bot, "10")], "not-the-owner", now + 9) == []
    assert mine(await store.outbox_claim(now + 8, 30, "other")) == []  # renewed until now + 9
    # The committer died: once its claim lapses another sender takes the queue, told it was taken over.
    assert mine(await store.outbox_claim(now + 9, 30, "other")) == [("10", True)]
    assert await store.outbox_done(bot, "10", "r1", token) is None  # the dead claimer can no longer ack
    assert await store.outbox_head(bot, "10") == item
    assert await store.outbox_done(bot, "10", "r1", "other") is None
    assert await store.outbox_head(bot, "10") is None


async def test_a_lock_is_short_renewable_and_taken_over_once_it_lapses(store: DialogStore, bot: str) -> None:
    if store.kind == "postgres":  # type: ignore[attr-defined]
        pytest.skip("PostgreSQL's lock is the turn's own transaction: a crash ends it at once")
    first = new_token()
    loaded = await store.begin(bot, "11", first)
    assert (await store.begin(bot, "11", new_token())).status == BUSY
    if store.kind in ("redis", "redis-py"):  # type: ignore[attr-defined]  # Redis keeps its own clock
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
        await store.commit(bot, "11", first, Write(dialog("stale")), loaded)
    await store.commit(bot, "11", second, Write(dialog("fresh")), later)
    assert (await store.session(bot, "11"))["state"] == "fresh"


async def test_timer_claims_are_renewed_and_orphans_are_dropped(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "12", Write(dialog("wait"), timer_due=now + 1))
    await save(store, bot, "13", Write(dialog("wait"), timer_due=now + 1, ttl=1))
    if store.kind in ("redis", "redis-py"):  # type: ignore[attr-defined]  # Redis keeps its own clock
        await asyncio.sleep(1.2)  # dialog 13 expires by Redis's own clock
    else:
        store.test_clock.now += 1.2  # type: ignore[attr-defined]
    mine = lambda claimed: sorted(u for b, u in claimed if b == bot)  # noqa: E731
    # Dialog 13 expired before its timer: the entry goes instead of coming back forever.
    assert mine(await store.timers_due(now + 2, lease=5)) == ["12"]
    await store.timers_hold([(bot, "12")], now + 20)
    assert mine(await store.timers_due(now + 8, lease=5)) == []  # renewed past the first lease
    assert mine(await store.timers_due(now + 21, lease=5)) == ["12"]
    assert "13" not in mine(await store.timers_due(now + 10_000, lease=5))  # gone for good


async def test_samples_count_queued_users_and_dialogs_per_version(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "14", Write(dialog("s"), outbox=[{"id": "q", "op": "send", "text": "x", "queued": now - 7}]))
    await save(store, bot, "15", Write({**dialog("s"), "version": 2}))
    sample = await store.sample()
    assert sample.outbox_users >= 1 and sample.outbox_oldest is not None and sample.outbox_oldest <= now - 6.9
    assert sample.dialogs[(bot, "1")] == 1 and sample.dialogs[(bot, "2")] == 1


async def test_running_dialogs_are_counted_per_flow_version_and_state(store: DialogStore, bot: str) -> None:
    await save(store, bot, "20", Write(dialog("ask")))
    await save(store, bot, "21", Write(dialog("ask")))
    await save(store, bot, "22", Write({**dialog("done"), "version": 2}))
    await save(store, bot, "23", Write({**dialog("ask"), "flow": "g"}))
    await save(store, bot, "24", Write(dialog("ask")))
    await save(store, bot, "24", Write(None))  # ended: not running
    await save(store, bot + "x", "20", Write(dialog("ask")))  # another bot
    assert await store.dialog_counts(bot) == {("f", 1, "ask"): 2, ("f", 2, "done"): 1, ("g", 1, "ask"): 1}
    assert await store.dialog_counts(bot + "y") == {}


async def test_running_dialogs_are_listed_a_page_at_a_time_and_searched_by_user(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    users = ["100", "101", "1020", "103", "200", "201", "3_0"]
    for n, user in enumerate(users):
        session = {**dialog("ask" if n % 2 else "done"), "updated_at": now - n}
        await save(store, bot, user, Write(session))
    await save(store, bot + "x", "100", Write(dialog("ask")))
    everyone = (await all_pages(store, bot, Search(limit=2)))[0]
    assert sorted(everyone) == sorted(users) and len(everyone) == len(users)
    assert sorted((await all_pages(store, bot, Search(user="10", limit=2)))[0]) == ["100", "101", "1020", "103"]
    assert (await all_pages(store, bot, Search(user="3_", limit=5)))[0] == ["3_0"]
    assert (await all_pages(store, bot, Search(user="3%", limit=5)))[0] == []  # wildcards are literal
    assert (await all_pages(store, bot, Search(user="10", exact=True)))[0] == []
    exact = await store.dialog_page(bot, Search(user="101", exact=True))
    assert [(d.user, d.flow, d.version, d.state, d.updated) for d in exact.dialogs] == [("101", "f", 1, "ask", now - 1)]
    assert exact.next is None
    assert sorted((await all_pages(store, bot, Search(state="ask", limit=1)))[0]) == ["101", "103", "201"]
    assert (await all_pages(store, bot, Search(version=2)))[0] == []
    assert sorted((await all_pages(store, bot, Search(user="2", state="done", version=1)))[0]) == ["200"]
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]
        with pytest.raises(BadSearch):
            await store.dialog_page(bot, Search(cursor="not-a-cursor"))
    with pytest.raises(BadSearch):
        await store.dialog_page(bot, Search(limit=0))
    for cursor in ("1" * (CURSOR_MAX + 1), "10\x00"):  # longer than any handed out, or not text
        with pytest.raises(BadSearch):
            await store.dialog_page(bot, Search(cursor=cursor))


async def test_webhook_actions_are_claimed_retried_and_forgotten(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    action = {"id": uuid.uuid4().hex, "bot": bot, "url": "http://127.0.0.1:9/x", "data": {"a": 1}}
    await save(store, bot, "8", Write(dialog("s"), actions=[action]))
    mine = lambda claimed: [a for a in claimed if a.get("bot") == bot]  # noqa: E731
    assert mine(await store.actions_due(now + 1, lease=30)) == [action]
    assert mine(await store.actions_due(now + 2, lease=30)) == []
    await store.action_later({**action, "attempts": 1}, now + 40)
    assert mine(await store.actions_due(now + 39, lease=30)) == []
    assert mine(await store.actions_due(now + 41, lease=30)) == [{**action, "attempts": 1}]
    await store.action_done(action["id"])
    assert mine(await store.actions_due(now + 10_000, lease=30)) == []


async def _fill(store: DialogStore, bot: str, user: str, n: int) -> None:
    """A user with everything a store keeps: dialog, timer, marks, timeline (moved and not), sends, an action."""
    now = store.test_clock.now  # type: ignore[attr-defined]
    for k in range(n):
        await save(store, bot, user, Write(
            dialog("ask", phone="+79161234567"), dedupe=f"m:{user}:{k}", timeline={"t": now, "e": [["message", None, None, f"hi {k}"]], "s": None},
            timer_due=now + 60, outbox=[{"id": f"{user}-{k}", "op": "send", "chat_id": 1, "text": "x"}],
            actions=[{"id": f"a-{bot}-{user}-{k}", "bot": bot, "user": user, "url": "http://x", "data": {}}]))
        if k == 0:
            await store.move_timeline()  # on Redis: the first record in the database, the later ones in the stream


async def test_erasure_leaves_nothing_of_the_user_and_keeps_the_others(store: DialogStore, bot: str) -> None:
    from tests.integration.privacy_support import leftovers

    await _fill(store, bot, "1", 3)
    await _fill(store, bot, "2", 2)
    assert await leftovers(store, bot, "1"), "the helper must see what a filled user leaves"
    token = new_token()
    loaded = await begin_waiting(store, bot, "1", token)
    erased = await store.erase(bot, "1", token, loaded)
    assert erased["dialog"] == 1 and erased["timeline"] == 3 and erased["outbox"] == 3 and erased["actions"] == 3
    assert erased["timer"] == 1
    assert await leftovers(store, bot, "1") == []
    assert await store.session(bot, "1") is None and await store.timeline(bot, "1") == []
    assert await store.outbox_head(bot, "1") is None
    # The other user keeps everything; the erased one's lock is free again.
    assert (await store.session(bot, "2"))["data"] == {"phone": "+79161234567"}
    assert len(await store.timeline(bot, "2")) == 2 and await store.outbox_head(bot, "2") is not None
    again = await begin_waiting(store, bot, "1", second := new_token())
    assert again.status == OK and again.session is None
    await store.release(bot, "1", second, again)


async def test_erasure_needs_the_users_lock(store: DialogStore, bot: str) -> None:
    if store.kind == "postgres":  # type: ignore[attr-defined]
        pytest.skip("PostgreSQL's lock is the turn's own transaction: its holder cannot lose it to a token")
    await _fill(store, bot, "5", 1)
    token = new_token()
    loaded = await store.begin(bot, "5", token)
    if isinstance(store, RedisStore):  # Redis keeps time by its own clock: another holder took the lock over
        await store.release(bot, "5", token, loaded)
        loaded = await begin_waiting(store, bot, "5", holder := new_token())
    else:
        store.test_clock.now += LOCK_MS / 1000 + 1  # type: ignore[attr-defined]
    with pytest.raises(LockLost):
        await store.erase(bot, "5", token, loaded)
    assert (await store.session(bot, "5"))["state"] == "ask", "a lost lock erases nothing of the dialog"
    if isinstance(store, RedisStore):
        await store.release(bot, "5", holder, loaded)


async def _written_at(store: DialogStore) -> float:
    """The time the store stamps on the next timeline record (Redis: its own clock, in the stream id)."""
    if isinstance(store, RedisStore):
        seconds, micros = await store.client.call("TIME")
        return int(seconds) + int(micros) / 1e6
    return store.test_clock.now  # type: ignore[attr-defined]


async def _later(store: DialogStore, after: float) -> None:
    """Let the store's clock pass `after` by a few milliseconds."""
    store.test_clock.now = max(store.test_clock.now, after) + 10  # type: ignore[attr-defined]
    while isinstance(store, RedisStore) and await _written_at(store) < after + 0.003:
        await asyncio.sleep(0.002)


async def test_retention_deletes_each_bots_old_records_only(store: DialogStore, bot: str) -> None:
    from tests.integration.privacy_support import leftovers

    other = bot + "o"
    record = {"t": store.test_clock.now, "e": [["message", None, None, "old"]], "s": None}  # type: ignore[attr-defined]
    await save(store, bot, "1", Write(None, timeline=record))
    await save(store, other, "1", Write(None, timeline=record))
    await store.move_timeline()
    await save(store, bot, "2", Write(None, timeline=record))  # on Redis: still in the stream
    cut = await _written_at(store) + 0.001
    await _later(store, cut)
    fresh = {"t": store.test_clock.now, "e": [["message", None, None, "new"]], "s": None}  # type: ignore[attr-defined]
    await save(store, bot, "1", Write(None, timeline=fresh))
    # The bot keeps records from `cut` on; the other bot is listed with a cutoff that keeps everything.
    assert await store.forget_timelines({bot: cut, other: 0.0}, 0.0) == 2
    assert [r["e"][0][3] for r in await store.timeline(bot, "1")] == ["new"]
    assert await store.timeline(bot, "2") == []
    assert [r["e"][0][3] for r in await store.timeline(other, "1")] == ["old"]
    assert await store.forget_timelines({bot: cut, other: 0.0}, 0.0) == 0, "a second pass finds nothing"
    # A bot not listed falls under the default cutoff (on the shared PostgreSQL, earlier tests' bots too).
    assert await store.forget_timelines({bot: 0.0}, await _written_at(store) + 60) >= 1
    assert await store.timeline(other, "1") == [] and await leftovers(store, other, "1") == []
    assert len(await store.timeline(bot, "1")) == 1


async def test_redis_erasure_waits_for_a_timeline_move_in_progress(store: DialogStore, bot: str) -> None:
    """A move holds records it read; erasing meanwhile would let it write them back to the database."""
    from tests.integration.privacy_support import leftovers

    if not isinstance(store, RedisStore):
        pytest.skip("only Redis stages timelines on their way to the database")
    await _fill(store, bot, "9", 2)
    await store.client.call("SET", store.keys.mover, "a-move", "PX", 5000)  # a replica is moving now
    token = new_token()
    loaded = await begin_waiting(store, bot, "9", token)
    erasing = asyncio.create_task(store.erase(bot, "9", token, loaded))
    done, _ = await asyncio.wait({erasing}, timeout=0.3)
    assert not done, "erasure must wait until the move is over"
    await store.client.call("DEL", store.keys.mover)
    assert (await asyncio.wait_for(erasing, 5))["timeline"] == 2
    assert await leftovers(store, bot, "9") == []
    assert await store.client.call("GET", store.keys.mover) is None, "erasure gives the lease back"


async def test_queued_sends_of_an_ended_dialog_still_list_their_user(store: DialogStore, bot: str) -> None:
    items = [{"id": "bye", "op": "send", "text": "Спасибо!"}]
    await save(store, bot, "3", Write(dialog("ask")))
    loaded = await begin_waiting(store, bot, "4", token := new_token())
    await store.commit(bot, "4", token, Write(None, outbox=items, outbox_lease=5), loaded)  # the final reply
    assert [u async for u in store.users(bot)] == ["3"]
    assert [u async for u in store.outbox_users(bot)] == ["4"]
    assert await store.outbox_done(bot, "4", "bye", token) is None
    assert [u async for u in store.outbox_users(bot)] == []


async def test_the_bot_page_counts_replies_waiting_after_their_dialog_ended(store: DialogStore, bot: str) -> None:
    await save(store, bot, "1", Write(dict(dialog("ask"), version=2)))
    loaded = await begin_waiting(store, bot, "2", token := new_token())
    await store.commit(bot, "2", token, Write(None, outbox=[{"id": "bye", "op": "send", "text": "Пока"}]), loaded)
    counts = await bot_counts(store, bot)
    assert (dict(counts.dialogs), counts.waiting, counts.complete) == ({"2": 1}, 1, True)
    assert (await bot_counts(store, bot, cap=0)).complete is False
