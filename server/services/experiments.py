"""A/B experiments between versions of one flow: start, read with statistics, stop or promote, auto-promote."""
from __future__ import annotations

import json
import logging
import math
import time
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.changed import changed
from server.db.experiments import ExperimentRow
from server.db.models import utcnow
from server.errors import AppError, Conflict, NotFound, Unprocessable
from server.runtime.arms import OPENED, REACHED, field
from server.runtime.funnel_counts import HOUR
from server.runtime.stores.ports import DialogStore
from server.services import audit, experiment_input, experiment_rows, experiment_stats, publishing
from server.services.bots import get_row as get_bot_row
from server.services.common import iso

log = logging.getLogger("botflow.experiments")

CHART_POINTS = 12  # points of the conversion-over-time chart
AUTO_ACTOR = "auto-promotion"


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def record(row: ExperimentRow) -> dict[str, Any]:
    """The experiment as the API shows it, without counts."""
    auto = None
    if row.auto_confidence is not None:
        auto = {"confidence": row.auto_confidence, "min_dialogs": row.auto_min_dialogs}
    promoted = None
    if row.promoted_version is not None:
        promoted = {"version": row.promoted_version, "at": iso(row.ended_at), "by": row.ended_by,
                    "automatic": row.promoted_how == "auto"}
    return {"id": row.id, "bot": row.bot_id, "flow": row.flow_id, "arms": json.loads(row.arms),
            "goal": {"state": row.goal_state}, "auto_promote": auto,
            "status": "running" if row.ended_at is None else "ended",
            "started_at": iso(row.started_at), "started_by": row.started_by,
            "ended_at": iso(row.ended_at), "ended_by": row.ended_by, "end_reason": row.end_reason,
            "ended_because": None if row.ended_at is None else (
                "promoted" if row.promoted_version is not None else row.promoted_how or "stopped"),
            "promoted": promoted, "method": experiment_stats.METHOD}


async def start(session: AsyncSession, bot_id: str, body: Any, actor: str | None) -> ExperimentRow:
    """Start an experiment on the bot; 409 while another runs."""
    await get_bot_row(session, bot_id)
    body = await experiment_input.check(session, body)
    if await experiment_rows.running(session, bot_id) is not None:
        raise _already(bot_id)
    auto = body.get("auto_promote")
    row = ExperimentRow(bot_id=bot_id, running_bot=bot_id, flow_id=body["flow"],
                        arms=json.dumps([{"version": a["version"], "weight": a["weight"]} for a in body["arms"]]),
                        goal_state=body["goal"]["state"], started_by=actor, started_at=utcnow(),
                        auto_confidence=float(auto["confidence"]) if auto else None,
                        auto_min_dialogs=auto["min_dialogs"] if auto else None)
    session.add(row)
    await session.flush()
    audit.record(session, actor, "experiment.start", f"bot:{bot_id}", experiment=row.id, flow=row.flow_id,
                 arms=json.loads(row.arms), goal=row.goal_state, auto_promote=auto)
    try:
        await session.commit()
    except IntegrityError:  # another start won the race for the bot's one running slot
        await session.rollback()
        raise _already(bot_id) from None
    return row


def _already(bot_id: str) -> Conflict:
    return Conflict(f"An experiment already runs on bot '{bot_id}'; stop it before starting another.",
                    code="experiment_running")


async def latest(session: AsyncSession, bot_id: str) -> ExperimentRow:
    """The running experiment, else the last one that ran; 404 when none ever did."""
    await get_bot_row(session, bot_id)
    row = (await session.execute(select(ExperimentRow).where(ExperimentRow.bot_id == bot_id)
                                 .order_by(ExperimentRow.id.desc()).limit(1))).scalar_one_or_none()
    if row is None:
        raise NotFound(f"No experiment has run on bot '{bot_id}'.")
    return row


