"""Production store: one Lua call to lock and load, one to save and unlock."""
from __future__ import annotations

import time
from typing import Any, AsyncIterator, Callable

import msgspec

from server.runtime.keys import Keys, member, split_member
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, TIMELINE_CAP, TIMELINE_TTL, DialogStore, Loaded, LockLost,
    StoreUnavailable, Write,
)
from server.runtime.stores.resp import RespClient, Script

_encode = msgspec.json.encode
_decode = msgspec.json.decode

# KEYS: lock, dialog, outbox, dedupe mark. ARGV: token, lock ms, check dedupe.
BEGIN = Script("""
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('PTTL', KEYS[1])}
end
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('DEL', KEYS[1])
  return {2}
end
return {0, redis.call('GET', KEYS[2]), redis.call('LLEN', KEYS[3])}
""")

# KEYS: lock, dialog, timeline, dedupe, timers, outbox, outq, actq, acts.
# ARGV: token, dialog ('' drops it), ttl, dedupe ('1'), dedupe ttl, member, timer due ('' none),
#       timeline record ('' none), timeline cap, timeline ttl, outbox at, now, n outbox, had timer,
#       outbox items..., then action (id, json) pairs.
COMMIT = Script("""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3]) end
if ARGV[4] == '1' then redis.call('SET', KEYS[4], '1', 'EX', ARGV[5]) end
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[5], ARGV[7], ARGV[6])
elseif ARGV[14] == '1' then redis.call('ZREM', KEYS[5], ARGV[6]) end
if ARGV[8] ~= '' then
  local size = redis.call('RPUSH', KEYS[3], ARGV[8])
  if size > tonumber(ARGV[9]) then redis.call('LTRIM', KEYS[3], -tonumber(ARGV[9]), -1) end
  -- refreshed on a new timeline and every 16th record: cheap, and an active user's timeline never lapses
  if size % 16 == 1 then redis.call('EXPIRE', KEYS[3], ARGV[10]) end
end
local n = tonumber(ARGV[13])
if n > 0 then
  redis.call('RPUSH', KEYS[6], unpack(ARGV, 15, 14 + n))
  redis.call('ZADD', KEYS[7], 'NX', ARGV[11], ARGV[6])
end
for i = 15 + n, #ARGV, 2 do
  redis.call('HSET', KEYS[9], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[8], ARGV[12], ARGV[i])
end
redis.call('DEL', KEYS[1])
return 1
""")

RELEASE = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""")

# Claim due members of a zset by pushing their score to the lease end: one caller gets each.
CLAIM = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], m) end
if KEYS[2] and #due > 0 then return redis.call('HMGET', KEYS[2], unpack(due)) end
return due
""")

OUTBOX_DONE = Script("""
local head = redis.call('LINDEX', KEYS[1], 0)
if head and cjson.decode(head)['id'] == ARGV[1] then redis.call('LPOP', KEYS[1]) end
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('ZREM', KEYS[2], ARGV[2]) return 0 end
return 1
""")

OUTBOX_LATER = Script("""
local head = redis.call('LINDEX', KEYS[1], 0)
if head and cjson.decode(head)['id'] == ARGV[1] then
  redis.call('LSET', KEYS[1], 0, ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
end
return 0
""")

ACTION_LATER = Script("""
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 0
""")


class RedisStore(DialogStore):
    """Dialogs under `<prefix>:v1:{bot:user}:*`; timers, outbox queue and actions in shared sorted sets."""

    def __init__(self, url: str, prefix: str = "botflow", clock: Callable[[], float] = time.time,
                 client: RespClient | None = None) -> None:
        self.client = client or RespClient(url)
        self.keys = Keys(prefix)
        self.clock = clock

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None) -> Loaded:
        base = self.keys.user(bot, user)
        reply = await self.client.run(
            BEGIN, [base + "l", base + "d", base + "o", base + "u:" + (dedupe or "")],
            [token, LOCK_MS, "1" if dedupe is not None else ""])
        status = reply[0]
        if status == OK:
            raw = reply[1]
            return Loaded(OK, _decode(raw) if raw is not None else None, reply[2])
        if status == BUSY:
            return Loaded(BUSY, retry_ms=max(int(reply[1]), 1))
        return Loaded(DUPLICATE)

    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> None:
        base, k = self.keys.user(bot, user), self.keys
        args: list[Any] = [
            token, _encode(write.session) if write.session is not None else "", int(write.ttl),
            "1" if write.dedupe is not None else "", DEDUPE_TTL, member(bot, user),
            repr(write.timer_due) if write.timer_due is not None else "",
            _encode(write.timeline) if write.timeline is not None else "", TIMELINE_CAP, TIMELINE_TTL,
            repr(write.outbox_at), repr(self.clock()), len(write.outbox), "1" if write.had_timer else "",
        ]
        args.extend(_encode(item) for item in write.outbox)
        for action in write.actions:
            args.append(action["id"])
            args.append(_encode(action))
        ok = await self.client.run(
            COMMIT, [base + "l", base + "d", base + "t", base + "u:" + (write.dedupe or ""), k.timers,
                     base + "o", k.outq, k.actq, k.acts], args)
        if not ok:
            raise LockLost(f"{bot}/{user}")

    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        await self.client.run(RELEASE, [self.keys.user(bot, user) + "l"], [token])

    async def session(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self.client.call("GET", self.keys.user(bot, user) + "d")
        return _decode(raw) if raw is not None else None

    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        rows = await self.client.call("LRANGE", self.keys.user(bot, user) + "t", 0, -1)
        return [_decode(row) for row in rows]

    async def users(self, bot: str) -> AsyncIterator[str]:
        cursor, pattern = b"0", self.keys.dialog_pattern(bot)
        while True:
            cursor, found = await self.client.call("SCAN", cursor, "MATCH", pattern, "COUNT", 500)
            for key in found:
                yield self.keys.parse_dialog(key.decode())[1]
            if cursor in (b"0", 0):
                return

    async def _claim(self, keys: list[str], now: float, lease: float, limit: int) -> list[Any]:
        return await self.client.run(CLAIM, keys, [repr(now), repr(now + lease), limit])

    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        return [split_member(m.decode()) for m in await self._claim([self.keys.timers], now, lease, limit)]

    async def outbox_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        return [split_member(m.decode()) for m in await self._claim([self.keys.outq], now, lease, limit)]

    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self.client.call("LINDEX", self.keys.user(bot, user) + "o", 0)
        return _decode(raw) if raw is not None else None

    async def outbox_done(self, bot: str, user: str, item_id: str) -> bool:
        more = await self.client.run(
            OUTBOX_DONE, [self.keys.user(bot, user) + "o", self.keys.outq], [item_id, member(bot, user)])
        return bool(more)

    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float) -> None:
        await self.client.run(OUTBOX_LATER, [self.keys.user(bot, user) + "o", self.keys.outq],
                              [item["id"], _encode(item), repr(at), member(bot, user)])

    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        rows = await self._claim([self.keys.actq, self.keys.acts], now, lease, limit)
        return [_decode(row) for row in rows if row is not None]

    async def action_done(self, item_id: str) -> None:
        await self.client.call("ZREM", self.keys.actq, item_id)
        await self.client.call("HDEL", self.keys.acts, item_id)

    async def action_later(self, item: dict[str, Any], at: float) -> None:
        await self.client.run(ACTION_LATER, [self.keys.actq, self.keys.acts], [item["id"], _encode(item), repr(at)])

    async def ping(self) -> None:
        try:
            await self.client.call("PING")
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc

    async def close(self) -> None:
        await self.client.close()
