"""Production store: one Lua call to lock and load, one to save (replies included) and unlock."""
from __future__ import annotations

import asyncio
import hashlib
import time
from contextlib import contextmanager
from typing import Any, AsyncIterator, Callable, Iterator, NamedTuple

import msgspec
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.runtime.funnel_counts import HOUR, KEEP_SECONDS, ledger_info
from server.runtime.keys import Keys, member, split_member
from server.runtime.ratelimit import interval_ms
from server.runtime.stores import dialog_codec, timeline_rows
from server.runtime.timeline import as_record, expand, snapshot
from server.runtime.stores.redis_funnel import RedisFunnel
from server.runtime.stores.redis_listing import RedisListing
from server.runtime.stores.redis_outbox import RedisOutbox, _id_first, lease_end, slot_at
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, MOVE_BATCH, OK, TIMELINE_CAP, Changed, DialogStore, Loaded, LockLost,
    Next, Sample, StoreUnavailable, Write, new_token,
)
from server.runtime.stores.redis_scripts import (
    BEGIN, COMMIT, ERASE, FOLD_EXPIRY, OUTBOX_SAMPLE, RELEASE, RENEW, WAKE,
)
from server.runtime.stores.resp import RedisError, RespClient, Script
from server.runtime.stores.script_args import pack as _pack, text as _text, time as _time
from server.runtime.stores.written import Written

_encode = msgspec.json.encode
_decode = msgspec.json.decode
_dialog = dialog_codec.decode


# Timeline records pass through one stream on their way to the database, so an idle dialog keeps no
# timeline in Redis. Should the database stay away, the stream keeps the newest STREAM_MAX records.
STREAM_MAX = 1_000_000
STREAM_READ = 10_000  # records not yet moved that a timeline read looks through
# Moved records are capped per user (TIMELINE_CAP) every CAP_EVERY seconds: counting a user's rows costs
# as much as inserting them, and an active user gets records in many batches. Reads take the newest
# TIMELINE_CAP, so a user briefly past the cap changes nothing.
CAP_EVERY = 10.0
SWEEP_BATCH = 500  # due timer entries a sweep looks at per script call (each call blocks Redis briefly)
WAKE_ROUNDS = 10  # script calls one timer pass makes at most when the entries it meets are of ended dialogs
# A dialog's expiry is looked at this long after its key's TTL, so the key is surely gone by then.
EXPIRY_MARGIN = 0.25

# Duplicate marks: 12-byte digests in one set per bot per time bucket (a few dozen bytes a mark, against
# ~120 for a key of its own); a mark counts while its bucket is one of the last MARK_BUCKETS, so it is
# recognised for at least DEDUPE_TTL (and up to half as long again).
MARK_BUCKETS = 3
MARK_BUCKET = DEDUPE_TTL // (MARK_BUCKETS - 1)
# COMMIT's constant arguments as the text the script compares and passes on.
_MARK_TTL, _STREAM_MAX = str(MARK_BUCKET * (MARK_BUCKETS + 1)), str(STREAM_MAX)
_LOCK_MS, _KEEP_SECONDS = str(LOCK_MS), str(KEEP_SECONDS)


def mark(user: str, dedupe: str) -> bytes:
    """A delivery's duplicate mark within its bot: who it came from and its redelivery key, hashed."""
    return hashlib.blake2b(f"{user}\x00{dedupe}".encode(), digest_size=12).digest()


class _BotKeys(NamedTuple):
    """Key names a bot's turns share within one mark bucket."""

    marks: tuple[str, ...]  # the bucket's duplicate-mark set, then the older ones still counted
    shared: tuple[str, ...]  # COMMIT's KEYS[7..13]
    counters: str  # the bot's funnel counter hash prefix


def _loaded(reply: list[Any]) -> Loaded:
    """BEGIN's answer (or an unlocked COMMIT's, after its leading 3)."""
    status = reply[0]
    if status == OK:
        raw = reply[1]
        return Loaded(OK, _dialog(raw) if raw is not None else None)
    if status == BUSY:
        return Loaded(BUSY, retry_ms=max(int(reply[1]), 1))
    return Loaded(DUPLICATE)


def _stream_record(fields: list[bytes]) -> bytes:
    """A timeline stream entry's record as JSON: stored whole, or as a brief beside the saved dialog."""
    raw = fields[3]
    if raw[:1] != b"[":
        return raw
    saved = fields[5] if len(fields) > 5 else b""
    return _encode(expand(_decode(raw), snapshot(_dialog(saved)) if saved else None))


def _refused(exc: RedisError) -> StoreUnavailable:
    """An error reply (LOADING, READONLY, OOM...) as the store's own failure, which callers answer 503."""
    return StoreUnavailable(f"redis refused the call: {exc}")


