"""The store without Redis: the app's database, row locks on PostgreSQL, an in-process lock on SQLite."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

import msgspec
from sqlalchemy import cast, delete, func, literal_column, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.runtime import funnel_rows
from server.runtime.funnel_counts import expired_fields
from server.runtime.timeline import as_record
from server.runtime.stores import timeline_rows
from server.runtime.models import ActionRow, DedupeRow, DialogRow, OutboxQueueRow, OutboxRow, TimelineRow
from server.runtime.stores.sql_listing import SqlListing
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, Claim, DialogStore, Loaded, LockLost,
    Next, Sample, StoreUnavailable, Write,
)

T = TypeVar("T")

_encode = msgspec.json.encode
_decode = msgspec.json.decode
D, T, U, O, Q, A = (DialogRow.__table__, TimelineRow.__table__, DedupeRow.__table__, OutboxRow.__table__,
                    OutboxQueueRow.__table__, ActionRow.__table__)


def _text(value: Any) -> str:
    return _encode(value).decode()


def _guarded(method: Any) -> Any:
    """Database failures leave the store as StoreUnavailable, the one error its callers handle."""
    @functools.wraps(method)
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except DBAPIError as exc:
            if isinstance(exc, (OperationalError, InterfaceError)) or exc.connection_invalidated:
                raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
            raise
        except (OSError, TimeoutError) as exc:
            raise StoreUnavailable(f"the database did not answer: {type(exc).__name__}") from exc
    return call


def _mark(user: str, dedupe: str) -> str:
    """The duplicate mark's key: per user, as `bot_started` marks are only unique within one user."""
    return f"{user}:{dedupe}"


def _of(item: str, bot: str, user: str) -> bool:
    """Whether a stored webhook action belongs to this user's dialog."""
    found = _decode(item)
    return (found.get("bot"), found.get("user")) == (bot, user)


