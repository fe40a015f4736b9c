"""Per-key asyncio token bucket: at most `rate` calls per second for each key (one key per bot)."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Hashable


class RateLimiter:
    """A token bucket per key, kept as one number per key (its "theoretical arrival time", GCRA).

    Each `acquire` reserves the next free slot at call time, so waiters are served strictly in the order
    they called (FIFO), and a call under the limit costs a dict lookup and two float operations.
    `burst` is the bucket size: how many calls may go at once after a quiet spell. The default of 1
    spaces calls evenly, so any one-second window holds at most `rate` calls (plus the one on its edge).
    """

    def __init__(self, rate: float = 30.0, *, burst: int = 1) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.rate = float(rate)
        self.burst = int(burst)
        self._interval = 1.0 / self.rate
        # How far ahead of now the schedule may run before a caller has to wait.
        self._tolerance = self._interval * (self.burst - 1)
        self._tat: dict[Hashable, float] = {}

    def reserve(self, key: Hashable) -> float:
        """Take the next slot for `key`; return how many seconds the caller must wait for it (0 = now)."""
        now = time.monotonic()
        tat = self._tat.get(key, now)
        if tat < now:
            tat = now
        self._tat[key] = tat + self._interval
        wait = tat - self._tolerance - now
        return wait if wait > 0 else 0.0

    async def acquire(self, key: Hashable) -> None:
        """Wait until a call for `key` may go; callers over the limit go in the order they arrived."""
        wait = self.reserve(key)
        if wait:
            # The slot stays reserved even if the caller is cancelled: a wasted slot keeps the bound safe.
            await asyncio.sleep(wait)
