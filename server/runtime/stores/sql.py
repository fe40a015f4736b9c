"""The store without Redis: the app's database, row locks on PostgreSQL, an in-process lock on SQLite."""
from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Callable

import msgspec
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.runtime.models import ActionRow, DedupeRow, DialogRow, OutboxQueueRow, OutboxRow, TimelineRow
from server.runtime.stores.base import (
    BUSY, DEDUPE_TTL, DUPLICATE, LOCK_MS, OK, TIMELINE_CAP, TIMELINE_TTL, DialogStore, Loaded, LockLost,
    StoreUnavailable, Write,
)

_encode = msgspec.json.encode
_decode = msgspec.json.decode
D, T, U, O, Q, A = (DialogRow.__table__, TimelineRow.__table__, DedupeRow.__table__, OutboxRow.__table__,
                    OutboxQueueRow.__table__, ActionRow.__table__)


def _text(value: Any) -> str:
    return _encode(value).decode()


class SqlStore(DialogStore):
    """Dialogs in `runtime_*` tables; one transaction per turn on PostgreSQL, held from begin to commit."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        self.postgres = engine.dialect.name == "postgresql"
        self._insert = pg_insert if self.postgres else sqlite_insert
        # SQLite serves a single process: an owner-token table in memory is the lock.
        self._locks: dict[tuple[str, str], tuple[str, float]] = {}
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
                (U.c.bot_id == bot) & (U.c.key == dedupe) & (U.c.expires_at > now)))
            if seen is not None:
                return Loaded(DUPLICATE)
        query = select(D.c.session, D.c.expires_at).where(self._where(D, bot, user))
        row = (await conn.execute(query.with_for_update() if lock else query)).first()
        session = None
        if row is not None and row.session is not None and row.expires_at > now:
            session = _decode(row.session)
        pending = await conn.scalar(select(func.count()).select_from(O).where(self._where(O, bot, user)))
        return Loaded(OK, session, int(pending or 0))

    async def begin(self, bot: str, user: str, token: str, dedupe: str | None = None) -> Loaded:
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

    async def _write(self, conn: AsyncConnection, bot: str, user: str, write: Write, now: float) -> None:
        where = self._where(D, bot, user)
        if write.session is None:
            await conn.execute(delete(D).where(where))
        else:
            values = {"session": _text(write.session), "expires_at": now + write.ttl, "due": write.timer_due}
            await conn.execute(self._insert(D).values(bot_id=bot, user_id=user, **values)
                               .on_conflict_do_update(index_elements=["bot_id", "user_id"], set_=values))
        if write.timeline is not None:
            await conn.execute(T.insert().values(bot_id=bot, user_id=user, at=now, record=_text(write.timeline)))
            oldest_kept = (select(T.c.id).where(self._where(T, bot, user)).order_by(T.c.id.desc())
                           .offset(TIMELINE_CAP - 1).limit(1).scalar_subquery())
            await conn.execute(delete(T).where(self._where(T, bot, user) & (T.c.id < oldest_kept)))
        if write.dedupe is not None:
            expires = now + DEDUPE_TTL
            await conn.execute(self._insert(U).values(bot_id=bot, key=write.dedupe, expires_at=expires)
                               .on_conflict_do_update(index_elements=["bot_id", "key"], set_={"expires_at": expires}))
        if write.outbox:
            await conn.execute(O.insert(), [{"bot_id": bot, "user_id": user, "item_id": item["id"],
                                             "item": _text(item)} for item in write.outbox])
            await conn.execute(self._insert(Q).values(bot_id=bot, user_id=user, next_at=write.outbox_at)
                               .on_conflict_do_nothing())
        if write.actions:
            await conn.execute(A.insert(), [{"id": a["id"], "item": _text(a), "next_at": now}
                                            for a in write.actions])

    async def commit(self, bot: str, user: str, token: str, write: Write, loaded: Loaded) -> None:
        now = self.clock()
        try:
            if not self.postgres:
                held = self._locks.get((bot, user))
                if held is None or held[0] != token or held[1] <= now:
                    raise LockLost(f"{bot}/{user}")
                try:
                    async with self.engine.begin() as conn:
                        await self._write(conn, bot, user, write, now)
                finally:
                    self._locks.pop((bot, user), None)
                return
            conn: AsyncConnection = loaded.handle
            try:
                await self._write(conn, bot, user, write, now)
                await conn.commit()
            finally:
                await conn.close()
        except (OperationalError, DBAPIError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

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

    async def session(self, bot: str, user: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(D.c.session, D.c.expires_at)
                                      .where(self._where(D, bot, user)))).first()
        if row is None or row.session is None or row.expires_at <= self.clock():
            return None
        return _decode(row.session)

    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(T.c.record).where(self._where(T, bot, user)).order_by(T.c.id))
            return [_decode(row.record) for row in rows]

    async def users(self, bot: str) -> AsyncIterator[str]:
        async with self.engine.connect() as conn:
            rows = (await conn.execute(select(D.c.user_id).where(
                (D.c.bot_id == bot) & D.c.session.is_not(None) & (D.c.expires_at > self.clock())))).all()
        for row in rows:
            yield row.user_id

    async def _claim(self, table: Any, keys: str, column: str, now: float, lease: float, limit: int,
                     returning: str | None = None) -> list[Any]:
        """Move due rows' time to the lease end; SKIP LOCKED lets replicas claim disjoint rows."""
        returning = returning or keys
        name = table.name
        if self.postgres:
            sql = (f"UPDATE {name} SET {column} = :lease WHERE ({keys}) IN (SELECT {keys} FROM {name} "
                   f"WHERE {column} <= :now ORDER BY {column} LIMIT :limit FOR UPDATE SKIP LOCKED) "
                   f"RETURNING {returning}")
            async with self.engine.begin() as conn:
                return (await conn.execute(text(sql), {"lease": now + lease, "now": now, "limit": limit})).all()
        async with self._claiming, self.engine.begin() as conn:
            rows = (await conn.execute(text(
                f"SELECT {keys}, {returning} FROM {name} WHERE {column} <= :now ORDER BY {column} LIMIT :limit"),
                {"now": now, "limit": limit})).all()
            width = len(keys.split(","))
            for row in rows:
                cond = " AND ".join(f"{k.strip()} = :k{i}" for i, k in enumerate(keys.split(",")))
                await conn.execute(text(f"UPDATE {name} SET {column} = :lease WHERE {cond}"),
                                   {"lease": now + lease, **{f"k{i}": row[i] for i in range(width)}})
            return [row[width:] for row in rows]

    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        rows = await self._claim(D, "bot_id, user_id", "due", now, lease, limit)
        return [(row[0], row[1]) for row in rows]

    async def outbox_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        rows = await self._claim(Q, "bot_id, user_id", "next_at", now, lease, limit)
        return [(row[0], row[1]) for row in rows]

    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            raw = await conn.scalar(select(O.c.item).where(self._where(O, bot, user)).order_by(O.c.id).limit(1))
        return _decode(raw) if raw is not None else None

    async def outbox_done(self, bot: str, user: str, item_id: str) -> bool:
        async with self.engine.begin() as conn:
            head = (await conn.execute(select(O.c.id, O.c.item_id).where(self._where(O, bot, user))
                                       .order_by(O.c.id).limit(1))).first()
            if head is not None and head.item_id == item_id:
                await conn.execute(delete(O).where(O.c.id == head.id))
            left = await conn.scalar(select(func.count()).select_from(O).where(self._where(O, bot, user)))
            if not left:
                await conn.execute(delete(Q).where(self._where(Q, bot, user)))
            return bool(left)

    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float) -> None:
        async with self.engine.begin() as conn:
            head = (await conn.execute(select(O.c.id, O.c.item_id).where(self._where(O, bot, user))
                                       .order_by(O.c.id).limit(1))).first()
            if head is not None and head.item_id == item["id"]:
                await conn.execute(update(O).where(O.c.id == head.id).values(item=_text(item)))
                await conn.execute(update(Q).where(self._where(Q, bot, user)).values(next_at=at))

    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        rows = await self._claim(A, "id", "next_at", now, lease, limit, returning="item")
        return [_decode(row[0]) for row in rows]

    async def action_done(self, item_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(A).where(A.c.id == item_id))

    async def action_later(self, item: dict[str, Any], at: float) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(A).where(A.c.id == item["id"]).values(item=_text(item), next_at=at))

    async def sweep(self, now: float) -> None:
        """Forget expired duplicate marks, dialogs past their TTL and old timelines."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(U).where(U.c.expires_at <= now))
            await conn.execute(delete(D).where(D.c.session.is_not(None) & (D.c.expires_at <= now)))
            await conn.execute(delete(T).where(T.c.at < now - TIMELINE_TTL))

    async def ping(self) -> None:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc
