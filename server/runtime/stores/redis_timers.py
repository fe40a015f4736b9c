"""The Redis store's timers: a sorted set of dialogs by due time per bucket (one on a single Redis), which also
finds dialogs that expired."""
from __future__ import annotations

from typing import Any

from server.runtime.funnel_counts import HOUR, KEEP_SECONDS
from server.runtime.keys import Bucket, member, split_member
from server.runtime.stores import timeline_rows
from server.runtime.stores.ports import Timers
from server.runtime.stores.redis_conn import RedisConn
from server.runtime.stores.redis_scripts import FOLD_EXPIRY, WAKE

SWEEP_BATCH = 500  # due timer entries a sweep looks at per script call (each call blocks Redis briefly)
WAKE_ROUNDS = 10  # script calls one timer pass makes at most when the entries it meets are of ended dialogs


class RedisTimers(Timers):
    """Due timers claimed by moving their score to the lease end; a gone dialog's entry counts its expiry."""

    name = "redis"

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn
        self._next = 0  # the bucket the next pass starts at, so a busy one does not starve the others

    async def _wake(self, b: Bucket, now: float, lease_end: str, offset: int, limit: int) -> tuple[int, list[bytes]]:
        """One WAKE call on bucket `b`: (entries looked at, members of those whose dialog is still there)."""
        found = await self.conn.run(WAKE, [b.timers, b.expiry_info, b.counter_index],
                                [repr(now), lease_end, offset, limit, b.base, int(now // HOUR), b.counters,
                                 KEEP_SECONDS])
        return int(found[0]), found[1:]

    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        """Due timers claimed, bucket after bucket; entries of dialogs gone on the way are counted as expired
        and removed (a claimed entry leaves the due range, so every call starts at the front)."""
        claimed: list[bytes] = []
        buckets = self.conn.keys.all
        start, self._next = self._next, (self._next + 1) % len(buckets)
        for n in range(len(buckets)):
            b = buckets[(start + n) % len(buckets)]
            for _ in range(WAKE_ROUNDS):
                asked = limit - len(claimed)
                looked, live = await self._wake(b, now, repr(now + lease), 0, asked)
                claimed += live
                if looked < asked or len(claimed) >= limit:
                    break
            if len(claimed) >= limit:
                break
        return [split_member(m.decode()) for m in claimed]

    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        by_bucket: dict[str, list[Any]] = {}
        for bot, user in claims:
            by_bucket.setdefault(self.conn.keys.of(bot).timers, []).extend((repr(until), member(bot, user)))
        for timers, pairs in by_bucket.items():
            await self.conn.call("ZADD", timers, "XX", "GT", *pairs)

    async def sweep(self, now: float) -> None:
        """Count expired dialogs once (what the timer passes have not met yet); forget moved timeline records
        older than TIMELINE_TTL (Redis expires everything else itself)."""
        for b in self.conn.keys.all:
            while await self.conn.run(FOLD_EXPIRY, [b.legacy_expiry, b.timers], []):
                pass
            offset = 0
            while True:
                looked, live = await self._wake(b, now, "", offset, SWEEP_BATCH)
                offset += len(live)  # entries still there stay in the due range: step over them
                if looked < SWEEP_BATCH:
                    break
        await self.conn.db(lambda conn: timeline_rows.sweep(conn, now))
