"""Timers (`ports.Timers`): due timers claimed once, renewed, orphans dropped; run on every store kind."""
from __future__ import annotations

import asyncio


from server.runtime.stores import DialogStore, TurnCommit
from tests.integration.stores.suite import dialog, save


async def test_a_due_timer_is_claimed_once_until_its_lease_ends(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "5", TurnCommit(dialog("wait"), timer_due=now + 10))
    await save(store, bot, "6", TurnCommit(dialog("wait"), timer_due=now + 20))
    mine = lambda claimed: sorted(u for b, u in claimed if b == bot)  # noqa: E731
    assert mine(await store.timers_due(now + 5, lease=30)) == []
    first, second = await asyncio.gather(store.timers_due(now + 15, lease=30), store.timers_due(now + 15, lease=30))
    assert sorted(mine(first) + mine(second)) == ["5"]
    assert mine(await store.timers_due(now + 16, lease=30)) == []
    assert mine(await store.timers_due(now + 46, lease=30)) == ["5", "6"]
    await save(store, bot, "5", TurnCommit(None))  # a dropped dialog has no timer
    assert mine(await store.timers_due(now + 100, lease=30)) == ["6"]


async def test_timer_claims_are_renewed_and_orphans_are_dropped(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "12", TurnCommit(dialog("wait"), timer_due=now + 1))
    await save(store, bot, "13", TurnCommit(dialog("wait"), timer_due=now + 1, ttl=1))
    if store.kind.startswith("redis"):  # type: ignore[attr-defined]  # Redis keeps its own clock
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
