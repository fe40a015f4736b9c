"""The Redis store's outbox and webhook actions: per-user send queues with claims, and due actions."""
from __future__ import annotations

import math
import time
from typing import Any, AsyncIterator

import msgspec

from server.runtime.keys import Bucket, member, split_member
from server.runtime.stores.base import Ack, Claim, Next, held_until
from server.runtime.stores.ports import Actions, Outbox
from server.runtime.stores.redis_conn import RedisConn
from server.runtime.stores.script_args import pack as _pack, text as _text
from server.runtime.stores.redis_scripts import (
    ACTION_LATER, CLAIM, OUTBOX_ACKS, OUTBOX_CLAIM, OUTBOX_DONE, OUTBOX_HOLD, OUTBOX_LATER,
)

_encode = msgspec.json.encode
_decode = msgspec.json.decode


def _id_first(item: dict[str, Any]) -> dict[str, Any]:
    """The item with "id" as its first key (the scripts match the head by its opening bytes)."""
    return item if next(iter(item)) == "id" else {"id": item["id"], **item}


def slot_at(ms: int) -> float | None:
    """When (time.monotonic()) a rate slot the script reserved `ms` from now comes; None when it reserved none."""
    return None if ms < 0 else time.monotonic() + ms / 1000


def _head_prefix(item_id: str) -> bytes:
    return b'{"id":' + _encode(item_id)


# The outbox queue's scores are whole seconds. The queue is a small sorted set (the users being sent to),
# which Redis keeps as a listpack and reads every score of on each insert: a fractional score is parsed
# with strtod each time (13 µs an insert with 50 users waiting, the costliest command of a turn), a whole
# one is stored as an integer (3 µs). A claim ends at most a second early, a retry comes at most a second late.
def lease_end(at: float) -> bytes:
    """A claim's end as a queue score: never later than `at`, so a lapsed claim is taken over in time."""
    return b"%d" % math.floor(at)


def retry_at(at: float) -> bytes:
    """A retry's time as a queue score: never earlier than `at` (a Retry-After is kept)."""
    return b"%d" % math.ceil(at)


# A poller silence this long (ms, on Redis's clock) means Redis was away from every replica (or restarted):
# no claim is taken over for a lease after it, so their holders renew them and record what they sent.
POLL_GAP_MS = 2_000


