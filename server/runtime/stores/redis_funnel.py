"""The Redis store's funnel counters: hashes per bot, flow version and hour, read by hour, copied to SQL."""
from __future__ import annotations

from server.runtime import funnel_rows
from server.runtime.funnel_counts import HOUR, KEEP_SECONDS, split_group


class RedisFunnel:
    """Mixed into RedisStore (its keys, clock, `_call`, `_awaited` and timeline database)."""

    async def _counter_groups(self, hours: range, bot: str | None = None) -> list[tuple[str, dict[str, int]]]:
        """Counter keys of the hours still in Redis (of one bot, or all) with their fields."""
        keys = await self._call("ZRANGEBYSCORE", self.keys.counter_index, hours.start, hours.stop - 1)
        wanted = self.keys.counters + (f"{bot}|" if bot is not None else "")
        found = []
        for key in (raw.decode() for raw in keys):
            if key.startswith(wanted):
                flat = await self._call("HGETALL", key)
                pairs = flat.items() if isinstance(flat, dict) else zip(flat[::2], flat[1::2])  # redis-py: a dict
                found.append((key[len(self.keys.counters):], {f.decode(): int(v) for f, v in pairs}))
        return found

    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        """Counters copied to the database, each raised to its value still in Redis (the newer one).

        Hours older than Redis keeps are summed by the database; the recent ones are read hour by hour.
        """
        recent = range(max(hours.start, int(self.clock() // HOUR) - KEEP_SECONDS // HOUR - 1), hours.stop)
        totals: dict[str, int] = {}
        rolled: dict[tuple[int, str], int] = {}
        if self.timeline_db is not None:
            older = range(hours.start, max(hours.start, min(recent.start, hours.stop)))
            totals = await self._awaited(funnel_rows.totals(self.timeline_db, bot, flow, version, older))
            if recent:
                rolled = await self._awaited(funnel_rows.read(self.timeline_db, bot, flow, version, recent))
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
        hour = int(self.clock() // HOUR)
        await self._call("ZREMRANGEBYSCORE", self.keys.counter_index, "-inf", f"({hour - KEEP_SECONDS // HOUR}")
        if self.timeline_db is None or not await self._call("SET", self.keys.roller, "1", "NX", "PX", 10_000):
            return 0
        try:
            return await self._copy(await self._counter_groups(range(hour - 1, hour + 2)))
        finally:
            await self._call("DEL", self.keys.roller)

    async def _copy(self, groups: list[tuple[str, dict[str, int]]]) -> int:
        rows = []
        for name, fields in groups:
            bot, rest = name.split("|", 1)
            flow, version, hour = split_group(rest)
            rows += [{"bot_id": bot, "flow_id": flow, "version": version, "hour": hour, "field": f, "value": v}
                     for f, v in fields.items()]
        await self._awaited(funnel_rows.raise_to(self.timeline_db, rows))
        return len(groups)
