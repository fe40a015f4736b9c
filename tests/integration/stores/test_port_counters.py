"""The dialog-store suite, run on every store kind: funnel counters kept in the turn's commit, expiry counted once."""
from __future__ import annotations

import asyncio

from sqlalchemy import text

from server.runtime.stores import DialogStore, TurnCommit, new_token
from server.runtime.funnel_counts import Counts, group
from tests.integration.stores.suite import begin_waiting, counted, dialog, expire, hours, save


async def test_counters_are_saved_with_the_turn_and_read_by_hour(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "20", TurnCommit(dialog("ask"), counts=counted(now, "e:ask")))
    await save(store, bot, "21", TurnCommit(dialog("ask"), counts=counted(now, "e:ask")))
    await save(store, bot, "20", TurnCommit(dialog("done"), counts=counted(now, "f:go", "e:done", "d:ask:3")))
    await save(store, bot, "22", TurnCommit(dialog("ask")))  # counting off: nothing counted
    await save(store, bot, "23", TurnCommit(dialog("ask"), counts=Counts([(group("f", 1, now - 7200), "e:ask")])))
    this_hour = range(int(now // 3600), int(now // 3600) + 1)
    assert await store.funnel(bot, "f", "1", this_hour) == {"e:ask": 2, "f:go": 1, "e:done": 1, "d:ask:3": 1}
    assert (await store.funnel(bot, "f", "1", range(int(now // 3600) - 2, int(now // 3600) + 1)))["e:ask"] == 3
    assert await store.funnel(bot, "f", "2", this_hour) == {}
    assert await store.funnel("other" + bot, "f", "1", this_hour) == {}
    await store.roll_up()  # Redis: copied to the database; PostgreSQL: increments folded; a reader sees the same
    await store.roll_up()
    assert await store.funnel(bot, "f", "1", this_hour) == {"e:ask": 2, "f:go": 1, "e:done": 1, "d:ask:3": 1}
    if store.kind == "postgres":  # type: ignore[attr-defined]
        async with store.engine.connect() as conn:  # type: ignore[attr-defined]
            left = await conn.scalar(text("SELECT count(*) FROM funnel_deltas WHERE bot_id = :bot"), {"bot": bot})
        assert left == 0, "a fold leaves no increment behind"


async def test_an_expired_dialog_is_counted_once_by_the_sweep_or_its_next_turn(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    for user in ("30", "31", "32", "33"):
        await save(store, bot, user, TurnCommit(dialog("ask"), ttl=1, counts=counted(now, "e:ask")))
    await save(store, bot, "33", TurnCommit(None, counts=counted(now, "c:ask")))  # cancelled: never expires
    await save(store, bot, "34", TurnCommit(dialog("ask"), ttl=1, counts=counted(now, "e:ask")))
    await save(store, bot, "34", TurnCommit(dialog("ask"), ttl=600, counts=Counts([])))  # active again: lives on
    later = await expire(store)
    # 30: its next turn finds it gone and counts it; two sweeps at once count 31 and 32, each once
    await save(store, bot, "30", TurnCommit(dialog("ask"), ttl=600, counts=Counts([(group("f", 1, later), "e:ask")], True)))
    await asyncio.gather(store.sweep(later), store.sweep(later))
    # 31 comes back after the sweep counted it: not counted again
    await save(store, bot, "31", TurnCommit(dialog("ask"), ttl=600, counts=Counts([(group("f", 1, later), "e:ask")], True)))
    await store.sweep(later)
    found = await store.funnel(bot, "f", "1", hours(later))
    assert found == {"e:ask": 7, "c:ask": 1, "x:ask": 3}
    assert await store.dialog(bot, "34") is not None


async def test_a_timer_pass_and_the_sweep_count_an_expiry_once_between_them(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "70", TurnCommit(dialog("ask"), ttl=1, counts=counted(now, "e:ask")))  # no timer of its own
    await save(store, bot, "71", TurnCommit(dialog("wait"), ttl=1, timer_due=now + 600, counts=counted(now, "e:wait")))
    later = await expire(store)
    assert [u for b, u in await store.timers_due(later, lease=5) if b == bot] == []  # nothing left to fire
    await store.sweep(later)
    await store.sweep(later)
    assert await store.funnel(bot, "f", "1", hours(later)) == {"e:ask": 1, "e:wait": 1, "x:ask": 1, "x:wait": 1}
    assert [u for b, u in await store.timers_due(later + 700, lease=5) if b == bot] == []  # 71's timer went too


async def test_hours_older_than_redis_keeps_are_read_from_the_database(store: DialogStore, bot: str) -> None:
    clock = store.test_clock  # type: ignore[attr-defined]
    now = clock.now
    clock.now = now - 40 * 3600
    await save(store, bot, "40", TurnCommit(dialog("ask"), counts=counted(clock.now, "e:ask", "f:go:2")))
    await store.roll_up()  # Redis: copied while it was that hour
    clock.now = now
    await save(store, bot, "41", TurnCommit(dialog("ask"), counts=counted(now, "e:ask")))
    await store.roll_up()
    period = range(int(now // 3600) - 41, int(now // 3600) + 1)
    assert await store.funnel(bot, "f", "1", period) == {"e:ask": 2, "f:go:2": 1}
    assert await store.funnel(bot, "f", "1", range(period.start, int(now // 3600) - 30)) == {"e:ask": 1, "f:go:2": 1}


async def test_an_erased_dialog_is_never_counted_as_expired(store: DialogStore, bot: str) -> None:
    from tests.integration.privacy_support import leftovers

    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "60", TurnCommit(dialog("ask"), ttl=1, counts=counted(now, "e:ask")))
    await save(store, bot, "61", TurnCommit(dialog("ask"), ttl=1, counts=counted(now, "e:ask")))
    token = new_token()
    await store.erase(bot, "60", token, await begin_waiting(store, bot, "60", token))
    assert await leftovers(store, bot, "60") == [], "the funnel's expiry record goes with the user"
    later = await expire(store)
    await store.sweep(later)
    # Only the dialog left to run out is counted; the erased one's entry into ask stays counted.
    assert await store.funnel(bot, "f", "1", hours(later)) == {"e:ask": 2, "x:ask": 1}