class RedisOutbox(Outbox):
    """Each user's sends in a list under the user's keys; who is due or claimed in one shared sorted set."""

    name = "redis"
    batches_acks = True

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn
        self._next = 0  # the bucket the next claim starts at, so a busy one does not starve the others

    async def outbox_users(self, bot: str) -> AsyncIterator[str]:
        keys = self.conn.keys
        async for key in self.conn.scan(keys.outbox_pattern(bot), keys.user(bot, "")):
            yield keys.parse_dialog(key.decode())[1]

    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100, *,
                           take_over: bool = True) -> list[Claim]:
        """Due users claimed, bucket after bucket (each bucket's poll noted for its own gap check)."""
        claims: list[Claim] = []
        buckets = self.conn.keys.all
        start, self._next = self._next, (self._next + 1) % len(buckets)
        for n in range(len(buckets)):
            b = buckets[(start + n) % len(buckets)]
            found = await self.conn.run(OUTBOX_CLAIM, [b.outq, b.outc, b.outp],
                                        [repr(now), lease_end(now + lease), limit - len(claims), owner, POLL_GAP_MS,
                                         int(lease * 1000), "1" if take_over else ""])
            claims += [Claim(*split_member(found[i].decode()), bool(found[i + 1])) for i in range(0, len(found), 2)]
            if len(claims) >= limit:
                break
        return claims

    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        by_bucket: dict[int, list[str]] = {}
        for bot, user in claims:
            by_bucket.setdefault(id(self.conn.keys.of(bot)), []).append(member(bot, user))
        held: list[tuple[str, str]] = []
        for members in by_bucket.values():
            b = self.conn.keys.of(split_member(members[0])[0])
            found = await self.conn.run(OUTBOX_HOLD, [b.outq, b.outc], [lease_end(until), owner, *members])
            held += [split_member(m.decode()) for m in found]
        return held

    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self.conn.call("LINDEX", self.conn.keys.user(bot, user) + "o", 0)
        return _decode(raw) if raw is not None else None

    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str, lease: float = 5.0) -> Next | None:
        asked = time.monotonic()
        b = self.conn.keys.of(bot)
        found = await self.conn.run(OUTBOX_DONE, [self.conn.keys.user(bot, user) + "o", b.outq, b.outc, b.rate + bot],
                                [_head_prefix(item_id), member(bot, user), owner, self.conn.interval,
                                 lease_end(self.conn.clock() + lease)])
        return Next(_decode(found[0]), slot_at(found[1]), held=held_until(asked, lease)) if found else None

    async def outbox_acks(self, acks: list[Ack], lease: float = 5.0) -> list[tuple[str, str, Next]]:
        if not acks:
            return []
        asked = time.monotonic()
        end = _text(lease_end(self.conn.clock() + lease))
        by_bucket: dict[int, list[Any]] = {}
        for ack in acks:
            b = self.conn.keys.of(ack.bot)
            args = by_bucket.get(id(b))
            if args is None:
                args = by_bucket[id(b)] = [b.base, b.rate, self.conn.interval, end]
            args += [ack.bot, ack.user, ack.owner, len(ack.ids), *(_text(_head_prefix(i)) for i in ack.ids)]
        out: list[tuple[str, str, Next]] = []
        for args in by_bucket.values():
            b = self.conn.keys.of(args[4])
            found = await self.conn.run(OUTBOX_ACKS, [b.outq, b.outc], [_pack(args)])
            held = held_until(asked, lease)
            out += [(found[i].decode(), found[i + 1].decode(), Next(_decode(found[i + 2]), slot_at(found[i + 3]), held=held))
                    for i in range(0, len(found), 4)]
        return out

    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        b = self.conn.keys.of(bot)
        await self.conn.run(OUTBOX_LATER, [self.conn.keys.user(bot, user) + "o", b.outq, b.outc],
                        [_head_prefix(item["id"]), _encode(_id_first(item)), retry_at(at), member(bot, user), owner])


class RedisActions(Actions):
    """Webhook actions in one hash per bucket, due times in one sorted set per bucket."""

    name = "redis"

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn
        self._next = 0
        # action id -> its bucket, for the actions this process claimed (`action_done` names only the id)
        self._claimed: dict[str, Bucket] = {}

    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        due: list[dict[str, Any]] = []
        buckets = self.conn.keys.all
        start, self._next = self._next, (self._next + 1) % len(buckets)
        for n in range(len(buckets)):
            b = buckets[(start + n) % len(buckets)]
            rows = await self.conn.run(CLAIM, [b.actq, b.acts], [repr(now), repr(now + lease), limit - len(due)])
            for row in rows:
                if row is not None:
                    due.append(item := _decode(row))
                    if self.conn.keys.buckets:
                        if len(self._claimed) > 100_000:
                            self._claimed.clear()
                        self._claimed[item["id"]] = b
            if len(due) >= limit:
                break
        return due

    async def action_done(self, item_id: str) -> None:
        found = self._claimed.pop(item_id, None)
        for b in [found] if found is not None else self.conn.keys.all:
            await self.conn.call("ZREM", b.actq, item_id)
            await self.conn.call("HDEL", b.acts, item_id)

    async def action_later(self, item: dict[str, Any], at: float) -> None:
        b = self._claimed.pop(item["id"], None) or self.conn.keys.of(str(item.get("bot", "")))
        await self.conn.run(ACTION_LATER, [b.actq, b.acts], [item["id"], _encode(item), repr(at)])

    async def user_actions(self, bot: str, user: str) -> list[bytes]:
        """Ids of the user's webhook actions still waiting for delivery."""
        found, cursor, acts = [], b"0", self.conn.keys.of(bot).acts
        while True:
            cursor, pairs = await self.conn.call("HSCAN", acts, cursor, "COUNT", 500)
            for i in range(0, len(pairs), 2):
                item = _decode(pairs[i + 1])
                if (item.get("bot"), item.get("user")) == (bot, user):
                    found.append(pairs[i])
            if cursor in (b"0", 0):
                return found
