"""The SQL store on SQLite: one process, an in-process lock per user, turns' writes batched on a writer thread."""
from __future__ import annotations

import asyncio
import sqlite3
import time
from typing import Any, Awaitable, Callable

from sqlalchemy import select, text as sql_text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.runtime import funnel_rows
from server.runtime.stores import sqlite_batch as sb
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, Loaded, LockLost, Next, StoreUnavailable, TurnCommit, held_until,
)
from server.runtime.stores.sql import R, SqlStore
from server.runtime.stores.sql_listing import SqliteListing
from server.runtime.stores.sql_common import Q, claimed, decode, guarded, mark, as_text, where
from server.runtime.stores.sqlite_batch import SqliteBatch
from server.runtime.timeline import as_record


class SqliteStore(SqlStore):
    """Dialogs in the app's SQLite file; the lock is this process's own (SQLite serves one process)."""

    listing_kind = SqliteListing

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        super().__init__(engine, clock)
        # SQLite serves a single process: an owner-token table in memory is the lock.
        self._locks: dict[tuple[str, str], tuple[str, float]] = {}
        # Commits and outbox changes run one at a time, so "the queue is empty, the claim ends" and "a commit
        # adds to the queue" never interleave (PostgreSQL orders them with row locks).
        self._claiming = asyncio.Lock()
        if engine.url.database in (None, "", ":memory:"):
            raise ValueError("the SQL dialog store needs a SQLite file (an in-memory database is one per "
                             "connection, and its writes go through a connection of their own): name a file "
                             "in BOTFLOW_DATABASE_URL")
        # Turns' writes and acks, many to a transaction, on a writer thread of their own; their reads, many
        # to a hop, on a reader thread.
        self._batch = SqliteBatch(engine.url.database or "")
        self._reads = SqliteBatch(engine.url.database or "", writes=False)

    async def close(self) -> None:
        await self._batch.close()
        await self._reads.close()

    async def _load(self, bot: str, user: str, dedupe: str | None, now: float) -> Loaded:
        """SQLite's read of a turn, one statement in the reader's next batch (the lock is this process's own)."""
        key = mark(user, dedupe) if dedupe is not None else None
        seen, raw, expires_at = await self._reads.run(lambda cur: cur.execute(sb.LOAD, (bot, user, key, now)).fetchone())
        if seen is not None:
            return Loaded(DUPLICATE)
        return self._loaded(raw, expires_at or 0.0, now)

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        now = self.clock()
        try:
            held = self._locks.get((bot, user))
            if held is not None and held[1] > now:
                return Loaded(BUSY, retry_ms=max(1, int((held[1] - now) * 1000)))
            self._locks[(bot, user)] = (token, now + LOCK_MS / 1000)
            try:
                loaded = await self._load(bot, user, dedupe, now)
            except BaseException:
                self._locks.pop((bot, user), None)
                raise
            if loaded.status != OK:
                self._locks.pop((bot, user), None)
            return loaded
        except (OperationalError, DBAPIError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def renew(self, bot: str, user: str, token: str) -> bool:
        now = self.clock()
        held = self._locks.get((bot, user))
        if held is None or held[0] != token or held[1] <= now:
            return False
        self._locks[(bot, user)] = (token, now + LOCK_MS / 1000)
        return True

    def _write(self, cur: sqlite3.Cursor, bot: str, user: str, token: str, write: TurnCommit,
               loaded: Loaded, now: float, asked: float) -> Next | None:
        """SQLite: the turn's rows, in the batch's transaction (the lock is this process's own)."""
        if write.counts is not None:
            if write.counts.prior_gone:  # read again: the sweep may have counted and removed it since
                old = cur.execute(sb.DIALOG_TEXT, (bot, user)).fetchone()
                loaded.handle = old[0] if old is not None else None
            rows = funnel_rows.rows_of(bot, self._expired(write, loaded, now))
            cur.executemany(sb.FUNNEL_ADD, sorted(tuple(r[k] for k in (*funnel_rows.KEY, "value")) for r in rows))
        if write.dialog is None:
            cur.execute(sb.DIALOG_DROP, (bot, user))
        else:
            cur.execute(sb.DIALOG_SAVE, (bot, user, as_text(write.dialog), now + write.ttl, write.timer_due))
        if write.timeline is not None:
            cur.execute(sb.TIMELINE_ADD, (bot, user, now, as_text(as_record(write.timeline, write.dialog))))
            cur.execute(sb.TIMELINE_CAP_USER, (bot, user))
        if write.dedupe is not None:
            cur.execute(sb.MARK, (bot, mark(user, write.dedupe), now + DEDUPE_TTL))
        first = None
        if write.outbox:
            cur.executemany(sb.OUTBOX_ADD, [(bot, user, item["id"], as_text(item)) for item in write.outbox])
            added = cur.execute(sb.QUEUE_CLAIM, (bot, user, token, now + write.outbox_lease)).rowcount == 1
            first = claimed(write, asked) if added else None
        if write.actions:
            cur.executemany(sb.ACTION_ADD, [(a["id"], as_text(a), now) for a in write.actions])
        return first

    async def commit(self, bot: str, user: str, token: str, write: TurnCommit, loaded: Loaded) -> Next | None:
        now, asked = self.clock(), time.monotonic()
        held = self._locks.get((bot, user))
        if held is None or held[0] != token or held[1] <= now:
            raise LockLost(f"{bot}/{user}")
        try:
            return await self._batch.run(lambda cur: self._write(cur, bot, user, token, write, loaded, now, asked),
                                         self._claiming)
        finally:
            self._locks.pop((bot, user), None)

    async def _end_turn(self, bot: str, user: str, token: str, loaded: Loaded, now: float,
                        work: Callable[[AsyncConnection], Awaitable[R]]) -> R:
        held = self._locks.get((bot, user))
        if held is None or held[0] != token or held[1] <= now:
            raise LockLost(f"{bot}/{user}")
        try:
            async with self._claiming, self.engine.begin() as conn:
                return await work(conn)
        finally:
            self._locks.pop((bot, user), None)

    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        held = self._locks.get((bot, user))
        if held is not None and held[0] == token:
            del self._locks[(bot, user)]

    async def _claim(self, table: Any, keys: str, column: str, now: float, lease: float, limit: int,
                     returning: str | None = None, extra: str = "", owner: str | None = None) -> list[Any]:
        """One process claims (under the store's lock): select the due rows, then move each one's time."""
        returning = returning or keys
        name, params = table.name, {"lease": now + lease, "now": now, "limit": limit, "owner": owner}
        sets = f"{column} = :lease" + (", owner = :owner" if owner is not None else "")
        async with self._claiming, self.engine.begin() as conn:
            rows = (await conn.execute(sql_text(
                f"SELECT {keys}, {returning} FROM {name} WHERE {column} <= :now {extra} "
                f"ORDER BY {column} LIMIT :limit"), params)).all()
            width = len(keys.split(","))
            for row in rows:
                cond = " AND ".join(f"{k.strip()} = :k{i}" for i, k in enumerate(keys.split(",")))
                await conn.execute(sql_text(f"UPDATE {name} SET {sets} WHERE {cond}"),
                                   {**params, **{f"k{i}": row[i] for i in range(width)}})
            return [row[width:] for row in rows]

    def _serial(self) -> asyncio.Lock:
        return self._claiming

    async def _owned(self, conn: AsyncConnection, bot: str, user: str, owner: str) -> bool:
        return await conn.scalar(select(Q.c.owner).where(where(Q, bot, user))) == owner


    @guarded
    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str, lease: float = 5.0) -> Next | None:
        asked = time.monotonic()

        def work(cur: sqlite3.Cursor) -> Next | None:
            # The owner's token is checked in the statement that renews its claim
            held = cur.execute(sb.QUEUE_RENEW, (self.clock() + lease, bot, user, owner)).rowcount == 1
            head = cur.execute(sb.OUTBOX_HEAD, (bot, user)).fetchone()
            if head is not None and head[1] == item_id:  # it went out, whoever sent it
                cur.execute(sb.OUTBOX_DROP, (head[0],))
                head = cur.execute(sb.OUTBOX_HEAD, (bot, user)).fetchone()
            if not held:
                return None
            if head is None:  # nothing left: the claim ends
                cur.execute(sb.QUEUE_END, (bot, user))
                return None
            return Next(decode(head[2]), held=held_until(asked, lease))

        return await self._batch.run(work, self._claiming)
