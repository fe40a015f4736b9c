"""Per-bot send rates: one schedule shared by every replica in Redis, or a token bucket per process."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Hashable
from typing import Any, Callable

from server.lua_script import Script

log = logging.getLogger("botflow.runtime.ratelimit")

# The share of a bot's allowed rate the schedule hands out. MAX counts calls in a sliding second where it
# receives them; calls spaced exactly 1/rate apart when they leave arrive with jitter (the network, an
# event loop busy for a moment), and the first jitter that shortens a second's span by a millisecond
# made the 31st call of that second a 429. At 80% a second's calls span 1.25 s, absorbing 0.25 s of jitter:
# the fault matrix's 60 users over 3 replicas against MAX's 30/s got 29 of 300 calls refused at 100%, 9 at
# 90%, 1 at 80% (on a 2-core host at load 11-15).
SCHEDULE_SHARE = 0.8


def scheduled(rate: float) -> float:
    """The rate a bot's sends are scheduled at, for an allowed `rate` per second."""
    return rate * SCHEDULE_SHARE


class _Bucket:
    """One key's tokens, when they were last counted, and the queue of callers waiting for one."""

    __slots__ = ("tokens", "stamp", "queued", "lock", "paused")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp
        self.queued = 0
        self.lock = asyncio.Lock()
        self.paused = 0.0  # monotonic time before which nothing goes (a 429's Retry-After)


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


class RateLimiter:
    """At most `rate` calls per second per key (a bot), spaced 1/rate apart.

    With a Redis client (`redis`, keys under `prefix`) the schedule is one GCRA per key shared by every
    replica; the store's scripts reserve their sends' slots on the same one. Each caller waits for its
    reserved slot outside any lock, and each user's outbox has at most one send in flight, so a user with
    many queued replies takes one slot at a time and cannot starve the others.

    Without Redis, or while it fails, each process keeps a token bucket of one token per key: a call under
    the limit takes it without awaiting anything; callers over it queue on the key's lock, which asyncio
    hands over in arrival order (FIFO), and each goes when the token has refilled. Tokens are counted
    against the clock at release, not against a precomputed schedule, so a stalled event loop does not let
    the queue out in a burst afterwards: any one-second window holds at most `rate` calls plus one.
    """

    def __init__(self, rate: float = 30.0, *, redis: Any = None, prefix: str = "",
                 key_of: Callable[[str], str] | None = None) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = float(rate)
        self.interval_ms = interval_ms(rate)
        self._buckets: dict[Hashable, _Bucket] = {}
        self.redis, self.prefix = redis, prefix
        self.key_of = key_of  # the Redis key of a bot's schedule (a cluster's sits in the bot's bucket)
        self._script = Script(RESERVE) if redis is not None else None
        self._failing = False

    async def acquire(self, key: Hashable) -> float:
        """Return when a call for `key` may go (the seconds waited); over the limit, in slot order."""
        if self.redis is not None:
            wait = await self._reserve(key, 0)
            if wait is not None:
                if wait > 0:
                    await asyncio.sleep(wait / 1000)
                return wait / 1000
        bucket = self._bucket(key)
        # Nobody waiting: the fast path, no await. Otherwise join the queue so nobody jumps it.
        if not bucket.queued and self._take(bucket) == 0.0:
            return 0.0
        started = time.monotonic()
        bucket.queued += 1
        try:
            async with bucket.lock:
                while (wait_s := self._take(bucket)) > 0.0:
                    await asyncio.sleep(wait_s)
        finally:
            bucket.queued -= 1
        return time.monotonic() - started

    async def hold(self, key: Hashable, seconds: float) -> None:
        """Let nothing for `key` go for `seconds` (MAX answered 429 with Retry-After), on every replica."""
        bucket = self._bucket(key)
        bucket.paused = max(bucket.paused, time.monotonic() + seconds)
        if self.redis is not None:
            await self._reserve(key, max(1, int(seconds * 1000)))

    async def _reserve(self, key: Hashable, hold_ms: int) -> int | None:
        """Milliseconds until the slot reserved in Redis; None when Redis fails (the bucket keeps the rate)."""
        try:
            name = self.key_of(str(key)) if self.key_of is not None else f"{self.prefix}{key}"
            wait = await self.redis.run(self._script, [name], [self.interval_ms, hold_ms])
        except Exception as exc:  # noqa: BLE001 - Redis down: each replica keeps the rate on its own
            if not self._failing:
                log.warning("shared send rate unavailable, keeping it per process: %s", exc,
                            extra={"event": "rate_local", "outcome": "fallback"})
            self._failing = True
            return None
        self._failing = False
        return int(wait)

    def _take(self, bucket: _Bucket) -> float:
        """Refill, then take the token if it is there: 0.0, else the seconds until it will be."""
        now = time.monotonic()
        if bucket.paused > now:
            return bucket.paused - now
        tokens = bucket.tokens + (now - bucket.stamp) * self.rate
        bucket.tokens = tokens if tokens < 1.0 else 1.0
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _bucket(self, key: Hashable) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(1.0, time.monotonic())
        return bucket
