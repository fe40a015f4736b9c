"""Production store: one Lua call to lock and load, one to save (replies included) and unlock."""
from __future__ import annotations

import hashlib
import time
from typing import Any, AsyncIterator, Callable

import msgspec
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.runtime.keys import Keys, member, split_member
from server.runtime.ratelimit import GCRA, interval_ms
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, TIMELINE_CAP, Claim, DialogStore, Loaded, LockLost,
    Ack, Next, Sample, StoreUnavailable, Write,
)
from server.runtime.stores import timeline_rows
from server.runtime.stores.resp import RedisError, RespClient, Script

_encode = msgspec.json.encode
_decode = msgspec.json.decode
_pack = msgspec.msgpack.encode
_unpack = msgspec.msgpack.decode


def _dialog(raw: bytes) -> dict[str, Any]:
    """A stored dialog: MessagePack (a quarter smaller than JSON), or JSON as written before."""
    return _decode(raw) if raw[:1] == b"{" else _unpack(raw)

# KEYS: lock, dialog, then the mark sets of the last MARK_BUCKETS buckets. ARGV: token, lock ms, mark ('' none).
BEGIN = Script("""
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('PTTL', KEYS[1])}
end
if ARGV[3] ~= '' then
  for i = 3, #KEYS do
    if redis.call('SISMEMBER', KEYS[i], ARGV[3]) == 1 then
      redis.call('DEL', KEYS[1])
      return {2}
    end
  end
end
return {0, redis.call('GET', KEYS[2])}
""")

RENEW = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
""")

# KEYS: lock, dialog, timeline stream, this bucket's mark set, timers, outbox, outq, actq, acts, outc,
#       the bot's rate.
# ARGV: token, dialog ('' drops it), ttl, mark ('' none), mark set ttl, member, timer due ('' none),
#       timeline record ('' none), stream max length, (unused), claim end, now, n outbox, had timer,
#       rate interval ms ('' keeps no rate), outbox items..., then action (id, json) pairs.
# Returns 0 when the lock was lost, 1 when saved, {2, ms to the first send's rate slot or -1} when
# saved and the caller now holds the outbox claim.
COMMIT = Script(GCRA + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3]) end
if ARGV[4] ~= '' and redis.call('SADD', KEYS[4], ARGV[4]) == 1 and redis.call('TTL', KEYS[4]) < 0 then
  redis.call('EXPIRE', KEYS[4], ARGV[5])
end
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[5], ARGV[7], ARGV[6])
elseif ARGV[14] == '1' or ARGV[2] == '' then redis.call('ZREM', KEYS[5], ARGV[6]) end
if ARGV[8] ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', 'm', ARGV[6], 'r', ARGV[8])
end
local n = tonumber(ARGV[13])
local result = 1
if n > 0 then
  redis.call('RPUSH', KEYS[6], unpack(ARGV, 16, 15 + n))
  if redis.call('ZADD', KEYS[7], 'NX', ARGV[11], ARGV[6]) == 1 then
    redis.call('HSET', KEYS[10], ARGV[6], ARGV[1])
    result = {2, -1}
    -- one slot per queued send: the first waits for the returned time, the k-th k intervals longer
    if ARGV[15] ~= '' then result[2] = reserve(KEYS[11], tonumber(ARGV[15]) * n, 0) end
  end
end
for i = 16 + n, #ARGV, 2 do
  redis.call('HSET', KEYS[9], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[8], ARGV[12], ARGV[i])
end
redis.call('DEL', KEYS[1])
return result
""")

RELEASE = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""")

# KEYS: timers. ARGV: now, lease end, limit, dialog key prefix. Entries whose dialog is gone are removed.
TIMERS_DUE = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, m in ipairs(due) do
  local bot, user = string.match(m, '^(.*)|(.*)$')
  if redis.call('EXISTS', ARGV[4] .. '{' .. bot .. ':' .. user .. '}:d') == 1 then
    redis.call('ZADD', KEYS[1], ARGV[2], m)
    out[#out + 1] = m
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
""")

