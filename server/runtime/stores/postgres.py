"""The SQL store on PostgreSQL: a lease on the dialog's row instead of a transaction held across the turn.

`begin` takes the lease and reads the dialog in one statement, `commit` saves the whole turn in one
statement that checks the lease (`sql_turns`); between them, while the engine steps, no transaction and
no connection is held. Replicas claim disjoint rows with SKIP LOCKED.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any, Awaitable, Callable

import asyncpg
from sqlalchemy import func, select, text as sql_text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.runtime import funnel_rows
from server.runtime.stores import sql_turns
from server.runtime.stores.base import (
    Ack, BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, Changed, Loaded, LockLost, Next, StoreUnavailable, TurnCommit,
    held_until,
)
from server.runtime.stores.sql import R, SqlStore
from server.runtime.stores.sql_listing import PostgresListing
from server.runtime.stores.sql_common import FD, Q, claimed, decode, encode, guarded, mark, as_text, where
from server.runtime.stores.written import Written
from server.runtime.timeline import as_record

# Connections for PostgreSQL turns: a statement holds one only while it runs, not across a turn.
PG_POOL = 10
PG_LEASE_POOL = 5
# Dialogs whose last write this process remembers, so their next turn needs no begin (about 1 KB each).
PG_WRITTEN = 10_000


def _unavailable(exc: BaseException) -> bool:
    """Whether a driver error means the database cannot serve now (connection, shutdown, resources)."""
    if isinstance(exc, (OSError, TimeoutError, asyncpg.InterfaceError)):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return state[:2] in ("08", "53", "57")


@contextlib.contextmanager
def _answered() -> Iterator[None]:
    """A database that did not answer raised as StoreUnavailable (webhooks answer 503); other errors as they are."""
    try:
        yield
    except Exception as exc:
        if _unavailable(exc):
            raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
        raise


async def _kept(conn: asyncpg.Connection) -> None:
    """A pooled connection goes back as it is: the store's statements leave no transaction, setting or
    listener on it, and asyncpg's default reset was a second round trip after every statement."""


