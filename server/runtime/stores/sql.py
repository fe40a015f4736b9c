"""The store without Redis, in the app's database: what SQLite and PostgreSQL do alike.

The turn itself (lock, commit, outbox acks, claims) differs and lives in `sqlite.SqliteStore` (an
in-process lock, batched commits on a writer thread) and `postgres.PostgresStore` (a lease on the dialog's
row, one statement to begin and one to commit, no transaction held between them); `sql_store` picks one.
"""
from __future__ import annotations

import asyncio
import time
from abc import abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import Any, AsyncIterator, Awaitable, Callable, Coroutine, TypeVar

from sqlalchemy import delete, func, select, text as sql_text, update
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.runtime import funnel_rows
from server.runtime.funnel_counts import expired_fields
from server.runtime.stores import timeline_rows
from server.runtime.stores.base import OK, Ack, Claim, Loaded, Next, Sample, StoreUnavailable, TurnCommit
from server.runtime.stores.listing import CountKey, DialogPage, Search
from server.runtime.stores.ports import DialogStore
from server.runtime.stores.sql_common import A, D, O, Q, U, decode, guarded, mark, of, as_text, where
from server.runtime.stores.sql_listing import SqlListing

R = TypeVar("R")


def sql_store(engine: AsyncEngine, clock: Callable[[], float] = time.time) -> SqlStore:
    """The store for the app's database: PostgreSQL's or SQLite's."""
    if engine.dialect.name == "postgresql":
        from server.runtime.stores.postgres import PostgresStore
        return PostgresStore(engine, clock)
    from server.runtime.stores.sqlite import SqliteStore
    return SqliteStore(engine, clock)