class SqlStore(SqlListing, DialogStore):
    """Dialogs in `runtime_*` tables; one transaction per turn on PostgreSQL, held from begin to commit."""

    name = "sql"

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        self.postgres = engine.dialect.name == "postgresql"
        self._insert = pg_insert if self.postgres else sqlite_insert
        # SQLite serves a single process: an owner-token table in memory is the lock.
        self._locks: dict[tuple[str, str], tuple[str, float]] = {}
        # SQLite: commits and outbox changes run one at a time, so "the queue is empty, the claim ends" and
        # "a commit adds to the queue" never interleave (PostgreSQL orders them with row locks).
        self._claiming = asyncio.Lock()

    def _where(self, table: Any, bot: str, user: str) -> Any:
        return (table.c.bot_id == bot) & (table.c.user_id == user)

    async def _load(self, conn: AsyncConnection, bot: str, user: str, dedupe: str | None,
                    now: float, lock: bool) -> Loaded:
        if lock:
            await conn.execute(self._insert(D).values(bot_id=bot, user_id=user, session=None, expires_at=0.0)
                               .on_conflict_do_nothing())
        if dedupe is not None:
            seen = await conn.scalar(select(U.c.expires_at).where(
                (U.c.bot_id == bot) & (U.c.key == _mark(user, dedupe)) & (U.c.expires_at > now)))
            if seen is not None:
                return Loaded(DUPLICATE)
        query = select(D.c.session, D.c.expires_at).where(self._where(D, bot, user))
        row = (await conn.execute(query.with_for_update() if lock else query)).first()
        session = None
        if row is not None and row.session is not None and row.expires_at > now:
            session = _decode(row.session)
        return Loaded(OK, session)

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None, *,
                    optimistic: bool = False) -> Loaded:
        now = self.clock()
        try:
            if not self.postgres:
                held = self._locks.get((bot, user))
                if held is not None and held[1] > now:
                    return Loaded(BUSY, retry_ms=max(1, int((held[1] - now) * 1000)))
                self._locks[(bot, user)] = (token, now + LOCK_MS / 1000)
                try:
                    async with self.engine.connect() as conn:
                        loaded = await self._load(conn, bot, user, dedupe, now, lock=False)
                except BaseException:
                    self._locks.pop((bot, user), None)
                    raise
                if loaded.status != OK:
                    self._locks.pop((bot, user), None)
                return loaded
            conn = await self.engine.connect()
            try:
                await conn.begin()
                loaded = await self._load(conn, bot, user, dedupe, now, lock=True)
            except BaseException:
                await conn.rollback()
                await conn.close()
                raise
            if loaded.status != OK:
                await conn.rollback()
                await conn.close()
            else:
                loaded.handle = conn
            return loaded
        except (OperationalError, DBAPIError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def renew(self, bot: str, user: str, token: str) -> bool:
        if self.postgres:  # the lock is the turn's open transaction: it lasts as long as the turn
            return True
        held = self._locks.get((bot, user))
        if held is None or held[0] != token or held[1] <= self.clock():
            return False
        self._locks[(bot, user)] = (token, self.clock() + LOCK_MS / 1000)
        return True

    async def _write(self, conn: AsyncConnection, bot: str, user: str, token: str, write: Write,
                     now: float) -> Next | None:
        where = self._where(D, bot, user)
        if write.counts is not None:
            pairs = write.counts.pairs
            if write.counts.prior_gone:  # a dialog still stored was past its session_ttl: it expired
                old = await conn.scalar(select(D.c.session).where(where))
                if old is not None:
                    pairs = [*pairs, expired_fields(_decode(old), now)]
            await funnel_rows.add(conn, funnel_rows.rows_of(bot, pairs))
        if write.session is None:
            await conn.execute(delete(D).where(where))
        else:
            values = {"session": _text(write.session), "expires_at": now + write.ttl, "due": write.timer_due}
            await conn.execute(self._insert(D).values(bot_id=bot, user_id=user, **values)
                               .on_conflict_do_update(index_elements=["bot_id", "user_id"], set_=values))
        if write.timeline is not None:
            record = as_record(write.timeline, write.session)
            await timeline_rows.append(conn, [(bot, user, now, _text(record), None)])
        if write.dedupe is not None:
            expires = now + DEDUPE_TTL
            key = _mark(user, write.dedupe)
            await conn.execute(self._insert(U).values(bot_id=bot, key=key, expires_at=expires)
                               .on_conflict_do_update(index_elements=["bot_id", "key"], set_={"expires_at": expires}))
        claimed = None
        if write.outbox:
            await conn.execute(O.insert(), [{"bot_id": bot, "user_id": user, "item_id": item["id"],
                                             "item": _text(item)} for item in write.outbox])
            queue = self._insert(Q).values(bot_id=bot, user_id=user, owner=token, next_at=now + write.outbox_lease)
            if self.postgres:
                # A no-op update locks an existing queue row, so this waits for a sender ending its claim
                # (outbox_done) instead of seeing a row that sender is about to delete; xmax = 0: inserted.
                queue = queue.on_conflict_do_update(index_elements=["bot_id", "user_id"], set_={"owner": Q.c.owner})
                added = bool(await conn.scalar(queue.returning(literal_column("(xmax = 0)"))))
            else:
                added = (await conn.execute(queue.on_conflict_do_nothing())).rowcount == 1
            claimed = Next(write.outbox[0], more=tuple(Next(i) for i in write.outbox[1:])) if added else None
        if write.actions:
            await conn.execute(A.insert(), [{"id": a["id"], "item": _text(a), "next_at": now}
                                            for a in write.actions])
        return claimed

    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> Next | None:
        now = self.clock()
        return await self._end_turn(bot, user, token, loaded, now,
                                    lambda conn: self._write(conn, bot, user, token, write, now))

    async def _end_turn(self, bot: str, user: str, token: str, loaded: Loaded, now: float,
                        work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run `work` in the transaction that ends the turn (`token` must still hold the lock), then let go."""
        try:
            if not self.postgres:
                held = self._locks.get((bot, user))
                if held is None or held[0] != token or held[1] <= now:
                    raise LockLost(f"{bot}/{user}")
                try:
                    async with self._claiming, self.engine.begin() as conn:
                        return await work(conn)
                finally:
                    self._locks.pop((bot, user), None)
            conn: AsyncConnection = loaded.handle
            loaded.handle = None  # the turn ends here either way: nothing is left for `release`
            try:
                done = await work(conn)
                await conn.commit()
                return done
            finally:
                await conn.close()
        except (OperationalError, DBAPIError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    @_guarded
    async def release(self, bot: str, user: str, token: str, loaded: Loaded) -> None:
        if not self.postgres:
            held = self._locks.get((bot, user))
            if held is not None and held[0] == token:
                del self._locks[(bot, user)]
            return
        conn: AsyncConnection | None = loaded.handle
        if conn is not None:
            try:
                await conn.rollback()
            finally:
                await conn.close()

    async def _erase(self, conn: AsyncConnection, bot: str, user: str) -> dict[str, int]:
        """Delete the user's rows in the caller's transaction; how many of each went."""
        def gone(result: Any) -> int:
            return result.rowcount or 0

        timer = await conn.scalar(select(func.count()).select_from(D).where(
            self._where(D, bot, user) & D.c.due.is_not(None)))
        mark = _mark(user, "")
        actions = [row.id for row in await conn.execute(select(A.c.id, A.c.item)) if _of(row.item, bot, user)]
        # The queue row before its items: senders lock it first too (outbox_done), so the two never deadlock.
        await conn.execute(delete(Q).where(self._where(Q, bot, user)))
        erased = {
            "dialog": gone(await conn.execute(delete(D).where(self._where(D, bot, user) & D.c.session.is_not(None)))),
            "timeline": await timeline_rows.erase(conn, bot, user),
            "outbox": gone(await conn.execute(delete(O).where(self._where(O, bot, user)))),
            "timer": int(timer or 0),
            # Marks are "<user>:<redelivery key>": compared by prefix, so no LIKE wildcard can widen it.
            "marks": gone(await conn.execute(delete(U).where(
                (U.c.bot_id == bot) & (func.substr(U.c.key, 1, len(mark)) == mark)))),
            "actions": gone(await conn.execute(delete(A).where(A.c.id.in_(actions)))) if actions else 0,
        }
        await conn.execute(delete(D).where(self._where(D, bot, user)))  # the placeholder row a lock made
        return erased

    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        return await self._end_turn(bot, user, token, loaded, self.clock(), lambda conn: self._erase(conn, bot, user))

    @_guarded
    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        async with self.engine.begin() as conn:
            return await timeline_rows.forget(conn, cutoffs, default)

    @_guarded
    async def session(self, bot: str, user: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(D.c.session, D.c.expires_at)
                                      .where(self._where(D, bot, user)))).first()
        if row is None or row.session is None or row.expires_at <= self.clock():
            return None
        return _decode(row.session)

    @_guarded
    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        async with self.engine.connect() as conn:
            return [_decode(record) for _, record in await timeline_rows.read(conn, bot, user)]

    async def timeline_users(self, bot: str, limit: int) -> list[str]:
        async with self.engine.connect() as conn:
            return await timeline_rows.users(conn, bot, limit)

    async def users(self, bot: str) -> AsyncIterator[str]:
        async with self.engine.connect() as conn:
            rows = (await conn.execute(select(D.c.user_id).where(
                (D.c.bot_id == bot) & D.c.session.is_not(None) & (D.c.expires_at > self.clock())))).all()
        for row in rows:
            yield row.user_id

    async def outbox_users(self, bot: str) -> AsyncIterator[str]:
        async with self.engine.connect() as conn:
            rows = (await conn.execute(select(O.c.user_id).where(O.c.bot_id == bot).distinct())).all()
        for row in rows:
            yield row.user_id

    async def _claim(self, table: Any, keys: str, column: str, now: float, lease: float, limit: int,
                     returning: str | None = None, extra: str = "", owner: str | None = None) -> list[Any]:
        """Move due rows' time to the lease end (and set `owner`); returns `keys`, `returning` as found.

        SKIP LOCKED lets PostgreSQL replicas claim disjoint rows; SQLite serves one process and a lock.
        """
        returning = returning or keys
        name, params = table.name, {"lease": now + lease, "now": now, "limit": limit, "owner": owner}
        sets = f"{column} = :lease" + (", owner = :owner" if owner is not None else "")
        if self.postgres:
            cond = " AND ".join(f"{name}.{k.strip()} = due.{k.strip()}" for k in keys.split(","))
            columns = ", ".join(dict.fromkeys(c.strip() for c in f"{keys},{returning}".split(",")))
            sql = (f"WITH due AS (SELECT {columns} FROM {name} WHERE {column} <= :now {extra} "
                   f"ORDER BY {column} LIMIT :limit FOR UPDATE SKIP LOCKED) "
                   f"UPDATE {name} SET {sets} FROM due WHERE {cond} "
                   f"RETURNING {', '.join('due.' + c.strip() for c in returning.split(','))}")
            async with self.engine.begin() as conn:
                return (await conn.execute(text(sql), params)).all()
        async with self._claiming, self.engine.begin() as conn:
            rows = (await conn.execute(text(
                f"SELECT {keys}, {returning} FROM {name} WHERE {column} <= :now {extra} "
                f"ORDER BY {column} LIMIT :limit"), params)).all()
            width = len(keys.split(","))
            for row in rows:
                cond = " AND ".join(f"{k.strip()} = :k{i}" for i, k in enumerate(keys.split(",")))
                await conn.execute(text(f"UPDATE {name} SET {sets} WHERE {cond}"),
                                   {**params, **{f"k{i}": row[i] for i in range(width)}})
            return [row[width:] for row in rows]

    @_guarded
    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        rows = await self._claim(D, "bot_id, user_id", "due", now, lease, limit,
                                 extra="AND session IS NOT NULL AND expires_at > :now")
        return [(row[0], row[1]) for row in rows]

    @_guarded
    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        if claims:
            async with self.engine.begin() as conn:
                for bot, user in claims:
                    await conn.execute(update(D).where(self._where(D, bot, user) & (D.c.due < until))
                                       .values(due=until))

    @_guarded
    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100) -> list[Claim]:
        rows = await self._claim(Q, "bot_id, user_id", "next_at", now, lease, limit,
                                 returning="bot_id, user_id, owner", owner=owner)
        return [Claim(row[0], row[1], row[2] is not None) for row in rows]

    @_guarded
    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        held = []
        if claims:
            async with self.engine.begin() as conn:
                for bot, user in claims:
                    done = await conn.execute(update(Q).where(self._where(Q, bot, user) & (Q.c.owner == owner))
                                              .values(next_at=until))
                    if done.rowcount:
                        held.append((bot, user))
        return held

    @_guarded
    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            raw = await conn.scalar(select(O.c.item).where(self._where(O, bot, user)).order_by(O.c.id).limit(1))
        return _decode(raw) if raw is not None else None

    def _serial(self) -> Any:
        """SQLite's one-at-a-time guard for outbox changes; PostgreSQL needs none (row locks)."""
        return contextlib.nullcontext() if self.postgres else self._claiming

    async def _owned(self, conn: AsyncConnection, bot: str, user: str, owner: str) -> bool:
        query = select(Q.c.owner).where(self._where(Q, bot, user))
        return await conn.scalar(query.with_for_update() if self.postgres else query) == owner

    @_guarded
    async def outbox_done(self, bot: str, user: str, item_id: str, owner: str) -> Next | None:
        async with self._serial(), self.engine.begin() as conn:
            if not await self._owned(conn, bot, user, owner):
                return None
            mine = self._where(O, bot, user)
            head = (await conn.execute(select(O.c.id, O.c.item_id).where(mine).order_by(O.c.id).limit(1))).first()
            if head is not None and head.item_id == item_id:
                await conn.execute(delete(O).where(O.c.id == head.id))
            ended = await conn.execute(delete(Q).where(self._where(Q, bot, user) & ~select(O.c.id).where(mine).exists()))
            if ended.rowcount:
                return None
            raw = await conn.scalar(select(O.c.item).where(mine).order_by(O.c.id).limit(1))
            return Next(_decode(raw)) if raw is not None else None

    @_guarded
    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        async with self._serial(), self.engine.begin() as conn:
            if not await self._owned(conn, bot, user, owner):
                return
            head = (await conn.execute(select(O.c.id, O.c.item_id).where(self._where(O, bot, user))
                                       .order_by(O.c.id).limit(1))).first()
            if head is not None and head.item_id == item["id"]:
                await conn.execute(update(O).where(O.c.id == head.id).values(item=_text(item)))
            await conn.execute(update(Q).where(self._where(Q, bot, user)).values(next_at=at, owner=None))

    @_guarded
    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        rows = await self._claim(A, "id", "next_at", now, lease, limit, returning="item")
        return [_decode(row[0]) for row in rows]

    @_guarded
    async def action_done(self, item_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(A).where(A.c.id == item_id))

    @_guarded
    async def action_later(self, item: dict[str, Any], at: float) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(A).where(A.c.id == item["id"]).values(item=_text(item), next_at=at))

    @_guarded
    async def sample(self, dialogs: bool = True) -> Sample:
        async with self.engine.connect() as conn:
            users = await conn.scalar(select(func.count()).select_from(Q))
            first = select(func.min(O.c.id)).group_by(O.c.bot_id, O.c.user_id).limit(50).scalar_subquery()
            heads = (await conn.execute(select(O.c.item).where(O.c.id.in_(first)))).scalars().all()
            found = Sample(int(users or 0))
            queued = [q for q in (_decode(h).get("queued") for h in heads) if q is not None]
            found.outbox_oldest = min(queued, default=None)
            if dialogs:
                version = func.json_extract(D.c.session, "$.version") if not self.postgres else \
                    cast(D.c.session, JSONB)["version"].astext
                rows = await conn.execute(select(D.c.bot_id, version, func.count()).where(
                    D.c.session.is_not(None) & (D.c.expires_at > self.clock())).group_by(D.c.bot_id, version))
                found.dialogs = {(bot, str(v)): int(n) for bot, v, n in rows}
        return found

    @_guarded
    async def sweep(self, now: float) -> None:
        """Forget expired duplicate marks, dialogs past their TTL (counted as expired) and old timelines."""
        async with self._serial(), self.engine.begin() as conn:
            await conn.execute(delete(U).where(U.c.expires_at <= now))
            gone = await conn.execute(delete(D).where(D.c.session.is_not(None) & (D.c.expires_at <= now))
                                      .returning(D.c.bot_id, D.c.session))
            by_bot: dict[str, list[tuple[str, str]]] = {}
            for bot, raw in gone:
                by_bot.setdefault(bot, []).append(expired_fields(_decode(raw), now))
            for bot, pairs in by_bot.items():
                await funnel_rows.add(conn, funnel_rows.rows_of(bot, pairs))
            await timeline_rows.sweep(conn, now)

    @_guarded
    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        return await funnel_rows.totals(self.engine, bot, flow, version, hours)

    async def ping(self) -> None:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc
