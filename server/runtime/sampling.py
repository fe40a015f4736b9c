"""Gauges read at scrape time: outbox depth and running dialogs per bot and version.

This samples through the DialogStore interface (users, session, outbox_head), capped per pass and
reused for SAMPLE_EVERY seconds, so a scrape never walks a large deployment. A store that can count
directly (a sorted-set size, one GROUP BY) should replace `sample` with its own, same signature.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from server.metrics import DIALOGS, OUTBOX_DEPTH, OUTBOX_OLDEST_SECONDS

SAMPLE_EVERY = 15.0  # seconds a sample is reused
SAMPLE_CAP = 2_000  # dialogs read per pass at most


class Sampler:
    """Refreshes the sampled gauges at most every SAMPLE_EVERY seconds."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self.clock = clock
        self.taken_at: float | None = None
        self.labels: set[tuple[str, str]] = set()

    def due(self) -> bool:
        """Whether the last sample is old enough to take a new one."""
        return self.taken_at is None or self.clock() - self.taken_at >= SAMPLE_EVERY

    async def refresh(self, runtime: Any, bots: list[str]) -> None:
        """Sample now unless the last sample is recent."""
        if not self.due():
            return
        self.taken_at = self.clock()
        await self.sample(runtime.store, bots)

    async def sample(self, store: Any, bots: list[str]) -> None:
        """Read up to SAMPLE_CAP dialogs and set DIALOGS, OUTBOX_DEPTH and OUTBOX_OLDEST_SECONDS."""
        dialogs: Counter[tuple[str, str]] = Counter()
        waiting, oldest, left = 0, 0.0, SAMPLE_CAP
        for bot in bots:
            counts = await bot_counts(store, bot, left)
            left -= counts.read
            dialogs.update({(bot, version): n for version, n in counts.dialogs.items()})
            waiting += counts.waiting
            oldest = max(oldest, counts.oldest)
            if left <= 0:
                break
        for labels in self.labels - set(dialogs):
            DIALOGS.remove(*labels)
        for (bot, version), count in dialogs.items():
            DIALOGS.labels(bot=bot, version=version).set(count)
        self.labels = set(dialogs)
        OUTBOX_DEPTH.set(waiting)
        OUTBOX_OLDEST_SECONDS.set(oldest)


@dataclass(slots=True)
class BotCounts:
    """One bot's running dialogs per version and users with replies waiting, from up to `cap` dialogs."""

    dialogs: Counter[str] = field(default_factory=Counter)
    waiting: int = 0
    oldest: float = 0.0  # age in seconds of the oldest waiting entry that says when it was made
    read: int = 0
    complete: bool = True  # False when the cap stopped the walk


async def bot_counts(store: Any, bot: str, cap: int = SAMPLE_CAP) -> BotCounts:
    """Walk a bot's dialogs through the store interface, reading at most `cap`."""
    counts, wall = BotCounts(), time.time()
    async for user in store.users(bot):
        if counts.read >= cap:
            counts.complete = False
            break
        counts.read += 1
        session = await store.session(bot, user)
        if session is not None:
            counts.dialogs[str(session.get("version") or "")] += 1
        head = await store.outbox_head(bot, user)
        if head is not None:
            counts.waiting += 1
            created = head.get("created")
            if isinstance(created, int | float):
                counts.oldest = max(counts.oldest, wall - created)
    return counts
