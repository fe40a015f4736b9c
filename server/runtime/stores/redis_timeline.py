"""The Redis store's timelines: a stream per bucket (one on a single Redis) the turns append to, moved on to
the database by one replica at a time."""
from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator

import msgspec
from sqlalchemy.exc import DBAPIError

from server.runtime.keys import Bucket, member, split_member
from server.runtime.stores import dialog_codec, timeline_rows
from server.runtime.stores.base import LOCK_MS, MOVE_BATCH, TIMELINE_CAP, StoreUnavailable, new_token
from server.runtime.stores.ports import Timelines
from server.runtime.stores.redis_conn import RedisConn, database_answers
from server.runtime.stores.redis_scripts import RELEASE
from server.runtime.timeline import as_record, expand, snapshot

_encode = msgspec.json.encode
_decode = msgspec.json.decode

# Timeline records pass through one stream on their way to the database, so an idle dialog keeps no
# timeline in Redis. Should the database stay away, the stream keeps the newest STREAM_MAX records.
STREAM_MAX = 1_000_000
STREAM_READ = 10_000  # stream records one XRANGE of a timeline read takes; reads go on chunk by chunk
# Moved records are capped per user (TIMELINE_CAP) every CAP_EVERY seconds: counting a user's rows costs
# as much as inserting them, and an active user gets records in many batches. Reads take the newest
# TIMELINE_CAP, so a user briefly past the cap changes nothing.
CAP_EVERY = 10.0


def _stream_record(fields: list[bytes]) -> bytes:
    """A timeline stream entry's record as JSON: stored whole, or as a brief beside the saved dialog."""
    raw = fields[3]
    if raw[:1] != b"[":
        return raw
    saved = fields[5] if len(fields) > 5 else b""
    return _encode(expand(_decode(raw), snapshot(dialog_codec.decode(saved)) if saved else None))


class RedisTimelines(Timelines):
    """Records in the stream until moved (`move_timeline`), then in the timeline database's rows."""

    name = "redis"

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn
        self._capped_id: int | None = None  # records above this id were moved since the last cap
        self._capped_at = 0.0
        self._next = 0  # the bucket the next move starts at

    async def _stream(self, b: Bucket, end: str = "+") -> AsyncIterator[tuple[bytes, list[bytes]]]:
        """Every entry of bucket `b`'s timeline stream up to `end`, oldest first, read in chunks."""
        start = "-"
        while True:
            found = await self.conn.call("XRANGE", b.timeline, start, end, "COUNT", STREAM_READ)
            for entry in found:
                yield entry
            if len(found) < STREAM_READ:
                return
            start = "(" + found[-1][0].decode()

    async def _take_mover(self, b: Bucket, owner: str) -> None:
        """Hold the timeline mover's lease, so no move puts back records being deleted (a lapsed one frees it)."""
        deadline = time.monotonic() + 2 * LOCK_MS / 1000
        while not await self.conn.call("SET", b.mover, owner, "NX", "PX", LOCK_MS):
            if time.monotonic() > deadline:
                raise StoreUnavailable("the timeline mover's lease stayed taken")
            await asyncio.sleep(0.02)

    async def erase_user(self, bot: str, user: str) -> int:
        """Delete the user's records, stream and database, under the mover's lease; how many went."""
        wanted, mover, b = member(bot, user).encode(), new_token(), self.conn.keys.of(bot)
        await self._take_mover(b, mover)
        try:
            ids = [sid async for sid, fields in self._stream(b) if fields[1] == wanted]
            for start in range(0, len(ids), 1000):
                await self.conn.call("XDEL", b.timeline, *ids[start:start + 1000])
            moved = await self.conn.db(lambda conn: timeline_rows.erase(conn, bot, user))
        finally:
            await self.conn.run(RELEASE, [b.mover], [mover])
        return len(ids) + moved

    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        """The stream trimmed by time (XTRIM MINID at the oldest cutoff, then each bot's older entries
        deleted), then the database rows."""
        ms = {bot: int(cut * 1000) for bot, cut in cutoffs.items()}
        fallback = int(default * 1000)
        oldest, youngest = min([fallback, *ms.values()]), max([fallback, *ms.values()])
        gone = 0
        for b in self.conn.keys.all:
            gone += int(await self.conn.call("XTRIM", b.timeline, "MINID", oldest))
            late = []
            async for sid, fields in self._stream(b, str(youngest - 1)):
                bot = split_member(fields[1].decode())[0]
                if int(sid.partition(b"-")[0]) < ms.get(bot, fallback):
                    late.append(sid)
            for start in range(0, len(late), 1000):
                gone += int(await self.conn.call("XDEL", b.timeline, *late[start:start + 1000]))
        return gone + await self.conn.db(lambda conn: timeline_rows.forget(conn, cutoffs, default))

    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        """Records moved to the database, then those still in the stream, oldest first."""
        records: list[dict[str, Any]] = []
        moved: set[str | None] = set()
        if self.conn.timeline_db is not None:
            try:
                async with self.conn.timeline_db.connect() as conn:
                    rows = await timeline_rows.read(conn, bot, user)
            except (DBAPIError, OSError, TimeoutError) as exc:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
            for stream_id, record in rows:
                moved.add(stream_id)
                # A brief here was moved by a replica of an earlier release (during an upgrade), which
                # knew no briefs: it is read without its snapshot.
                records.append(as_record(_decode(record), None))
        wanted = member(bot, user).encode()
        b = self.conn.keys.of(bot)
        async for sid, fields in self._stream(b):
            if fields[1] == wanted and b.sid_prefix + sid.decode() not in moved:
                records.append(_decode(_stream_record(fields)))
        return records[-TIMELINE_CAP:]

    async def bot_timelines(self, bot: str) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        """Records moved to the database (one query), then the whole stream read once in chunks."""
        lines: dict[str, list[dict[str, Any]]] = {}
        moved: set[str] = set()
        if self.conn.timeline_db is not None:
            with database_answers():
                async with self.conn.timeline_db.connect() as conn:
                    stored = await timeline_rows.read_bot(conn, bot)
            for user, rows in stored.items():
                moved.update(stream_id for stream_id, _ in rows if stream_id)
                lines[user] = [as_record(_decode(record), None) for _, record in rows]
        b = self.conn.keys.of(bot)
        async for stream_id, fields in self._stream(b):
            owner, user = split_member(fields[1].decode())
            if owner == bot and b.sid_prefix + stream_id.decode() not in moved:
                lines.setdefault(user, []).append(_decode(_stream_record(fields)))
        for user, records in lines.items():
            yield user, records[-TIMELINE_CAP:]

    async def move_timeline(self, limit: int = MOVE_BATCH) -> int:
        """Move the oldest stream records into the database (one replica at a time per bucket), bucket after
        bucket until `limit` moved; how many moved."""
        if self.conn.timeline_db is None:
            return 0
        moved, buckets = 0, self.conn.keys.all
        start, self._next = self._next, (self._next + 1) % len(buckets)
        for n in range(len(buckets)):
            moved += await self._move(buckets[(start + n) % len(buckets)], limit - moved)
            if moved >= limit:
                break
        return moved

    async def _move(self, keys: Bucket, limit: int) -> int:
        """Move the oldest records of one bucket's stream; how many moved."""
        db = self.conn.timeline_db
        assert db is not None
        if not await self.conn.call("SET", keys.mover, "1", "NX", "PX", 5000):
            return 0  # another replica is moving: a record inserted twice would be stored once anyway
        try:
            entries = await self.conn.call("XRANGE", keys.timeline, "-", "+", "COUNT", limit)
            if not entries:
                return 0
            rows = []
            for stream_id, fields in entries:
                bot, user = split_member(fields[1].decode())
                sid = stream_id.decode()
                # A stream id starts with Redis's time in ms: when the record was written, for the 7-day sweep.
                rows.append((bot, user, int(sid[:sid.index("-")]) / 1000, _stream_record(fields).decode(),
                             keys.sid_prefix + sid))
            capping = time.monotonic() - self._capped_at >= CAP_EVERY
            try:
                async with db.begin() as conn:
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
            await self.conn.call("XTRIM", keys.timeline, "MINID", f"{ms}-{int(seq) + 1}")
            return len(entries)
        finally:
            await self.conn.call("DEL", keys.mover)
