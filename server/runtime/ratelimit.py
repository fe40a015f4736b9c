"""Per-bot send rates: a token bucket per process, and one schedule shared by every replica in Redis."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Hashable
from typing import Any

log = logging.getLogger("botflow.runtime.ratelimit")


class _Bucket:
    """One key's tokens, when they were last counted, and the queue of callers waiting for one."""

    __slots__ = ("tokens", "stamp", "queued", "lock", "paused")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp
        self.queued = 0
        self.lock = asyncio.Lock()
        self.paused = 0.0  # monotonic time before which nothing goes (a 429's Retry-After)


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
        if bucket.paused > now:
            return bucket.paused - now
        tokens = bucket.tokens + (now - bucket.stamp) * self.rate
        bucket.tokens = tokens if tokens < self.burst else self.burst
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _bucket(self, key: Hashable) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self.burst, time.monotonic())
        return bucket

    async def acquire(self, key: Hashable) -> float:
        """Return when a call for `key` may go (the seconds waited); over the limit, in arrival order."""
        bucket = self._bucket(key)
        # Nobody waiting: the fast path, no await. Otherwise join the queue so nobody jumps it.
        if not bucket.queued and self._take(bucket) == 0.0:
            return 0.0
        started = time.monotonic()
        bucket.queued += 1
        try:
            async with bucket.lock:
                while (wait := self._take(bucket)) > 0.0:
                    await asyncio.sleep(wait)
        finally:
            bucket.queued -= 1
        return time.monotonic() - started

    async def hold(self, key: Hashable, seconds: float) -> None:
        """Let nothing for `key` go for `seconds` (MAX answered 429 with Retry-After)."""
        bucket = self._bucket(key)
        bucket.paused = max(bucket.paused, time.monotonic() + seconds)


# GCRA over the server's clock: the key holds the bot's theoretical arrival time (ms). Each call reserves
# the next slot and is told how long to wait for it, so replicas share one schedule without polling. The
# store's COMMIT and OUTBOX_DONE scripts call the same function for the send they hand out.
GCRA = """
local function reserve(key, interval, hold)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  if hold > 0 then
    if now + hold > tat then tat = now + hold end
    redis.call('SET', key, string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 1000)
    return 0
  end
  redis.call('SET', key, string.format('%.3f', tat + interval), 'PX', math.ceil(tat - now + interval) + 1000)
  return math.ceil(tat - now)
end
"""
# KEYS: the bot's rate key. ARGV: interval ms (1000 / rate), hold ms (0, or a Retry-After to wait out).
RESERVE = GCRA + "return reserve(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))"


def interval_ms(rate: float) -> str:
    """The spacing of a bot's sends at `rate` per second, as the scripts take it."""
    if rate <= 0:
        raise ValueError("rate must be positive")
    return repr(1000.0 / rate)


class SharedRateLimiter:
    """One rate per bot across every replica (a schedule in Redis); the local bucket while Redis fails.

    A caller waits for its reserved slot outside any lock, and each user's outbox has at most one send in
    flight, so a user with many queued replies takes one slot at a time and cannot starve the others.
    """

    def __init__(self, client: Any, prefix: str, rate: float = 30.0) -> None:
        from server.runtime.stores.resp import Script

        self.client = client
        self.prefix = prefix
        self.interval_ms = interval_ms(rate)
        self.local = RateLimiter(rate)
        self._script = Script(RESERVE)
        self._failing = False

    async def _reserve(self, key: Hashable, hold_ms: int) -> int | None:
        try:
            wait = await self.client.run(self._script, [f"{self.prefix}{key}"], [self.interval_ms, hold_ms])
        except Exception as exc:  # noqa: BLE001 - Redis down: each replica keeps the rate on its own
            if not self._failing:
                log.warning("shared send rate unavailable, keeping it per process: %s", exc,
                            extra={"event": "rate_local", "outcome": "fallback"})
            self._failing = True
            return None
        self._failing = False
        return int(wait)

    async def acquire(self, key: Hashable) -> float:
        """Return when a call for `key` may go; the seconds waited."""
        wait = await self._reserve(key, 0)
        if wait is None:
            return await self.local.acquire(key)
        if wait > 0:
            await asyncio.sleep(wait / 1000)
        return wait / 1000

    async def hold(self, key: Hashable, seconds: float) -> None:
        """Let nothing for `key` go for `seconds`, on every replica."""
        await self.local.hold(key, seconds)
        await self._reserve(key, max(1, int(seconds * 1000)))
