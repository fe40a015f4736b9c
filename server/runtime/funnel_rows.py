"""Funnel counter rows in the database: added to in a turn's transaction (SQL store), raised to Redis's
values by the rollup (Redis store), read by the funnel API."""
from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.db.base import table_of
from server.db.funnel import FunnelCounterRow
from server.runtime.funnel_counts import split_group

F = table_of(FunnelCounterRow)
KEY = ["bot_id", "flow_id", "version", "hour", "field"]


def _insert(conn: AsyncConnection) -> Any:
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


def rows_of(bot: str, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """(group, field) increments as rows, equal ones merged (a row may be named once per statement)."""
    merged: dict[tuple[str, str], int] = {}
    for pair in pairs:
        merged[pair] = merged.get(pair, 0) + 1
    rows = []
    for (group, field), n in merged.items():
        flow, version, hour = split_group(group)
        rows.append({"bot_id": bot, "flow_id": flow, "version": version, "hour": hour, "field": field, "value": n})
    return rows


async def add(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    """Add the rows' values to the counters, inside the caller's transaction.

    Rows are written in key order, so two turns that raise the same counters lock them in the same order
    and never wait on each other in a circle (PostgreSQL would abort one as a deadlock).
    """
    if rows:
        stmt = _insert(conn)(F)
        await conn.execute(stmt.on_conflict_do_update(index_elements=KEY,
                                                      set_={"value": F.c.value + stmt.excluded.value}),
                           sorted(rows, key=lambda row: tuple(row[k] for k in KEY)))


async def raise_to(engine: AsyncEngine, rows: list[dict[str, Any]]) -> None:
    """Set each counter to the row's value unless it already holds more."""
    if not rows:
        return
    async with engine.begin() as conn:
        stmt = _insert(conn)(F)
        higher = case((stmt.excluded.value > F.c.value, stmt.excluded.value), else_=F.c.value)
        for start in range(0, len(rows), 500):
            await conn.execute(stmt.on_conflict_do_update(index_elements=KEY, set_={"value": higher}),
                               rows[start:start + 500])


async def read(engine: AsyncEngine, bot: str, flow: str, version: str, hours: range) -> dict[tuple[int, str], int]:
    """(hour, field) -> value for one flow version over the hour numbers `hours`."""
    async with engine.connect() as conn:
        found = await conn.execute(select(F.c.hour, F.c.field, F.c.value).where(
            (F.c.bot_id == bot) & (F.c.flow_id == flow) & (F.c.version == str(version))
            & (F.c.hour >= hours.start) & (F.c.hour < hours.stop)))
        return {(row.hour, row.field): int(row.value) for row in found}


async def totals(engine: AsyncEngine, bot: str, flow: str, version: str, hours: range) -> dict[str, int]:
    """field -> value summed over the hour numbers `hours`, added up by the database."""
    if not hours:
        return {}
    async with engine.connect() as conn:
        found = await conn.execute(select(F.c.field, func.sum(F.c.value)).where(
            (F.c.bot_id == bot) & (F.c.flow_id == flow) & (F.c.version == str(version))
            & (F.c.hour >= hours.start) & (F.c.hour < hours.stop)).group_by(F.c.field))
        return {field: int(value) for field, value in found}
