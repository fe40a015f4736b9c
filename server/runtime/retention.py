"""Each bot's retention: timeline records (transcripts) older than its days are deleted, counters kept."""
from __future__ import annotations

import logging
import time
from typing import Any, Callable

from sqlalchemy import select

from server.db.models import BotRow
from server.runtime.stores.ports import Timelines

log = logging.getLogger("botflow.runtime.retention")

# Every replica runs the pass: deleting what is past its cutoff twice deletes nothing more.
RETENTION_EVERY = 60.0
DAY = 86_400
RETENTION_DEFAULT = 30  # days: a month of transcripts to look back on, as most chat tools keep


class Retention:
    """Deletes the timeline records each bot no longer keeps (those of deleted bots after the default)."""

    def __init__(self, store: Timelines, sessionmaker: Any, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.sessionmaker = sessionmaker
        self.clock = clock

    async def cutoffs(self, now: float) -> dict[str, float]:
        """Per bot, the time before which its records go."""
        async with self.sessionmaker() as session:
            rows = (await session.execute(select(BotRow.id, BotRow.retention_days))).all()
        return {bot: now - (days or RETENTION_DEFAULT) * DAY for bot, days in rows}

    async def pass_once(self) -> int:
        """One pass over every bot; how many records went."""
        now = self.clock()
        gone = await self.store.forget_timelines(await self.cutoffs(now), now - RETENTION_DEFAULT * DAY)
        if gone:
            log.info("retention deleted %d timeline records", gone, extra={"event": "retention", "outcome": "deleted"})
        return gone
