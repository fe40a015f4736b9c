"""The Redis store's outbox and webhook actions: per-user send queues with claims, and due actions."""
from __future__ import annotations

import math
import time
from typing import Any

import msgspec

from server.runtime.keys import member, split_member
from server.runtime.stores.base import Ack, Claim, Next
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


class RedisOutbox:
    """Mixed into RedisStore (its keys, send interval, `_run` and `_call`)."""

    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100) -> list[Claim]:
        found = await self._run(OUTBOX_CLAIM, [self.keys.outq, self.keys.outc],
                                [repr(now), lease_end(now + lease), limit, owner])
        return [Claim(*split_member(found[i].decode()), bool(found[i + 1])) for i in range(0, len(found), 2)]

    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        if not claims:
            return []
        held = await self._run(OUTBOX_HOLD, [self.keys.outq, self.keys.outc],
                               [lease_end(until), owner, *(member(b, u) for b, u in claims)])
        return [split_member(m.decode()) for m in held]

    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self._call("LINDEX", self.keys.user(bot, user) + "o", 0)
        return _decode(raw) if raw is not None else None

    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str) -> Next | None:
        found = await self._run(OUTBOX_DONE, [self.keys.user(bot, user) + "o", self.keys.outq, self.keys.outc,
                                              self.keys.rate + bot],
                                [_head_prefix(item_id), member(bot, user), owner, self.interval])
        return Next(_decode(found[0]), slot_at(found[1])) if found else None

    async def outbox_acks(self, acks: list[Ack]) -> list[tuple[str, str, Next]]:
        if not acks:
            return []
        args: list[Any] = [self.keys.base, self.keys.rate, self.interval]
        for ack in acks:
            args += [ack.bot, ack.user, ack.owner, len(ack.ids), *(_text(_head_prefix(i)) for i in ack.ids)]
        found = await self._run(OUTBOX_ACKS, [self.keys.outq, self.keys.outc], [_pack(args)])
        return [(found[i].decode(), found[i + 1].decode(), Next(_decode(found[i + 2]), slot_at(found[i + 3])))
                for i in range(0, len(found), 4)]

    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        await self._run(OUTBOX_LATER, [self.keys.user(bot, user) + "o", self.keys.outq, self.keys.outc],
                        [_head_prefix(item["id"]), _encode(_id_first(item)), retry_at(at), member(bot, user), owner])

    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        rows = await self._run(CLAIM, [self.keys.actq, self.keys.acts], [repr(now), repr(now + lease), limit])
        return [_decode(row) for row in rows if row is not None]

    async def action_done(self, item_id: str) -> None:
        await self._call("ZREM", self.keys.actq, item_id)
        await self._call("HDEL", self.keys.acts, item_id)

    async def action_later(self, item: dict[str, Any], at: float) -> None:
        await self._run(ACTION_LATER, [self.keys.actq, self.keys.acts], [item["id"], _encode(item), repr(at)])
