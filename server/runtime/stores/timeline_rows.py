"""Timeline records in the app's database: the SQL store's own, and the Redis store's once moved there."""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.base import table_of
from server.db.runtime_tables import TimelineRow
from server.runtime.stores.base import TIMELINE_CAP, TIMELINE_TTL

T = table_of(TimelineRow)


Row = tuple[str, str, float, str, "str | None"]  # bot, user, at, record JSON, stream id (None: the SQL store's)


async def append(conn: AsyncConnection, rows: list[Row]) -> None:
    """Insert records and keep each of their users' newest TIMELINE_CAP (`insert`, then `cap`)."""
    await insert(conn, rows)
    await cap(conn, {(row[0], row[1]) for row in rows})


async def insert(conn: AsyncConnection, rows: list[Row]) -> None:
    """Insert records; a record already moved (same stream id) is not inserted again, so a repeated move is
    harmless."""
    if not rows:
        return
    postgres = conn.dialect.name == "postgresql"
    # Plain driver parameters: the statement is built once and each row costs the driver alone.
    marks = "($1, $2, $3, $4, $5)" if postgres else "(?, ?, ?, ?, ?)"
    await conn.exec_driver_sql(
        f"INSERT INTO {T.name} (bot_id, user_id, at, record, stream_id) VALUES {marks} ON CONFLICT DO NOTHING",
        rows)


async def cap(conn: AsyncConnection, users: set[tuple[str, str]]) -> None:
    """Delete the records of these (bot, user)s beyond each one's newest TIMELINE_CAP."""
    if users:
        await _trim(conn, tuple_(T.c.bot_id, T.c.user_id).in_(sorted(users)))


async def newest_id(conn: AsyncConnection) -> int:
    """The highest record id so far (0: none)."""
    return (await conn.execute(select(func.max(T.c.id)))).scalar() or 0


async def cap_since(conn: AsyncConnection, since: int) -> int:
    """`cap` for every user with records above id `since` (those added since an earlier `newest_id`);
    returns the id to pass next time."""
    # The database finds those users itself: a list of thousands of (bot, user) pairs in the statement
    # cost the event loop's thread 30-50 ms of SQL compilation at once, a stall every webhook waited out.
    newest = await newest_id(conn)
    if newest > since:
        added = select(T.c.bot_id, T.c.user_id).where((T.c.id > since) & (T.c.id <= newest)).distinct()
        await _trim(conn, tuple_(T.c.bot_id, T.c.user_id).in_(added))
    return newest


async def _trim(conn: AsyncConnection, users: Any) -> None:
    """Delete the records of the users `users` selects beyond each one's newest TIMELINE_CAP."""
    mine = tuple_(T.c.bot_id, T.c.user_id)
    # Counting index entries is cheap; the ranking below runs only for the few users past the cap.
    full = (await conn.execute(select(T.c.bot_id, T.c.user_id).where(users)
                               .group_by(T.c.bot_id, T.c.user_id).having(func.count() > TIMELINE_CAP))).all()
    if full:
        ranked = (select(T.c.id, func.row_number().over(partition_by=(T.c.bot_id, T.c.user_id),
                                                        order_by=T.c.id.desc()).label("n"))
                  .where(mine.in_([tuple(row) for row in full])).subquery())
        await conn.execute(delete(T).where(T.c.id.in_(select(ranked.c.id).where(ranked.c.n > TIMELINE_CAP))))


async def read(conn: AsyncConnection, bot: str, user: str) -> list[tuple[str | None, str]]:
    """(stream id or None, record JSON) of a user's records, oldest first."""
    rows = await conn.execute(select(T.c.stream_id, T.c.record)
                              .where((T.c.bot_id == bot) & (T.c.user_id == user)).order_by(T.c.id))
    return [(row.stream_id, row.record) for row in rows]


async def read_bot(conn: AsyncConnection, bot: str) -> dict[str, list[tuple[str | None, str]]]:
    """Every user of the bot with records: (stream id or None, record JSON) each, oldest first; one query."""
    lines: dict[str, list[tuple[str | None, str]]] = {}
    rows = await conn.execute(select(T.c.user_id, T.c.stream_id, T.c.record)
                              .where(T.c.bot_id == bot).order_by(T.c.id))
    for row in rows:
        lines.setdefault(row.user_id, []).append((row.stream_id, row.record))
    return lines


async def erase(conn: AsyncConnection, bot: str, user: str) -> int:
    """Delete every record of one user; how many went."""
    return (await conn.execute(delete(T).where((T.c.bot_id == bot) & (T.c.user_id == user)))).rowcount or 0


async def forget(conn: AsyncConnection, cutoffs: dict[str, float], default: float) -> int:
    """Delete records older than their bot's cutoff (`default` for the bots not listed); how many went."""
    gone = 0
    for bot, cutoff in cutoffs.items():
        gone += (await conn.execute(delete(T).where((T.c.bot_id == bot) & (T.c.at < cutoff)))).rowcount or 0
    others = T.c.at < default
    if cutoffs:
        others &= T.c.bot_id.not_in(list(cutoffs))
    return gone + ((await conn.execute(delete(T).where(others))).rowcount or 0)


async def sweep(conn: AsyncConnection, now: float) -> None:
    """Forget records older than TIMELINE_TTL."""
    await conn.execute(delete(T).where(T.c.at < now - TIMELINE_TTL))
