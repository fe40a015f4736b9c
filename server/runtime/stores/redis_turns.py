"""The Redis store's dialogs and turns: one Lua call to lock and load, one to save (replies included) and unlock."""
from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any, AsyncIterator, NamedTuple

import msgspec

from server.runtime.funnel_counts import HOUR, KEEP_SECONDS, ledger_info
from server.runtime.keys import member
from server.runtime.stores import dialog_codec
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, Changed, Loaded, LockLost, Next, StoreUnavailable, TurnCommit, held_until,
)
from server.runtime.stores.lost import LostWatch
from server.runtime.stores.turn_marks import publish_marks
from server.runtime.stores.ports import DialogTurns
from server.runtime.stores.redis_conn import RedisConn, refused
from server.runtime.stores.redis_outbox import RedisActions, _id_first, lease_end, slot_at
from server.runtime.stores.redis_scripts import BEGIN, COMMIT, ERASE, RELEASE, RENEW
from server.runtime.stores.redis_timeline import STREAM_MAX, RedisTimelines
from server.runtime.stores.resp import RedisError
from server.runtime.stores.commit_args import VERSION, CommitArgs, CountArgs, encode as encode_commit
from server.runtime.stores.script_args import text as _text, time as _time
from server.runtime.stores.written import Written

_encode = msgspec.json.encode
_dialog = dialog_codec.decode

# A dialog's expiry is looked at this long after its key's TTL, so the key is surely gone by then.
EXPIRY_MARGIN = 0.25

# Duplicate marks: 12-byte digests in one set per bot per time bucket (a few dozen bytes a mark, against
# ~120 for a key of its own); a mark counts while its bucket is one of the last MARK_BUCKETS, so it is
# recognised for at least DEDUPE_TTL (and up to half as long again).
MARK_BUCKETS = 3
MARK_BUCKET = DEDUPE_TTL // (MARK_BUCKETS - 1)
# How long a mark set is kept: past the last bucket that still counts it.
_MARK_TTL = MARK_BUCKET * (MARK_BUCKETS + 1)


def mark(user: str, dedupe: str) -> bytes:
    """A delivery's duplicate mark within its bot: who it came from and its redelivery key, hashed."""
    return hashlib.blake2b(f"{user}\x00{dedupe}".encode(), digest_size=12).digest()


class _BotKeys(NamedTuple):
    """Key names a bot's turns share within one mark bucket."""

    marks: tuple[str, ...]  # the bucket's duplicate-mark set, then the older ones still counted
    shared: tuple[str, ...]  # COMMIT's KEYS[7..13]
    counters: str  # the bot's funnel counter hash prefix
    timeline: str  # the stream of the bot's bucket
    timers: str  # the timers of the bot's bucket


def _loaded(reply: list[Any]) -> Loaded:
    """BEGIN's answer (or an unlocked COMMIT's, after its leading 3)."""
    status = reply[0]
    if status == OK:
        raw, turn_mark = reply[1], reply[2] if len(reply) > 2 else None
        return Loaded(OK, _dialog(raw) if raw is not None else None,
                      mark=int(turn_mark) if turn_mark is not None else None)
    if status == BUSY:
        return Loaded(BUSY, retry_ms=max(int(reply[1]), 1))
    return Loaded(DUPLICATE)


