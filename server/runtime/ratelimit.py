"""Per-key asyncio token bucket: at most `rate` calls per second for each key (one key per bot)."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Hashable


class _Bucket:
    """One key's tokens, when they were last counted, and the queue of callers waiting for one."""

    __slots__ = ("tokens", "stamp", "queued", "lock")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp
        self.queued = 0
        self.lock = asyncio.Lock()


class RateLimiter:
    """A token bucket per key holding at most `burst` tokens, refilled at `rate` tokens per second.

    A call under the limit takes a token without awaiting anything. Callers over it queue on the key's
    lock, which asyncio hands over in arrival order (FIFO), and each takes its token when one has
    refilled. Tokens are counted against the clock at release, not against a precomputed schedule, so a
    stalled event loop does not let the queue out in a burst afterwards. With the default `burst` of 1
    calls are spaced 1/rate apart: any one-second window holds at most `rate` calls plus one.
    """

    def __init__(self, rate: float = 30.0, *, burst: int = 1) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.rate = float(rate)
        self.burst = float(burst)
        self._buckets: dict[Hashable, _Bucket] = {}

    def _take(self, bucket: _Bucket) -> float:
        """Refill, then take a token if one is there: 0.0, else the seconds until one will be."""
        now = time.monotonic()
        tokens = bucket.tokens + (now - bucket.stamp) * self.rate
        bucket.tokens = tokens if tokens < self.burst else self.burst
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    async def acquire(self, key: Hashable) -> None:
        """Return when a call for `key` may go; callers over the limit go in the order they arrived."""
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self.burst, time.monotonic())
        # Nobody waiting: the fast path, no await. Otherwise join the queue so nobody jumps it.
        if not bucket.queued and self._take(bucket) == 0.0:
            return
        bucket.queued += 1
        try:
            async with bucket.lock:
                while (wait := self._take(bucket)) > 0.0:
                    await asyncio.sleep(wait)
        finally:
            bucket.queued -= 1