@contextmanager
def _database_answers() -> Iterator[None]:
    """The timeline database's failures as the store's own: the caller answers 503, not 500."""
    try:
        yield
    except (DBAPIError, OSError, TimeoutError) as exc:
        raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc


class RedisStore(RedisListing, RedisFunnel, RedisOutbox, DialogStore):
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
        self.written = Written()
        # (bot, mark bucket) -> the key names every turn of that bot passes then (built once, not per turn)
        self._bot_keys: dict[tuple[str, int], _BotKeys] = {}
        self._capped_id: int | None = None  # records above this id were moved since the last cap
        self._capped_at = 0.0

    def _keys_of(self, bot: str, bucket: int) -> _BotKeys:
        found = self._bot_keys.get((bot, bucket))
        if found is None:
            if len(self._bot_keys) > 10_000:  # old buckets and bots gone: start over
                self._bot_keys.clear()
            k = self.keys
            found = self._bot_keys[(bot, bucket)] = _BotKeys(
                tuple(k.marks(bot, bucket - n) for n in range(MARK_BUCKETS)),
                (k.outq, k.actq, k.acts, k.outc, k.rate + bot, k.expiry_info, k.counter_index),
                k.counters + bot + "|")
        return found

    async def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self.client.run(script, keys, args)
        except RedisError as exc:  # LOADING, READONLY, OOM...: the store's own failure, as every other
            raise _refused(exc) from exc

    async def _call(self, *args: Any) -> Any:
        try:
            return await self.client.call(*args)
        except RedisError as exc:
            raise _refused(exc) from exc

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        base = self.keys.user(bot, user)
        if optimistic:
            raw = self.written.raw.get(base)
            if raw is not None:  # the commit checks lock, mark and dialog (`handle`) in its one script
                session = (self.written.decoded.get(base) or _dialog(raw)) if raw else None
                return Loaded(OK, session, handle=raw, locked=False)
        sets = self._keys_of(bot, int(self.clock() // MARK_BUCKET)).marks
        reply = await self._run(BEGIN, [base + "l", base + "d", *sets],
                                [token, LOCK_MS, mark(user, dedupe) if dedupe is not None else ""])
        return _loaded(reply)

    async def renew(self, bot: str, user: str, token: str) -> bool:
        return bool(await self._run(RENEW, [self.keys.user(bot, user) + "l"], [token, LOCK_MS]))

    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> Next | None:
        base, k, now, counts = self.keys.user(bot, user), self.keys, self.clock(), write.counts
        dialog = dialog_codec.encode(write.session) if write.session is not None else b""
        bucket = int(now // MARK_BUCKET)
        wake = write.timer_due
        if counts is not None and write.session is not None:  # its expiry is counted when the timers find it gone
            expiry = now + write.ttl + EXPIRY_MARGIN
            wake = expiry if wake is None else min(wake, expiry)
        # A[2] and A[17] (the dialog and the dialog as read) travel as ARGV[2] and ARGV[3]: binary.
        args: list[Any] = [
            token, "", int(write.ttl),
            _text(mark(user, write.dedupe)) if write.dedupe is not None else "", _MARK_TTL,
            member(bot, user),
            _time(wake) if wake is not None else "",
            _text(_encode(write.timeline)) if write.timeline is not None else "", _STREAM_MAX,
            len(counts.pairs) if counts is not None else "",
            _text(lease_end(now + write.outbox_lease)), _time(now), len(write.outbox), "1" if write.had_timer else "",
            self.interval, "" if loaded.locked else "1", "", _LOCK_MS,
        ]
        args += [_text(_encode(_id_first(item))) for item in write.outbox]
        names = self._keys_of(bot, bucket)
        if counts is not None:
            after, stored = write.session, loaded.session
            if after is None:
                info = ""
            elif (not counts.prior_gone and stored is not None and stored.get("state") == after.get("state")
                  and stored.get("version") == after.get("version") and stored.get("flow") == after.get("flow")):
                info = "="  # same flow version and state as stored: nothing to note
            else:
                info = ledger_info(after)
            args += ["1" if counts.prior_gone else "", info, str(int(now // HOUR)), names.counters, _KEEP_SECONDS]
            for pair in counts.pairs:
                args += pair
        for action in write.actions:
            args.append(action["id"])
            args.append(_text(_encode(action)))
        keys = [base + "l", base + "d", k.timeline, names.marks[0], k.timers, base + "o", *names.shared]
        if not loaded.locked and write.dedupe is not None:
            keys += names.marks[1:]
        try:
            result = await self.client.run(  # `_run` written out: one coroutine fewer a turn
                COMMIT, keys, [_pack(args), dialog, b"" if loaded.locked else loaded.handle])
        except (StoreUnavailable, RedisError) as exc:
            self.written.forget(base)  # it may or may not have been saved
            if isinstance(exc, RedisError):
                raise _refused(exc) from exc
            raise
        if not result:
            self.written.forget(base)
            raise LockLost(f"{bot}/{user}")
        if result == 1:
            self.written.remember(base, dialog, write.session)
            return None
        if result[0] == 3:
            self.written.forget(base)
            raise Changed(_loaded(result[1:]))
        self.written.remember(base, dialog, write.session)
        first = slot_at(result[1])
        if len(write.outbox) == 1:
            return Next(write.outbox[0], first)
        more = tuple(Next(item, None if first is None else first + n * self.interval_s)
                     for n, item in enumerate(write.outbox[1:], 1))
        return Next(write.outbox[0], first, more)

    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        if loaded.locked:
            await self._run(RELEASE, [self.keys.user(bot, user) + "l"], [token])

    async def _db(self, work: Callable[[Any], Any]) -> Any:
        """Run `work(conn)` in a transaction of the timeline database (none: 0)."""
        if self.timeline_db is None:
            return 0
        with _database_answers():
            async with self.timeline_db.begin() as conn:
                return await work(conn)

    async def _stream(self, end: str = "+") -> AsyncIterator[tuple[bytes, list[bytes]]]:
        """Every timeline stream entry up to `end`, oldest first, read in chunks."""
        start = "-"
        while True:
            found = await self._call("XRANGE", self.keys.timeline, start, end, "COUNT", STREAM_READ)
            for entry in found:
                yield entry
            if len(found) < STREAM_READ:
                return
            start = "(" + found[-1][0].decode()

    async def _take_mover(self, owner: str) -> None:
        """Hold the timeline mover's lease, so no move puts back records being deleted (a lapsed one frees it)."""
        deadline = time.monotonic() + 2 * LOCK_MS / 1000
        while not await self._call("SET", self.keys.mover, owner, "NX", "PX", LOCK_MS):
            if time.monotonic() > deadline:
                raise StoreUnavailable("the timeline mover's lease stayed taken")
            await asyncio.sleep(0.02)

    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        """Timeline (stream and database) under the mover's lease, then the user's keys in one script; the
        duplicate marks are digests of user and delivery, not findable by user, and lapse within 37.5 h."""
        base, k = self.keys.user(bot, user), self.keys
        self.written.forget(base)
        if await self._call("GET", base + "l") != token.encode():  # checked again, atomically, by ERASE
            raise LockLost(f"{bot}/{user}")
        wanted, mover = member(bot, user).encode(), new_token()
        await self._take_mover(mover)
        try:
            ids = [sid async for sid, fields in self._stream() if fields[1] == wanted]
            for start in range(0, len(ids), 1000):
                await self._call("XDEL", self.keys.timeline, *ids[start:start + 1000])
            moved = await self._db(lambda conn: timeline_rows.erase(conn, bot, user))
        finally:
            await self._run(RELEASE, [self.keys.mover], [mover])
        actions = await self._user_actions(bot, user)
        found = await self._run(ERASE, [base + "l", base + "d", k.timers, base + "o", k.outq, k.outc,
                                              k.expiry_info],
                                [token, member(bot, user)])
        if not found:
            raise LockLost(f"{bot}/{user}")
        if actions:
            await self._call("HDEL", k.acts, *actions)
            await self._call("ZREM", k.actq, *actions)
        return {"dialog": int(found[0]), "timeline": len(ids) + moved, "outbox": int(found[2]),
                "timer": int(found[1]), "marks": 0, "actions": len(actions)}

    async def _user_actions(self, bot: str, user: str) -> list[bytes]:
        """Ids of the user's webhook actions still waiting for delivery."""
        found, cursor = [], b"0"
        while True:
            cursor, pairs = await self._call("HSCAN", self.keys.acts, cursor, "COUNT", 500)
            for i in range(0, len(pairs), 2):
                item = _decode(pairs[i + 1])
                if (item.get("bot"), item.get("user")) == (bot, user):
                    found.append(pairs[i])
            if cursor in (b"0", 0):
                return found

    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        """The stream trimmed by time (XTRIM MINID at the oldest cutoff, then each bot's older entries
        deleted), then the database rows."""
        ms = {bot: int(cut * 1000) for bot, cut in cutoffs.items()}
        fallback = int(default * 1000)
        oldest, youngest = min([fallback, *ms.values()]), max([fallback, *ms.values()])
        gone = int(await self._call("XTRIM", self.keys.timeline, "MINID", oldest))
        late = []
        async for sid, fields in self._stream(str(youngest - 1)):
            bot = split_member(fields[1].decode())[0]
            if int(sid.partition(b"-")[0]) < ms.get(bot, fallback):
                late.append(sid)
        for start in range(0, len(late), 1000):
            gone += int(await self._call("XDEL", self.keys.timeline, *late[start:start + 1000]))
        return gone + await self._db(lambda conn: timeline_rows.forget(conn, cutoffs, default))

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
                # A brief here was moved by a replica of an earlier release (during an upgrade), which
                # knew no briefs: it is read without its snapshot.
                records.append(as_record(_decode(record), None))
        wanted = member(bot, user).encode()
        for stream_id, fields in await self._call("XRANGE", self.keys.timeline, "-", "+", "COUNT", STREAM_READ):
            if fields[1] == wanted and stream_id.decode() not in moved:
                records.append(_decode(_stream_record(fields)))
        return records[-TIMELINE_CAP:]

    async def timeline_users(self, bot: str, limit: int) -> list[str]:
        """Users whose records were moved to the database, then those still in the stream."""
        found: list[str] = []
        if self.timeline_db is not None:
            try:
                async with self.timeline_db.connect() as conn:
                    found = await timeline_rows.users(conn, bot, limit)
            except (DBAPIError, OSError, TimeoutError) as exc:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
        for _, fields in await self._call("XRANGE", self.keys.timeline, "-", "+", "COUNT", STREAM_READ):
            owner, user = split_member(fields[1].decode())
            if owner == bot:
                found.append(user)
        return list(dict.fromkeys(found))[:limit]

    async def move_timeline(self, limit: int = MOVE_BATCH) -> int:
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
                sid = stream_id.decode()
                # A stream id starts with Redis's time in ms: when the record was written, for the 7-day sweep.
                rows.append((bot, user, int(sid[:sid.index("-")]) / 1000, _stream_record(fields).decode(), sid))
            capping = time.monotonic() - self._capped_at >= CAP_EVERY
            try:
                async with self.timeline_db.begin() as conn:
                    if self._capped_id is None:  # the first move of this process: what it moves is capped
                        self._capped_id = await timeline_rows.newest_id(conn)
                    await timeline_rows.insert(conn, rows)
                    if capping:
                        capped_id = await timeline_rows.cap_since(conn, self._capped_id)
                if capping:
                    self._capped_id, self._capped_at = capped_id, time.monotonic()
            except (DBAPIError, OSError, TimeoutError) as exc:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
            # Everything up to the last record read was read: ids only grow, and this replica holds the
            # mover's lease. One exact trim instead of an XDEL naming every id (a framed argument each).
            ms, _, seq = entries[-1][0].decode().partition("-")
            await self._call("XTRIM", self.keys.timeline, "MINID", f"{ms}-{int(seq) + 1}")
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

    async def outbox_users(self, bot: str) -> AsyncIterator[str]:
        async for key in self._dialog_keys(self.keys.outbox_pattern(bot)):
            yield self.keys.parse_dialog(key.decode())[1]

    async def _wake(self, now: float, lease_end: str, offset: int, limit: int) -> tuple[int, list[bytes]]:
        """One WAKE call: (entries looked at, members of those whose dialog is still there)."""
        k = self.keys
        found = await self._run(WAKE, [k.timers, k.expiry_info, k.counter_index],
                                [repr(now), lease_end, offset, limit, k.base, int(now // HOUR), k.counters,
                                 KEEP_SECONDS])
        return int(found[0]), found[1:]

    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        """Due timers claimed; entries of dialogs gone on the way are counted as expired and removed (a
        claimed entry leaves the due range, so every call starts at the front)."""
        claimed: list[bytes] = []
        for _ in range(WAKE_ROUNDS):
            asked = limit - len(claimed)
            looked, live = await self._wake(now, repr(now + lease), 0, asked)
            claimed += live
            if looked < asked or len(claimed) >= limit:
                break
        return [split_member(m.decode()) for m in claimed]

    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        if claims:
            pairs: list[Any] = []
            for bot, user in claims:
                pairs += [repr(until), member(bot, user)]
            await self._call("ZADD", self.keys.timers, "XX", "GT", *pairs)

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
        """Count expired dialogs once (what the timer passes have not met yet); forget moved timeline records
        older than TIMELINE_TTL (Redis expires everything else itself)."""
        while await self._run(FOLD_EXPIRY, [self.keys.legacy_expiry, self.keys.timers], []):
            pass
        offset = 0
        while True:
            looked, live = await self._wake(now, "", offset, SWEEP_BATCH)
            offset += len(live)  # entries still there stay in the due range: step over them
            if looked < SWEEP_BATCH:
                break
        await self._db(lambda conn: timeline_rows.sweep(conn, now))

    async def _awaited(self, awaitable: Any) -> Any:
        """A database call made elsewhere, its failures turned into StoreUnavailable."""
        with _database_answers():
            return await awaitable

    async def ping(self) -> None:
        try:
            await self.client.call("PING")
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc

    async def close(self) -> None:
        await self.client.close()
