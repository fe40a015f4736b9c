"""Sampled gauges for /metrics: outbox depth and oldest entry on every scrape, dialogs per version less often."""
from __future__ import annotations

import time

from server import metrics
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.ports import Health

# Counting dialogs per version walks every dialog on Redis: at most once per this many seconds.
DIALOGS_EVERY = 60.0
_last_dialogs: dict[int, float] = {}


async def sample_gauges(store: Health, now: float | None = None) -> None:
    """Set OUTBOX_DEPTH, OUTBOX_OLDEST_SECONDS and (every DIALOGS_EVERY) DIALOGS from the store.

    Meant to be awaited on each /metrics scrape; a store that does not answer leaves the gauges as they were.
    """
    now = time.time() if now is None else now
    count_dialogs = now - _last_dialogs.get(id(store), 0.0) >= DIALOGS_EVERY
    try:
        sample = await store.sample(dialogs=count_dialogs)
    except StoreUnavailable:
        metrics.STORE_ERRORS.labels(store=store.name).inc()
        return
    metrics.OUTBOX_DEPTH.set(sample.outbox_users)
    metrics.OUTBOX_OLDEST_SECONDS.set(max(0.0, now - sample.outbox_oldest) if sample.outbox_oldest else 0.0)
    if count_dialogs:
        _last_dialogs[id(store)] = now
        metrics.DIALOGS.clear()
        for (bot, version), count in sample.dialogs.items():
            metrics.DIALOGS.labels(bot=bot, version=version).set(count)