class SqlStore(DialogStore):
    """Dialogs in `runtime_*` tables; the dialect's class supplies the turn and the claims."""

    name = "sql"
    listing_kind: type[SqlListing]  # how the dialect reads the dialog's JSON
    batches_acks = True  # one call per event-loop pass: its acks share a batch (SQLite) or run side by side

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        self.listing = self.listing_kind(engine, lambda: self.clock())

    # What the dialects do their own way
    @abstractmethod
    async def _end_turn(self, bot: str, user: str, token: str, loaded: Loaded, now: float,
                        work: Callable[[AsyncConnection], Awaitable[R]]) -> R:
        """Run `work` in a transaction that ends the turn (`token` must still hold the lock), then let go."""

    @abstractmethod
    async def _claim(self, table: Any, keys: str, column: str, now: float, lease: float, limit: int,
                     returning: str | None = None, extra: str = "", owner: str | None = None) -> list[Any]:
        """Move due rows' time to the lease end (and set `owner`); returns `keys`, `returning` as found."""

    @abstractmethod
    def _serial(self) -> AbstractAsyncContextManager[Any]:
        """The guard outbox changes run under (SQLite: one at a time; PostgreSQL: none, row locks)."""

    @abstractmethod
    async def _owned(self, conn: AsyncConnection, bot: str, user: str, owner: str) -> bool:
        """Whether `owner` holds the user's outbox claim (PostgreSQL: and locks its row)."""

    @staticmethod
    def _loaded(raw: str | None, expires_at: float, now: float) -> Loaded:
        """The dialog as a turn sees it; the stored text rides along (`handle`) so a commit that counts an
        expiry (a dialog past its session_ttl, still stored) needs no second read."""
        return Loaded(OK, decode(raw) if raw is not None and expires_at > now else None, handle=raw)

    @staticmethod
    def _expired(write: TurnCommit, loaded: Loaded, now: float) -> list[tuple[str, str]]:
        """The turn's counter increments, with the expiry of a dialog still stored past its session_ttl."""
        pairs = write.counts.pairs if write.counts is not None else []
        if write.counts is not None and write.counts.prior_gone and loaded.handle is not None:
            pairs = [*pairs, expired_fields(decode(loaded.handle), now)]
        return pairs

    async def _erase(self, conn: AsyncConnection, bot: str, user: str) -> dict[str, int]:
        """Delete the user's rows in the caller's transaction; how many of each went."""
        def gone(result: Any) -> int:
            return result.rowcount or 0

        timer = await conn.scalar(select(func.count()).select_from(D).where(where(D, bot, user) & D.c.due.is_not(None)))
        prefix = mark(user, "")
        actions = [row.id for row in await conn.execute(select(A.c.id, A.c.item)) if of(row.item, bot, user)]
        # The queue row before its items: senders lock it first too (outbox_done), so the two never deadlock.
        await conn.execute(delete(Q).where(where(Q, bot, user)))
        erased = {
            "dialog": gone(await conn.execute(delete(D).where(where(D, bot, user) & D.c.session.is_not(None)))),
            "timeline": await timeline_rows.erase(conn, bot, user),
            "outbox": gone(await conn.execute(delete(O).where(where(O, bot, user)))),
            "timer": int(timer or 0),
            # Marks are "<user>:<redelivery key>": compared by prefix, so no LIKE wildcard can widen it.
            "marks": gone(await conn.execute(delete(U).where(
                (U.c.bot_id == bot) & (func.substr(U.c.key, 1, len(prefix)) == prefix)))),
            "actions": gone(await conn.execute(delete(A).where(A.c.id.in_(actions)))) if actions else 0,
        }
        await conn.execute(delete(D).where(where(D, bot, user)))  # the placeholder row a lock made
        return erased

    async def erase(self, bot: str, user: str, token: str, loaded: Loaded) -> dict[str, int]:
        try:
            return await self._end_turn(bot, user, token, loaded, self.clock(),
                                        lambda conn: self._erase(conn, bot, user))
        except (OperationalError, DBAPIError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    @guarded
    async def forget_timelines(self, cutoffs: dict[str, float], default: float) -> int:
        async with self.engine.begin() as conn:
            return await timeline_rows.forget(conn, cutoffs, default)

    @guarded
    async def dialog(self, bot: str, user: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(D.c.session, D.c.expires_at)
                                      .where(where(D, bot, user)))).first()
        if row is None or row.session is None or row.expires_at <= self.clock():
            return None
        return decode(row.session)

    @guarded
    async def timeline(self, bot: str, user: str) -> list[dict[str, Any]]:
        async with self.engine.connect() as conn:
            return [decode(record) for _, record in await timeline_rows.read(conn, bot, user)]

    async def bot_timelines(self, bot: str) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        async with self.engine.connect() as conn:
            lines = await timeline_rows.read_bot(conn, bot)
        for user, rows in lines.items():
            yield user, [decode(record) for _, record in rows]

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

    @guarded
    async def timers_due(self, now: float, lease: float, limit: int = 100) -> list[tuple[str, str]]:
        rows = await self._claim(D, "bot_id, user_id", "due", now, lease, limit,
                                 extra="AND session IS NOT NULL AND expires_at > :now")
        return [(row[0], row[1]) for row in rows]

    @guarded
    async def timers_hold(self, claims: list[tuple[str, str]], until: float) -> None:
        if claims:
            async with self.engine.begin() as conn:
                for bot, user in claims:
                    await conn.execute(update(D).where(where(D, bot, user) & (D.c.due < until))
                                       .values(due=until))

    @guarded
    async def outbox_claim(self, now: float, lease: float, owner: str, limit: int = 100, *,
                           take_over: bool = True) -> list[Claim]:
        rows = await self._claim(Q, "bot_id, user_id", "next_at", now, lease, limit,
                                 returning="bot_id, user_id, owner", owner=owner,
                                 extra="" if take_over else "AND owner IS NULL")
        return [Claim(row[0], row[1], row[2] is not None) for row in rows]

    @guarded
    async def outbox_hold(self, claims: list[tuple[str, str]], owner: str, until: float) -> list[tuple[str, str]]:
        held = []
        if claims:
            async with self.engine.begin() as conn:
                for bot, user in claims:
                    done = await conn.execute(update(Q).where(where(Q, bot, user) & (Q.c.owner == owner))
                                              .values(next_at=until))
                    if done.rowcount:
                        held.append((bot, user))
        return held

    @guarded
    async def outbox_head(self, bot: str, user: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            raw = await conn.scalar(select(O.c.item).where(where(O, bot, user)).order_by(O.c.id).limit(1))
        return decode(raw) if raw is not None else None

    async def outbox_acks(self, acks: list[Ack], lease: float = 5.0) -> list[tuple[str, str, Next]]:
        """Each user's acks in order, the users side by side (PostgreSQL: a statement each on the pool;
        SQLite: all in the same batch transaction)."""
        async def one(ack: Ack) -> tuple[str, str, Next] | None:
            found = None
            for item_id in ack.ids:
                found = await self.outbox_done(ack.bot, ack.user, item_id, ack.owner, lease)
            return (ack.bot, ack.user, found) if found is not None else None

        return [done for done in await asyncio.gather(*(one(ack) for ack in acks)) if done is not None]

    @guarded
    async def outbox_later(self, bot: str, user: str, item: dict[str, Any], at: float, owner: str) -> None:
        async with self._serial(), self.engine.begin() as conn:
            if not await self._owned(conn, bot, user, owner):
                return
            head = (await conn.execute(select(O.c.id, O.c.item_id).where(where(O, bot, user))
                                       .order_by(O.c.id).limit(1))).first()
            if head is not None and head.item_id == item["id"]:
                await conn.execute(update(O).where(O.c.id == head.id).values(item=as_text(item)))
            await conn.execute(update(Q).where(where(Q, bot, user)).values(next_at=at, owner=None))

    @guarded
    async def actions_due(self, now: float, lease: float, limit: int = 100) -> list[dict[str, Any]]:
        rows = await self._claim(A, "id", "next_at", now, lease, limit, returning="item")
        return [decode(row[0]) for row in rows]

    @guarded
    async def action_done(self, item_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(A).where(A.c.id == item_id))

    @guarded
    async def action_later(self, item: dict[str, Any], at: float) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(A).where(A.c.id == item["id"]).values(item=as_text(item), next_at=at))

    @guarded
    async def sample(self, dialogs: bool = True) -> Sample:
        async with self.engine.connect() as conn:
            users = await conn.scalar(select(func.count()).select_from(Q))
            first = select(func.min(O.c.id)).group_by(O.c.bot_id, O.c.user_id).limit(50).scalar_subquery()
            heads = (await conn.execute(select(O.c.item).where(O.c.id.in_(first)))).scalars().all()
            found = Sample(int(users or 0))
            queued = [q for q in (decode(h).get("queued") for h in heads) if q is not None]
            found.outbox_oldest = min(queued, default=None)
            if dialogs:
                version = self.listing.field("version")
                rows = await conn.execute(select(D.c.bot_id, version, func.count()).where(
                    D.c.session.is_not(None) & (D.c.expires_at > self.clock())).group_by(D.c.bot_id, version))
                found.dialogs = {(bot, str(v)): int(n) for bot, v, n in rows}
        return found

    @guarded
    async def sweep(self, now: float) -> None:
        """Forget expired duplicate marks, dialogs past their TTL (counted as expired) and old timelines."""
        async with self._serial(), self.engine.begin() as conn:
            await conn.execute(delete(U).where(U.c.expires_at <= now))
            # A dialog under a live lease is its turn's to count (or replace): the turn read it expired.
            leased = D.c.owner.is_not(None) & (D.c.held_until > now)
            gone = await conn.execute(delete(D).where(D.c.session.is_not(None) & (D.c.expires_at <= now) & ~leased)
                                      .returning(D.c.bot_id, D.c.session))
            by_bot: dict[str, list[tuple[str, str]]] = {}
            for bot, raw in gone:
                by_bot.setdefault(bot, []).append(expired_fields(decode(raw), now))
            for bot, pairs in by_bot.items():
                await funnel_rows.add(conn, funnel_rows.rows_of(bot, pairs))
            await timeline_rows.sweep(conn, now)

    @guarded
    async def funnel(self, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
        return await funnel_rows.totals(self.engine, bot, flow, version, hours)

    async def ping(self) -> None:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(sql_text("SELECT 1"))
        except Exception as exc:  # noqa: BLE001 - any failure means not ready
            raise StoreUnavailable(str(exc)) from exc

    def dialog_counts(self, bot: str) -> Coroutine[Any, Any, dict[CountKey, int]]:
        return self.listing.dialog_counts(bot)

    def dialog_page(self, bot: str, search: Search) -> Coroutine[Any, Any, DialogPage]:
        return self.listing.dialog_page(bot, search)
