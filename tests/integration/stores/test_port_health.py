"""Health (`ports.Health`): gauges and the store's own clock; run on every store kind."""
from __future__ import annotations

import time


from server.runtime.stores import DialogStore, TurnCommit
from tests.integration.stores.suite import dialog, save


async def test_samples_count_queued_users_and_dialogs_per_version(store: DialogStore, bot: str) -> None:
    now = store.test_clock.now  # type: ignore[attr-defined]
    await save(store, bot, "14", TurnCommit(dialog("s"), outbox=[{"id": "q", "op": "send", "text": "x", "queued": now - 7}]))
    await save(store, bot, "15", TurnCommit({**dialog("s"), "version": 2}))
    sample = await store.sample()
    assert sample.outbox_users >= 1 and sample.outbox_oldest is not None and sample.outbox_oldest <= now - 6.9
    assert sample.dialogs[(bot, "1")] == 1 and sample.dialogs[(bot, "2")] == 1


async def test_the_store_tells_its_own_time(store: DialogStore) -> None:
    """Every replica's times are measured against it (`store_clock`): on this host it agrees with ours."""
    assert abs(await store.server_time() - time.time()) < 1.0