# KEYS: outq, outc. ARGV: now, lease end, limit, owner. Returns member, taken-over flag pairs.
OUTBOX_CLAIM = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, m in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], m)
  out[#out + 1] = m
  out[#out + 1] = redis.call('HSET', KEYS[2], m, ARGV[4]) == 0 and 1 or 0
end
return out
""")

# KEYS: outq, outc. ARGV: lease end, owner, members...
OUTBOX_HOLD = Script("""
local held = {}
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[2] then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[i])
    held[#held + 1] = ARGV[i]
  end
end
return held
""")

# Items are encoded with "id" first, so the head is recognised by its opening bytes, without decoding.
# KEYS: outbox, outq, outc, the bot's rate. ARGV: '{"id":"<item id>"', member, owner, rate interval ms
# ('' keeps no rate). Returns nil, or the next head with the ms to its rate slot (-1: none reserved).
OUTBOX_DONE = Script(GCRA + """
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[3] then return false end
local head = redis.call('LINDEX', KEYS[1], 0)
if head and string.sub(head, 1, #ARGV[1]) == ARGV[1] then redis.call('LPOP', KEYS[1]) end
local next = redis.call('LINDEX', KEYS[1], 0)
if not next then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('HDEL', KEYS[3], ARGV[2])
  return false
end
if ARGV[4] == '' then return {next, -1} end
return {next, reserve(KEYS[4], tonumber(ARGV[4]), 0)}
""")

# KEYS: outbox, outq, outc. ARGV: item id, item json, at, member, owner.
OUTBOX_LATER = Script("""
if redis.call('HGET', KEYS[3], ARGV[4]) ~= ARGV[5] then return 0 end
local head = redis.call('LINDEX', KEYS[1], 0)
if head and string.sub(head, 1, #ARGV[1]) == ARGV[1] then redis.call('LSET', KEYS[1], 0, ARGV[2]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('HDEL', KEYS[3], ARGV[4])
return 1
""")

# Many users' sent items dropped at once. KEYS: outq, outc. ARGV: user key prefix, rate key prefix, rate
# interval ms ('' none), then per user: bot, user, owner, n, n head prefixes ('{"id":"<item id>"').
# Returns bot, user, next head, ms to its rate slot (-1: none) for every user whose queue goes on.
OUTBOX_ACKS = Script(GCRA + """
local out = {}
local i = 4
while i <= #ARGV do
  local bot, user, owner, n = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  local m = bot .. '|' .. user
  local list = ARGV[1] .. '{' .. bot .. ':' .. user .. '}:o'
  if redis.call('HGET', KEYS[2], m) == owner then
    for j = i + 4, i + 3 + n do
      local head = redis.call('LINDEX', list, 0)
      if head and string.sub(head, 1, #ARGV[j]) == ARGV[j] then redis.call('LPOP', list) end
    end
    local nxt = redis.call('LINDEX', list, 0)
    if nxt then
      local wait = -1
      if ARGV[3] ~= '' then wait = reserve(ARGV[2] .. bot, tonumber(ARGV[3]), 0) end
      out[#out + 1] = bot
      out[#out + 1] = user
      out[#out + 1] = nxt
      out[#out + 1] = wait
    else
      redis.call('ZREM', KEYS[1], m)
      redis.call('HDEL', KEYS[2], m)
    end
  end
  i = i + 4 + n
end
return out
""")

# Claim due members of a zset by pushing their score to the lease end: one caller gets each.
CLAIM = Script("""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], m) end
if KEYS[2] and #due > 0 then return redis.call('HMGET', KEYS[2], unpack(due)) end
return due
""")

ACTION_LATER = Script("""
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 0
""")

# KEYS: outq, outbox key prefix. Users waiting, and the oldest `queued` among the 50 next due heads.
OUTBOX_SAMPLE = Script("""
local users = redis.call('ZCARD', KEYS[1])
local oldest = ''
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, 49)) do
  local bot, user = string.match(m, '^(.*)|(.*)$')
  local head = redis.call('LINDEX', ARGV[1] .. '{' .. bot .. ':' .. user .. '}:o', 0)
  if head then
    local queued = cjson.decode(head)['queued']
    if queued and (oldest == '' or queued < tonumber(oldest)) then oldest = string.format('%.17g', queued) end
  end
end
return {users, oldest}
""")


# Timeline records pass through one stream on their way to the database, so an idle dialog keeps no
# timeline in Redis. Should the database stay away, the stream keeps the newest STREAM_MAX records.
STREAM_MAX = 1_000_000
STREAM_READ = 10_000  # records not yet moved that a timeline read looks through

# Duplicate marks: 12-byte digests in one set per bot per time bucket (a few dozen bytes a mark, against
# ~120 for a key of its own); a mark counts while its bucket is one of the last MARK_BUCKETS, so it is
# recognised for at least DEDUPE_TTL (and up to half as long again).
MARK_BUCKETS = 3
MARK_BUCKET = DEDUPE_TTL // (MARK_BUCKETS - 1)


def mark(user: str, dedupe: str) -> bytes:
    """A delivery's duplicate mark within its bot: who it came from and its redelivery key, hashed."""
    return hashlib.blake2b(f"{user}\x00{dedupe}".encode(), digest_size=12).digest()


def _id_first(item: dict[str, Any]) -> dict[str, Any]:
    """The item with "id" as its first key (the scripts match the head by its opening bytes)."""
    return item if next(iter(item)) == "id" else {"id": item["id"], **item}


def _slot(ms: int) -> float | None:
    """Seconds to a reserved rate slot; None when the script reserved none."""
    return None if ms < 0 else ms / 1000


def _head_prefix(item_id: str) -> bytes:
    return b'{"id":' + _encode(item_id)


class RedisStore(DialogStore):
    """Dialogs under `<prefix>:v1:{bot:user}:*`; timers, outbox queue and actions in shared sorted sets."""

    name = "redis"
    batches_acks = True

    def __init__(self, url: str, prefix: str = "botflow", clock: Callable[[], float] = time.time,
                 client: RespClient | None = None, send_rate: float | None = None,
                 timeline_db: AsyncEngine | None = None) -> None:
        """`send_rate`: each bot's calls per second; the store then reserves the slot of every send it
        hands out (SharedRateLimiter's schedule, the same keys), so a send costs no round trip for it.

        `timeline_db`: the database timeline records are moved to (`move_timeline`); without it they stay
        in the stream (tests, benchmarks), which keeps at most STREAM_MAX of them.
        """
        self.timeline_db = timeline_db
        self.client = client or RespClient(url)
        self.keys = Keys(prefix)
        self.clock = clock
        self.interval = interval_ms(send_rate) if send_rate is not None else ""
        self.interval_s = 1.0 / send_rate if send_rate is not None else 0.0

    async def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self.client.run(script, keys, args)
        except RedisError as exc:  # LOADING, READONLY, OOM...: the store's own failure, as every other
            raise StoreUnavailable(f"redis refused the call: {exc}") from exc

    async def _call(self, *args: Any) -> Any:
        try:
            return await self.client.call(*args)
        except RedisError as exc:
            raise StoreUnavailable(f"redis refused the call: {exc}") from exc

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None) -> Loaded:
        base = self.keys.user(bot, user)
        now = int(self.clock() // MARK_BUCKET)
        sets = [self.keys.marks(bot, now - n) for n in range(MARK_BUCKETS)]
        reply = await self._run(BEGIN, [base + "l", base + "d", *sets],
                                [token, LOCK_MS, mark(user, dedupe) if dedupe is not None else ""])
        status = reply[0]
        if status == OK:
            raw = reply[1]
            return Loaded(OK, _dialog(raw) if raw is not None else None)
        if status == BUSY:
            return Loaded(BUSY, retry_ms=max(int(reply[1]), 1))
        return Loaded(DUPLICATE)

    async def renew(self, bot: str, user: str, token: str) -> bool:
        return bool(await self._run(RENEW, [self.keys.user(bot, user) + "l"], [token, LOCK_MS]))

    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> bool:
        base, k, now = self.keys.user(bot, user), self.keys, self.clock()
        args: list[Any] = [
            token, _pack(write.session) if write.session is not None else "", int(write.ttl),
            mark(user, write.dedupe) if write.dedupe is not None else "", MARK_BUCKET * (MARK_BUCKETS + 1),
            member(bot, user),
            repr(write.timer_due) if write.timer_due is not None else "",
            _encode(write.timeline) if write.timeline is not None else "", STREAM_MAX, "",
            repr(now + write.outbox_lease), repr(now), len(write.outbox), "1" if write.had_timer else "",
            self.interval,
        ]
        args.extend(_encode(_id_first(item)) for item in write.outbox)
        for action in write.actions:
            args.append(action["id"])
            args.append(_encode(action))
        result = await self._run(
            COMMIT, [base + "l", base + "d", k.timeline, k.marks(bot, int(now // MARK_BUCKET)), k.timers,
                     base + "o", k.outq, k.actq, k.acts, k.outc, k.rate + bot], args)
        if not result:
            raise LockLost(f"{bot}/{user}")
        if result == 1:
            return None
        first = _slot(result[1])
        more = tuple(Next(item, None if first is None else first + k * self.interval_s)
                     for k, item in enumerate(write.outbox[1:], 1))
        return Next(write.outbox[0], first, more)

    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        await self._run(RELEASE, [self.keys.user(bot, user) + "l"], [token])

    async def session(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self._call("GET", self.keys.user(bot, user) + "d")
        return _dialog(raw) if raw is not None else None

    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        """Records moved to the database, then those still in the stream, oldest first."""
        records, moved = [], set()
        if self.timeline_db is not None:
            try:
                async with self.timeline_db.connect() as conn:
                    rows = await timeline_rows.read(conn, bot, user)
            except (DBAPIError, OSError, TimeoutError) as exc:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
            for stream_id, record in rows:
                moved.add(stream_id)
                records.append(_decode(record))
        wanted = member(bot, user).encode()
        for stream_id, fields in await self._call("XRANGE", self.keys.timeline, "-", "+", "COUNT", STREAM_READ):
            if fields[1] == wanted and stream_id.decode() not in moved:
                records.append(_decode(fields[3]))
        return records[-TIMELINE_CAP:]

    async def move_timeline(self, limit: int = 2000) -> int:
        """Move the oldest stream records into the database (one replica at a time); how many moved."""
        if self.timeline_db is None:
            return 0
        if not await self._call("SET", self.keys.mover, "1", "NX", "PX", 5000):
            return 0  # another replica is moving: a record inserted twice would be stored once anyway
        try:
            entries = await self._call("XRANGE", self.keys.timeline, "-", "+", "COUNT", limit)
            if not entries:
                return 0
            rows = []
            for stream_id, fields in entries:
                bot, user = split_member(fields[1].decode())
                record = fields[3].decode()
                rows.append({"bot_id": bot, "user_id": user, "at": _decode(record)["t"], "record": record,
                             "stream_id": stream_id.decode()})
            try:
                async with self.timeline_db.begin() as conn:
                    await timeline_rows.append(conn, rows)
            except (DBAPIError, OSError, TimeoutError) as exc:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
            await self._call("XDEL", self.keys.timeline, *(stream_id for stream_id, _ in entries))
            return len(entries)
        finally:
            await self._call("DEL", self.keys.mover)

    async def _dialog_keys(self, pattern: str) -> AsyncIterator[bytes]:
        cursor = b"0"
        while True:
            cursor, found = await self._call("SCAN", cursor, "MATCH", pattern, "COUNT", 500)
            for key in found:
                yield key
            if cursor in (b"0", 0):
                return

    async def users(self, bot: str) -> AsyncIterator[str]:
        async for key in self._dialog_keys(self.keys.dialog_pattern(bot)):
            yield self.keys.parse_dialog(key.decode())[1]

    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        found = await self._run(TIMERS_DUE, [self.keys.timers], [repr(now), repr(now + lease), limit, self.keys.base])
        return [split_member(m.decode()) for m in found]

    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        if claims:
            pairs: list[Any] = []
            for bot, user in claims:
                pairs += [repr(until), member(bot, user)]
            await self._call("ZADD", self.keys.timers, "XX", "GT", *pairs)

    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100) -> list[Claim]:
        found = await self._run(OUTBOX_CLAIM, [self.keys.outq, self.keys.outc],
                                [repr(now), repr(now + lease), limit, owner])
        return [Claim(*split_member(found[i].decode()), bool(found[i + 1])) for i in range(0, len(found), 2)]

    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        if not claims:
            return []
        held = await self._run(OUTBOX_HOLD, [self.keys.outq, self.keys.outc],
                               [repr(until), owner, *(member(b, u) for b, u in claims)])
        return [split_member(m.decode()) for m in held]

    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self._call("LINDEX", self.keys.user(bot, user) + "o", 0)
        return _decode(raw) if raw is not None else None

    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str) -> Next | None:
        found = await self._run(OUTBOX_DONE, [self.keys.user(bot, user) + "o", self.keys.outq, self.keys.outc,
                                              self.keys.rate + bot],
                                [_head_prefix(item_id), member(bot, user), owner, self.interval])
        return Next(_decode(found[0]), _slot(found[1])) if found else None

    async def outbox_acks(self, acks: list[Ack]) -> list[tuple[str, str, Next]]:
        if not acks:
            return []
        args: list[Any] = [self.keys.base, self.keys.rate, self.interval]
        for ack in acks:
            args += [ack.bot, ack.user, ack.owner, len(ack.ids), *(_head_prefix(i) for i in ack.ids)]
        found = await self._run(OUTBOX_ACKS, [self.keys.outq, self.keys.outc], args)
        return [(found[i].decode(), found[i + 1].decode(), Next(_decode(found[i + 2]), _slot(found[i + 3])))
                for i in range(0, len(found), 4)]

    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        await self._run(OUTBOX_LATER, [self.keys.user(bot, user) + "o", self.keys.outq, self.keys.outc],
                        [_head_prefix(item["id"]), _encode(_id_first(item)), repr(at), member(bot, user), owner])

    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        rows = await self._run(CLAIM, [self.keys.actq, self.keys.acts], [repr(now), repr(now + lease), limit])
        return [_decode(row) for row in rows if row is not None]

    async def action_done(self, item_id: str) -> None:
        await self._call("ZREM", self.keys.actq, item_id)
        await self._call("HDEL", self.keys.acts, item_id)

    async def action_later(self, item: dict[str, Any], at: float) -> None:
        await self._run(ACTION_LATER, [self.keys.actq, self.keys.acts], [item["id"], _encode(item), repr(at)])

    async def sample(self, dialogs: bool = True) -> Sample:
        users, oldest = await self._run(OUTBOX_SAMPLE, [self.keys.outq], [self.keys.base])
        found = Sample(int(users), float(oldest) if oldest else None)
        if dialogs:
            batch: list[bytes] = []
            async for key in self._dialog_keys(self.keys.base + "{*}:d"):
                batch.append(key)
                if len(batch) >= 500:
                    await self._count(batch, found)
                    batch = []
            await self._count(batch, found)
        return found

    async def _count(self, keys: list[bytes], found: Sample) -> None:
        """Add the dialogs under `keys` to the per-(bot, version) counts."""
        if not keys:
            return
        for key, raw in zip(keys, await self._call("MGET", *keys)):
            if raw is not None:
                label = (self.keys.parse_dialog(key.decode())[0], str(_dialog(raw).get("version")))
                found.dialogs[label] = found.dialogs.get(label, 0) + 1

    async def sweep(self, now: float) -> None:
        """Forget moved timeline records older than TIMELINE_TTL (Redis expires everything else itself)."""
        if self.timeline_db is not None:
            try:
                async with self.timeline_db.begin() as conn:
                    await timeline_rows.sweep(conn, now)
            except (DBAPIError, OSError, TimeoutError) as exc:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc

    async def ping(self) -> None:
        try:
            await self.client.call("PING")
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc

    async def close(self) -> None:
        await self.client.close()
