"""Ending a running experiment inside another change's transaction (a publish, a flow's deletion)."""
from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.changed import changed
from server.db.experiments import ExperimentRow
from server.db.models import utcnow
from server.services import audit


async def running(session: AsyncSession, bot_id: str) -> ExperimentRow | None:
    """The bot's running experiment, if any."""
    return (await session.execute(select(ExperimentRow).where(
        ExperimentRow.running_bot == bot_id))).scalar_one_or_none()


async def end(session: AsyncSession, row: ExperimentRow, reason: str, actor: str | None,
              promoted: int | None = None, how: str = "stopped") -> bool:
    """Mark `row` ended (in the caller's transaction) unless something else ended it first; whether this did.

    `how`: "auto" or "manual" with a `promoted` version, else "stopped", "published" or "deleted".
    The conditional update is what makes an ending happen once, whichever replica or request tries.
    """
    now = utcnow()
    done = await session.execute(
        update(ExperimentRow).where(ExperimentRow.id == row.id, ExperimentRow.ended_at.is_(None))
        .values(ended_at=now, ended_by=actor, end_reason=reason, running_bot=None, promoted_version=promoted,
                promoted_how=how).execution_options(synchronize_session=False))
    if changed(done) != 1:
        return False
    audit.record(session, actor, "experiment.promote" if promoted is not None else "experiment.end",
                 f"bot:{row.bot_id}", experiment=row.id, flow=row.flow_id, version=promoted, how=how, reason=reason)
    return True


async def end_on_publish(session: AsyncSession, bot_id: str, flow_id: str, version: int, actor: str | None) -> bool:
    """A publish outside the experiment ends it; whether one was running."""
    row = await running(session, bot_id)
    if row is None:
        return False
    return await end(session, row, f"Ended because version {version} of flow '{flow_id}' was published "
                                   "to the bot.", actor, how="published")


async def end_for_flow(session: AsyncSession, flow_id: str, actor: str | None) -> list[str]:
    """Deleting a flow deletes its versions, so experiments between them end; the bots whose did."""
    rows = (await session.execute(select(ExperimentRow).where(
        ExperimentRow.flow_id == flow_id, ExperimentRow.ended_at.is_(None)))).scalars().all()
    ended = []
    for row in rows:
        if await end(session, row, f"Ended because flow '{flow_id}' and its versions were deleted.", actor,
                     how="deleted"):
            ended.append(row.bot_id)
    return ended