def _hours(row: ExperimentRow, now: float) -> range:
    end = _epoch(row.ended_at) if row.ended_at is not None else now
    return range(int(_epoch(row.started_at) // HOUR), int(end // HOUR) + 1)


async def counts(store: DialogStore, row: ExperimentRow, now: float) -> tuple[list[tuple[int, int]], list[dict[str, Any]]]:
    """Per arm (dialogs started, goal reached) from the funnel counters, and the cumulative chart points."""
    hours = _hours(row, now)
    size = max(1, math.ceil(len(hours) / CHART_POINTS))
    versions = [a["version"] for a in json.loads(row.arms)]
    totals = [(0, 0)] * len(versions)
    chart = []
    opened, reached = field(row.id, OPENED), field(row.id, REACHED)
    for first in range(hours.start, hours.stop, size):
        chunk = range(first, min(first + size, hours.stop))
        for i, version in enumerate(versions):
            got = await store.funnel(row.bot_id, row.flow_id, str(version), chunk)
            totals[i] = (totals[i][0] + got.get(opened, 0), totals[i][1] + got.get(reached, 0))
        chart.append({"at": iso(datetime.fromtimestamp(min(chunk.stop * HOUR, now), timezone.utc)),
                      "arms": [{"version": v, "dialogs": n, "goal_reached": r} for v, (n, r) in zip(versions, totals)]})
    return totals, chart


async def report(session: AsyncSession, store: DialogStore | None, bot_id: str) -> dict[str, Any]:
    """GET: the record with per-arm counts, conversion, 95% interval, probability to be best and the chart."""
    row = await latest(session, bot_id)
    answer = record(row)
    if store is None:
        return answer
    totals, chart = await counts(store, row, time.time())
    for arm, stats in zip(answer["arms"], experiment_stats.summary(totals)):
        arm.update(stats)
    answer["chart"] = chart
    return answer


async def stop(session: AsyncSession, store: DialogStore | None, bot_id: str, body: Any,
               actor: str | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """End the running experiment; with `promote`, publish that version alone (sessions keep).
    (experiment record, publication record or None)."""
    if not isinstance(body, dict) or set(body) - {"promote"}:
        raise Unprocessable("Send {\"promote\": <version>} to publish the winner, or {\"promote\": null} to stop "
                            "without publishing.", details=[{"path": "promote", "message": "a version or null"}])
    promote = body.get("promote")
    await get_bot_row(session, bot_id)
    row = await experiment_rows.running(session, bot_id)
    if row is None:
        raise Conflict(f"No experiment is running on bot '{bot_id}'; there is nothing to stop.",
                       code="no_experiment")
    versions = [a["version"] for a in json.loads(row.arms)]
    if promote is not None and (isinstance(promote, bool) or promote not in versions):
        raise Unprocessable(f"promote must be one of the arms' versions ({', '.join(map(str, versions))}) or null; "
                            f"got {json.dumps(promote)}.", code="invalid_experiment",
                            details=[{"path": "promote", "message": "not an arm of the experiment"}])
    if promote is None:
        if not await experiment_rows.end(session, row, "Stopped without promoting a version.", actor):
            raise _ended(bot_id)
        await session.commit()
        await session.refresh(row)
        return record(row), None
    reason = f"Stopped, and version {promote} was published alone."
    return await _promote(session, store, row, promote, reason, actor, "manual")


def _ended(bot_id: str) -> Conflict:
    return Conflict(f"The experiment on bot '{bot_id}' ended meanwhile; nothing more was changed.",
                    code="no_experiment")


async def _promote(session: AsyncSession, store: DialogStore | None, row: ExperimentRow, version: int, reason: str,
                   actor: str | None, how: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """End the experiment and publish `version` in one transaction (the publish commits both)."""
    if not await experiment_rows.end(session, row, reason, actor, promoted=version, how=how):
        raise _ended(row.bot_id)
    publication = await publishing.publish(session, row.bot_id, row.flow_id, version, "keep", actor, store)
    await session.refresh(row)
    return record(row), publication


LEASE_SECONDS = 30.0


async def _lease(session: AsyncSession, row_id: int, holder: str, now: float) -> bool:
    """Take the experiment's check lease for LEASE_SECONDS unless another replica holds it."""
    taken = await session.execute(
        update(ExperimentRow).where(
            ExperimentRow.id == row_id, ExperimentRow.ended_at.is_(None),
            or_(ExperimentRow.checked_until.is_(None), ExperimentRow.checked_until < now,
                ExperimentRow.checker == holder))
        .values(checker=holder, checked_until=now + LEASE_SECONDS).execution_options(synchronize_session=False))
    await session.commit()
    return changed(taken) == 1


async def auto_check(sessionmaker: Any, store: DialogStore, holder: str) -> list[dict[str, Any]]:
    """One pass of auto-promotion over the running experiments that ask for it; the publications it made."""
    async with sessionmaker() as session:
        ids = (await session.execute(select(ExperimentRow.id).where(
            ExperimentRow.running_bot.is_not(None), ExperimentRow.auto_confidence.is_not(None)))).scalars().all()
    made = []
    for row_id in ids:
        async with sessionmaker() as session:
            now = time.time()
            if not await _lease(session, row_id, holder, now):
                continue
            row = await session.get(ExperimentRow, row_id)
            if row is None or row.ended_at is not None:
                continue
            totals, _ = await counts(store, row, now)
            arms = experiment_stats.summary(totals)
            top = experiment_stats.winner(arms, row.auto_confidence or 1.0, row.auto_min_dialogs or 0)
            if top is None:
                continue
            version = json.loads(row.arms)[top]["version"]
            reason = (f"Version {version} was promoted automatically: its probability to be best reached "
                      f"{arms[top]['probability_best']:.3f} with at least {row.auto_min_dialogs} dialogs in every arm.")
            try:
                _, publication = await _promote(session, store, row, version, reason, AUTO_ACTOR, "auto")
            except AppError as exc:  # ended meanwhile, or the publish refused (the bot requires passing tests)
                await session.rollback()
                if exc.status != 409:
                    log.warning("auto-promotion of version %s on bot %s was refused: %s", version, row.bot_id,
                                exc.message, extra={"event": "experiment", "bot": row.bot_id, "outcome": "refused"})
                continue
            made.append(publication)
    return made
