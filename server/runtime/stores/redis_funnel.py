"""The Redis store's funnel counters: hashes per bot, flow version and hour, read by hour, copied to SQL."""
from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from server.runtime import funnel_rows
from server.runtime.funnel_counts import HOUR, KEEP_SECONDS, split_group
from server.runtime.stores.ports import Counters
from server.runtime.stores.redis_conn import RedisConn


class RedisCounters(Counters):
    """Counter hashes in Redis for the hours it keeps; older hours (and copies of recent ones) in the database."""

    name = "redis"

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn

    async def _counter_groups(self, hours: range, bot: str | None = None) -> list[tuple[str, dict[str, int]]]:
        """Counter keys of the hours still in Redis (of one bot, or all) with their fields."""
        found = []
        for b in [self.conn.keys.of(bot)] if bot is not None else self.conn.keys.all:
            keys = await self.conn.call("ZRANGEBYSCORE", b.counter_index, hours.start, hours.stop - 1)
            wanted = b.counters + (f"{bot}|" if bot is not None else "")
            for key in (raw.decode() for raw in keys):
                if key.startswith(wanted):
                    flat = await self.conn.call("HGETALL", key)
                    pairs = flat.items() if isinstance(flat, dict) else zip(flat[::2], flat[1::2])  # redis-py: a dict
                    found.append((key[len(b.counters):], {f.decode(): int(v) for f, v in pairs}))
        return found

    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        """Counters copied to the database, each raised to its value still in Redis (the newer one).

        Hours older than Redis keeps are summed by the database; the recent ones are read hour by hour.
        """
        recent = range(max(hours.start, int(self.conn.clock() // HOUR) - KEEP_SECONDS // HOUR - 1), hours.stop)
        totals: dict[str, int] = {}
        rolled: dict[tuple[int, str], int] = {}
        if self.conn.timeline_db is not None:
            older = range(hours.start, max(hours.start, min(recent.start, hours.stop)))
            totals = await self.conn.awaited(funnel_rows.totals(self.conn.timeline_db, bot, flow, version, older))
            if recent:
                rolled = await self.conn.awaited(funnel_rows.read(self.conn.timeline_db, bot, flow, version, recent))
        for name, fields in await self._counter_groups(recent, bot) if recent else ():
            g_flow, g_version, hour = split_group(name[len(bot) + 1:])
            if (g_flow, g_version) == (flow, str(version)) and hour in recent:
                for field, value in fields.items():
                    rolled[(hour, field)] = max(rolled.get((hour, field), 0), value)
        for (_, field), value in rolled.items():
            totals[field] = totals.get(field, 0) + value
        return totals

    async def roll_up(self) -> int:
        """Copy the counter groups of this hour and the last to the database (one replica at a time; absolute
        values: copying twice is harmless, and a group Redis lost and began again never lowers the copy).

        Counters only grow during their own hour, so a group is copied for good in the hour after it.
        """
        hour, keys, db = int(self.conn.clock() // HOUR), self.conn.keys, self.conn.timeline_db
        for b in keys.all:
            await self.conn.call("ZREMRANGEBYSCORE", b.counter_index, "-inf", f"({hour - KEEP_SECONDS // HOUR}")
        if db is None or not await self.conn.call("SET", keys.roller, "1", "NX", "PX", 10_000):
            return 0
        try:
            return await self._copy(db, await self._counter_groups(range(hour - 1, hour + 2)))
        finally:
            await self.conn.call("DEL", keys.roller)

    async def _copy(self, db: AsyncEngine, groups: list[tuple[str, dict[str, int]]]) -> int:
        rows = []
        for name, fields in groups:
            bot, rest = name.split("|", 1)
            flow, version, hour = split_group(rest)
            rows += [{"bot_id": bot, "flow_id": flow, "version": version, "hour": hour, "field": f, "value": v}
                     for f, v in fields.items()]
        await self.conn.awaited(funnel_rows.raise_to(db, rows))
        return len(groups)