class RedisTurns(DialogTurns):
    """Dialogs under `<prefix>:v1:{bot:user}:*`; a turn's whole write (timer, outbox, actions, timeline and
    counters included) is one COMMIT script call. Erasure reaches into the timelines and actions it owns."""

    name = "redis"

    def __init__(self, conn: RedisConn, timelines: RedisTimelines, actions: RedisActions, lost: LostWatch) -> None:
        self.conn = conn
        self.timelines = timelines
        self.actions = actions
        self.written = Written()
        self.lost = lost
        if hasattr(conn.client, "on_move"):  # behind Sentinel: a failover followed may have lost writes
            conn.client.on_move = self._moved
        self._publishing: asyncio.Task[int] | None = None
        # (bot, mark bucket) -> the key names every turn of that bot passes then (built once, not per turn)
        self._bot_keys: dict[tuple[str, int], _BotKeys] = {}

    def _keys_of(self, bot: str, bucket: int) -> _BotKeys:
        found = self._bot_keys.get((bot, bucket))
        if found is None:
            if len(self._bot_keys) > 10_000:  # old buckets and bots gone: start over
                self._bot_keys.clear()
            k, b = self.conn.keys, self.conn.keys.of(bot)
            found = self._bot_keys[(bot, bucket)] = _BotKeys(
                tuple(k.marks(bot, bucket - n) for n in range(MARK_BUCKETS)),
                (b.outq, b.actq, b.acts, b.outc, b.rate + bot, b.expiry_info, b.counter_index),
                b.counters + bot + "|", b.timeline, b.timers)
        return found

    def _moved(self, why: str) -> None:
        """A failover followed: no turn reads its own last write, the turns this process committed go to
        the new master as marks, and turns wait while the other replicas publish theirs (`stores.lost`)."""
        self.written.raw.clear()
        self.written.decoded.clear()
        self.lost.moved(why)
        self._publishing = asyncio.create_task(publish_marks(self.conn, self.lost))

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        if self.lost.sharing_until:  # just after a failover or an empty restart: the replicas share first
            await self.lost.settle()
        base = self.conn.keys.user(bot, user)
        if optimistic:
            raw = self.written.raw.get(base)
            if raw is not None:  # the commit checks lock, mark and dialog (`handle`) in its one script
                dialog = (self.written.decoded.get(base) or _dialog(raw)) if raw else None
                return Loaded(OK, dialog, handle=raw, locked=False)
        sets = self._keys_of(bot, int(self.conn.clock() // MARK_BUCKET)).marks
        reply = await self.conn.run(BEGIN, [base + "l", base + "d", self.conn.keys.turn_mark(base), *sets],
                                [token, LOCK_MS, mark(user, dedupe) if dedupe is not None else ""])
        loaded = _loaded(reply)
        if loaded.status == OK and (loaded.dialog is None or loaded.mark is not None or base in self.lost.turns):
            loaded.lost = await self.lost.loaded(base, loaded.dialog, self.conn.clock(), loaded.mark)
        return loaded

    async def renew(self, bot: str, user: str, token: str) -> bool:
        return bool(await self.conn.run(RENEW, [self.conn.keys.user(bot, user) + "l"], [token, LOCK_MS]))

    async def commit(self, bot: str, user: str, token: str, write: TurnCommit, loaded: Loaded) -> Next | None:
        conn, saved, counts, dedupe = self.conn, write.dialog, write.counts, write.dedupe
        base, now, asked = conn.keys.user(bot, user), conn.clock(), time.monotonic()
        dialog = dialog_codec.encode(saved) if saved is not None else b""
        wake = write.timer_due
        if counts is not None and saved is not None:  # its expiry is counted when the timers find it gone
            expiry = now + write.ttl + EXPIRY_MARGIN
            wake = expiry if wake is None or expiry < wake else wake
        names = self._keys_of(bot, int(now // MARK_BUCKET))
        timeline, locked = write.timeline, loaded.locked
        args = CommitArgs(
            VERSION, token, member(bot, user), _time(now), _text(lease_end(now + write.outbox_lease)),
            _MARK_TTL, STREAM_MAX, LOCK_MS, ttl=int(write.ttl),
            mark=_text(mark(user, dedupe)) if dedupe is not None else None,
            wake=_time(wake) if wake is not None else None, had_timer=write.had_timer,
            timeline=_text(_encode(timeline)) if timeline is not None else None,
            brief=timeline.__class__ is list, rate_ms=conn.rate_ms, unlocked=not locked,
            unmark=loaded.mark is not None,
            outbox=[_text(_encode(_id_first(item))) for item in write.outbox])
        if counts is not None:
            after, stored = saved, loaded.dialog
            if after is None:
                info = None
            elif (not counts.prior_gone and stored is not None and stored.get("state") == after.get("state")
                  and stored.get("version") == after.get("version") and stored.get("flow") == after.get("flow")
                  and stored.get("language") == after.get("language")):
                info = "="  # same flow version and state as stored: nothing to note
            else:
                info = ledger_info(after)
            args.counts = CountArgs(str(int(now // HOUR)), names.counters, KEEP_SECONDS, counts.prior_gone, info,
                                    [name for pair in counts.pairs for name in pair])
        if write.actions:
            args.actions = [part for action in write.actions for part in (action["id"], _text(_encode(action)))]
        keys = [base + "l", base + "d", names.timeline, names.marks[0], names.timers, base + "o", *names.shared,
                conn.keys.turn_mark(base)]
        if not locked and dedupe is not None:
            keys += names.marks[1:]
        try:
            result = await conn.client.run(  # `_run` written out: one coroutine fewer a turn
                COMMIT, keys, [encode_commit(args), dialog, b"" if locked else loaded.handle])
        except (StoreUnavailable, RedisError) as exc:
            self.written.forget(base)  # it may or may not have been saved
            if isinstance(exc, RedisError):
                raise refused(exc) from exc
            raise
        if not result:
            self.written.forget(base)
            raise LockLost(f"{bot}/{user}")
        if result == 1:
            self.lost.remember(base, saved, now + write.ttl)
            self.written.remember(base, dialog, saved)
            return None
        if result[0] == 3:
            self.written.forget(base)
            found = _loaded(result[1:])
            if found.status == OK and (found.mark is not None or base in self.lost.turns):
                found.lost = await self.lost.loaded(base, found.dialog, now, found.mark)
            raise Changed(found)
        self.lost.remember(base, saved, now + write.ttl)
        self.written.remember(base, dialog, saved)
        first, held = slot_at(result[1]), held_until(asked, write.outbox_lease)
        if len(write.outbox) == 1:
            return Next(write.outbox[0], first, held=held)
        more = tuple(Next(item, None if first is None else first + n * self.conn.interval_s)
                     for n, item in enumerate(write.outbox[1:], 1))
        return Next(write.outbox[0], first, more, held)

    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        if loaded.locked:
            await self.conn.run(RELEASE, [self.conn.keys.user(bot, user) + "l"], [token])

    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        """Timeline (stream and database) under the mover's lease, then the user's keys in one script; the
        duplicate marks are digests of user and delivery, not findable by user, and lapse within 37.5 h."""
        base, k = self.conn.keys.user(bot, user), self.conn.keys.of(bot)
        self.written.forget(base)
        self.lost.forget(base)
        if await self.conn.call("GET", base + "l") != token.encode():  # checked again, atomically, by ERASE
            raise LockLost(f"{bot}/{user}")
        timeline = await self.timelines.erase_user(bot, user)
        actions = await self.actions.user_actions(bot, user)
        found = await self.conn.run(ERASE, [base + "l", base + "d", k.timers, base + "o", k.outq, k.outc,
                                              k.expiry_info, self.conn.keys.turn_mark(base)],
                                [token, member(bot, user)])
        if not found:
            raise LockLost(f"{bot}/{user}")
        if actions:
            await self.conn.call("HDEL", k.acts, *actions)
            await self.conn.call("ZREM", k.actq, *actions)
        return {"dialog": int(found[0]), "timeline": timeline, "outbox": int(found[2]),
                "timer": int(found[1]), "marks": 0, "actions": len(actions)}

    async def dialog(self, bot: str, user: str) -> dict[str, Any] | None:
        raw = await self.conn.call("GET", self.conn.keys.user(bot, user) + "d")
        return _dialog(raw) if raw is not None else None

    async def users(self, bot: str) -> AsyncIterator[str]:
        async for key in self.conn.scan(self.conn.keys.dialog_pattern(bot), self.conn.keys.user(bot, "")):
            yield self.conn.keys.parse_dialog(key.decode())[1]
