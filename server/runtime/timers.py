"""Fires reminders and timeouts: due dialogs are claimed from the store, one replica each."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

from flows.dialog import Update
from server.runtime.catalog import BotInfo
from server.runtime.dispatch import Dispatcher
from server.runtime.loop import repeat

log = logging.getLogger("botflow.runtime.timers")

# A claimed timer returns to every replica after this unless its claimer renews it (it does while firing).
LEASE = 5.0
SWEEP_EVERY = 60.0


class Timers:
    """Poll the store's due timers often enough to fire within the spec's 2 seconds."""

    def __init__(self, dispatcher: Dispatcher, *, clock: Callable[[], float] = time.time,
                 interval: float = 0.25, batch: int = 200) -> None:
        self.dispatcher = dispatcher
        self.clock = clock
        self.interval = interval
        self.batch = batch
        self.firing: set[tuple[str, str]] = set()
        self._last_sweep = 0.0

    async def run(self) -> None:
        """Poll forever; each pass fires what is due (claims a crashed pass took come back after their lease)."""
        await repeat("timers", self.pass_once, self.interval, log)

    async def hold(self) -> None:
        """Renew the claims of timers still firing here, forever."""
        await repeat("timer claims", self.hold_once, LEASE / 4, log)

    async def hold_once(self) -> None:
        if self.firing:
            await self.dispatcher.store.timers_hold(list(self.firing), self.clock() + LEASE)

    async def pass_once(self) -> int:
        """Fire every due timer once; returns how many dialogs were ticked (their sends are not awaited)."""
        store = self.dispatcher.store
        now = self.clock()
        if now - self._last_sweep > SWEEP_EVERY:
            self._last_sweep = now
            await store.sweep(now)
        due = await store.timers_due(now, LEASE, self.batch)
        await asyncio.gather(*(self._fire(bot_id, user) for bot_id, user in due))
        return len(due)

    async def _fire(self, bot_id: str, user: str) -> None:
        """The same path as a message: lock → load → step(tick) → commit; the commit sets the next due time."""
        key = (bot_id, user)
        self.firing.add(key)
        try:
            bot = await self.dispatcher.catalog.bot(bot_id)
            if bot is None:
                bot = BotInfo(bot_id, None, None, None, None)  # deleted bot: the turn drops the dialog
            await self.dispatcher.turn(bot, user, Update.tick(), wait=0)
        except Exception:  # noqa: BLE001 - one dialog's failure must not stop the others
            log.warning("timer failed; retried after the lease", exc_info=True,
                        extra={"event": "timer", "bot": bot_id, "user": user, "outcome": "failed"})
        finally:
            self.firing.discard(key)