class PostgresStore(SqlStore):
    """Dialogs in the app's PostgreSQL; turns run on asyncpg itself, one statement each."""

    listing_kind = PostgresListing

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        super().__init__(engine, clock)
        # Turns run on the driver itself: each statement is prepared once per connection and runs in its
        # own implicit transaction, one round trip (no BEGIN, COMMIT or pool ping around it). Leases (begin,
        # renew, release) on connections that do not wait for the disk: a lease lost with the server only
        # fails its turn's commit (LockLost: MAX delivers again), and the commit that follows a lease is
        # durable, WAL before it included.
        self._pools: dict[bool, asyncpg.Pool] = {}
        self._opening = asyncio.Lock()
        # A turn of a dialog this process wrote last reads it from here (`begin(optimistic=True)`): one
        # round trip a turn (the commit, which checks the row still holds that text) instead of two.
        self.written = Written(PG_WRITTEN, PG_WRITTEN // 4)

    async def _driver(self, lease: bool) -> asyncpg.Pool:
        pool = self._pools.get(lease)
        if pool is None:
            async with self._opening:
                pool = self._pools.get(lease)
                if pool is None:
                    url = self.engine.url.set(drivername="postgresql")
                    pool = self._pools[lease] = await asyncpg.create_pool(
                        url.render_as_string(hide_password=False), min_size=1,
                        max_size=PG_LEASE_POOL if lease else PG_POOL, timeout=10, command_timeout=10,
                        reset=_kept, server_settings={"synchronous_commit": "off"} if lease else None)
        return pool

    async def _fetchrow(self, statement: str, args: list[Any], lease: bool = False) -> Any:
        with _answered():
            return await (await self._driver(lease)).fetchrow(statement, *args)

    async def _execute(self, statement: str, args: list[Any], lease: bool = False) -> str:
        with _answered():
            return await (await self._driver(lease)).execute(statement, *args)

    async def close(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.close()

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        if optimistic:
            key = f"{bot}\x00{user}"
            raw = self.written.raw.get(key)
            if raw is not None:  # the commit checks lease, mark and dialog text in its one statement
                return Loaded(OK, self.written.decoded.get(key) or decode(raw), handle=raw.decode(), locked=False)
        now = self.clock()
        try:
            mark_key = mark(user, dedupe) if dedupe is not None else None
            duplicate, took, raw, expires_at, until = await self._fetchrow(
                sql_turns.BEGIN, [bot, user, token, now, now + LOCK_MS / 1000, mark_key], lease=True)
            if duplicate:
                return Loaded(DUPLICATE)
            if not took:
                left = (until - now) if until is not None else LOCK_MS / 1000
                return Loaded(BUSY, retry_ms=max(1, int(left * 1000)))
            return self._loaded(raw, expires_at, now)
        except (OperationalError, DBAPIError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def renew(self, bot: str, user: str, token: str) -> bool:
        now = self.clock()
        done = await self._execute(sql_turns.RENEW, [bot, user, token, now, now + LOCK_MS / 1000], lease=True)
        return done == "UPDATE 1"

    async def commit(self, bot: str, user: str, token: str, write: TurnCommit, loaded: Loaded) -> Next | None:
        """The whole turn in one statement, which saves only while `token` holds the lease (or, read
        unlocked, while the dialog is as read)."""
        now, asked, key = self.clock(), time.monotonic(), f"{bot}\x00{user}"
        args: list[Any] = [bot, user, token, now]
        raw = encode(write.dialog) if write.dialog is not None else b""
        if write.dialog is not None:
            args += [raw.decode(), now + write.ttl, write.timer_due]
        if not loaded.locked:
            args.append(loaded.handle)
        rows = funnel_rows.rows_of(bot, self._expired(write, loaded, now)) if write.counts is not None else []
        if rows:
            rows.sort(key=lambda row: tuple(row[k] for k in funnel_rows.KEY))
            args += [[r[k] for r in rows] for k in ("flow_id", "version", "hour", "field", "value")]
        if write.timeline is not None:
            args.append(as_text(as_record(write.timeline, write.dialog)))
        if write.dedupe is not None:
            args += [mark(user, write.dedupe), now + DEDUPE_TTL]
        if write.outbox:
            args += [[i["id"] for i in write.outbox], [as_text(i) for i in write.outbox], now + write.outbox_lease]
        if write.actions:
            args += [[a["id"] for a in write.actions], [as_text(a) for a in write.actions]]
        statement = sql_turns.commit(write.dialog is not None, bool(rows), write.timeline is not None,
                                     write.dedupe is not None, bool(write.outbox), bool(write.actions),
                                     not loaded.locked)
        try:
            own, added = await self._fetchrow(statement, args)
        except BaseException:
            self.written.forget(key)  # it may or may not have been saved
            raise
        if not own:
            self.written.forget(key)
            if not loaded.locked:  # changed, leased or a duplicate: what a begin finds now, lease taken
                raise Changed(await self.begin(bot, user, token, write.dedupe))
            raise LockLost(f"{bot}/{user}")
        if write.dialog is not None:
            self.written.remember(key, raw, write.dialog)
        else:
            self.written.forget(key)
        return claimed(write, asked) if added else None

    async def _end_turn(self, bot: str, user: str, token: str, loaded: Loaded, now: float,
                        work: Callable[[AsyncConnection], Awaitable[R]]) -> R:
        self.written.forget(f"{bot}\x00{user}")
        async with self.engine.begin() as conn:
            owned = (await conn.exec_driver_sql(sql_turns.OWNED, (bot, user, token, now))).first()
            if owned is None:
                raise LockLost(f"{bot}/{user}")
            return await work(conn)

    @guarded
    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        if loaded.locked:  # a turn read unlocked holds no lease
            await self._execute(sql_turns.RELEASE, [bot, user, token], lease=True)

    async def _claim(self, table: Any, keys: str, column: str, now: float, lease: float, limit: int,
                     returning: str | None = None, extra: str = "", owner: str | None = None) -> list[Any]:
        """One statement; SKIP LOCKED lets replicas claim disjoint rows."""
        returning = returning or keys
        name, params = table.name, {"lease": now + lease, "now": now, "limit": limit, "owner": owner}
        sets = f"{column} = :lease" + (", owner = :owner" if owner is not None else "")
        cond = " AND ".join(f"{name}.{k.strip()} = due.{k.strip()}" for k in keys.split(","))
        columns = ", ".join(dict.fromkeys(c.strip() for c in f"{keys},{returning}".split(",")))
        sql = (f"WITH due AS (SELECT {columns} FROM {name} WHERE {column} <= :now {extra} "
               f"ORDER BY {column} LIMIT :limit FOR UPDATE SKIP LOCKED) "
               f"UPDATE {name} SET {sets} FROM due WHERE {cond} "
               f"RETURNING {', '.join('due.' + c.strip() for c in returning.split(','))}")
        async with self.engine.begin() as conn:
            return list((await conn.execute(sql_text(sql), params)).all())

    def _serial(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    async def _owned(self, conn: AsyncConnection, bot: str, user: str, owner: str) -> bool:
        return await conn.scalar(select(Q.c.owner).where(where(Q, bot, user)).with_for_update()) == owner


    async def outbox_acks(self, acks: list[Ack], lease: float = 5.0) -> list[tuple[str, str, Next]]:
        """The acks of one item each, one user each, in one statement (`sql_turns.DONE_MANY`); others, and
        a user whose answer a commit overtook, one statement each (`outbox_done`)."""
        owners: dict[tuple[str, str], str] = {}
        batch, alone = [], []
        for ack in acks:
            if len(ack.ids) == 1 and (ack.bot, ack.user) not in owners:
                owners[(ack.bot, ack.user)] = ack.owner
                batch.append(ack)
            else:
                alone.append(ack)
        if len(batch) < 2:
            return await super().outbox_acks(acks, lease)
        asked = time.monotonic()
        answers = await self._fetch_many(batch, lease)
        found, again = [], []
        for bot, user, held, ended, kept, raw in answers:
            if kept:
                found.append((bot, user, Next(decode(raw), held=held_until(asked, lease))))
            elif held and not ended:  # a commit queued an item this statement did not see: ask again
                again.append(Ack(bot, user, owners[(bot, user)], ("",)))
        return found + await super().outbox_acks(again + alone, lease)

    @guarded
    async def _fetch_many(self, batch: list[Ack], lease: float) -> list[Any]:
        with _answered():
            return await (await self._driver(False)).fetch(
                sql_turns.DONE_MANY, [a.bot for a in batch], [a.user for a in batch], [a.owner for a in batch],
                [a.ids[0] for a in batch], self.clock() + lease)

    @guarded
    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str, lease: float = 5.0) -> Next | None:
        asked = time.monotonic()
        for _ in range(5):  # again only when a commit queued an item between its read and its end
            held, ended, kept, raw = await self._fetchrow(
                sql_turns.DONE, [bot, user, owner, item_id, self.clock() + lease])
            if not held or ended:
                return None
            if kept:
                return Next(decode(raw), held=held_until(asked, lease))
            item_id = ""  # the head is gone already: nothing more to drop
        return None

    @guarded
    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        found = await funnel_rows.totals(self.engine, bot, flow, version, hours)
        if hours:  # and the turns' increments not folded in yet
            async with self.engine.connect() as conn:
                rows = await conn.execute(select(FD.c.field, func.sum(FD.c.value)).where(
                    (FD.c.bot_id == bot) & (FD.c.flow_id == flow) & (FD.c.version == str(version))
                    & (FD.c.hour >= hours.start) & (FD.c.hour < hours.stop)).group_by(FD.c.field))
                for field, value in rows:
                    found[field] = found.get(field, 0) + int(value)
        return found

    @guarded
    async def roll_up(self) -> int:
        """Fold the turns' counter increments into the counters; how many counters changed."""
        done = await self._execute(sql_turns.FOLD, [])
        return int(done.rsplit(" ", 1)[-1])

    @guarded
    async def server_time(self) -> float:
        async with self.engine.connect() as conn:
            return float(await conn.scalar(sql_text("SELECT extract(epoch from clock_timestamp())")))
