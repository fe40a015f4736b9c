"""Publishing versions to bots; the history doubles as the rollback list."""
from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import BotRow, FlowRow, PublicationRow, VersionRow, utcnow
from server.errors import N_, Conflict, NotFound, Unprocessable
from server.runtime.stores.ports import Listing
from server.services import audit, experiment_rows, publish_preview
from server.services.bots import get_row as get_bot_row
from server.services.common import iso, raced
from server.services.versions import no_such_version

log = logging.getLogger("botflow.publishing")

SESSION_MODES = ("keep", "migrate", "reset")


def record(row: PublicationRow) -> dict[str, Any]:
    dialogs = None
    if row.dialogs_running is not None:
        dialogs = {"running": row.dialogs_running, "continuing": row.dialogs_continuing,
                   "dropped": row.dialogs_dropped}
    return {"id": row.id, "bot": row.bot_id, "flow": row.flow_id, "version": row.version,
            "sessions": row.sessions, "published_by": row.published_by, "published_at": iso(row.published_at),
            "dialogs": dialogs}


async def publish(session: AsyncSession, bot_id: str, flow_id: str, version: int | None, sessions: str,
                  actor: str | None, store: Listing | None = None) -> dict[str, Any]:
    """Make the bot serve `flow_id` at `version` (None: the latest version); returns the publication record.

    With the runtime's `store`, the record keeps what the publish foresaw for the dialogs running then.
    """
    if sessions not in SESSION_MODES:
        error = Unprocessable(f"sessions must be one of {', '.join(SESSION_MODES)}, not '{sessions}'.",
                              details=[{"path": "sessions", "message": N_("unknown mode")}])
        error.words = (N_("Choose what happens to the running dialogs: keep, migrate or reset."), {})
        raise error
    bot = await get_bot_row(session, bot_id)
    version = await resolve_version(session, flow_id, version)
    # Read now: after a rollback the rows are expired, and the messages name both by their titles.
    flow_row = await session.get(FlowRow, flow_id)
    titles = {"flow": (flow_row.title if flow_row is not None else "") or flow_id, "bot": bot.title or bot_id}
    tested = None
    if bot.require_tests:
        from server.services.flow_tests import check_publish

        tested = (await check_publish(session, flow_id, version))["passed"]
    foreseen = await publish_preview.counted(session, store, bot_id, flow_id, version, sessions)
    now = utcnow()
    try:
        # Every write may meet a flow deleted a moment ago (a foreign-key error at once, not at commit) or,
        # on PostgreSQL, a deadlock with that deletion: either way nothing is published and the caller is told.
        await session.execute(update(BotRow).where(BotRow.id == bot_id)
                              .values(flow_id=flow_id, version=version, updated_at=now)
                              .execution_options(synchronize_session=False))
        row = PublicationRow(bot_id=bot_id, flow_id=flow_id, version=version, sessions=sessions,
                             published_by=actor, published_at=now)
        if foreseen is not None:
            row.dialogs_running, row.dialogs_continuing = foreseen.total, foreseen.continuing
            row.dialogs_dropped = foreseen.dropped_total
        session.add(row)
        # Any running experiment ends here (a promotion has ended its own already, so finds none).
        ended = await experiment_rows.end_on_publish(session, bot_id, flow_id, version, actor)
        foreseen_counts = {} if foreseen is None else {"dialogs_running": foreseen.total,
                                                        "dialogs_dropped": foreseen.dropped_total}
        audit.record(session, actor, "bot.publish", f"bot:{bot_id}", flow=flow_id, version=version,
                     sessions=sessions, **foreseen_counts)
        await session.commit()
    except DBAPIError as exc:
        if not raced(exc):
            raise
        await session.rollback()
        raise Conflict.worded(N_("The flow '%(flow)s' or the bot '%(bot)s' was deleted or changed while publishing; "
                                 "nothing was published. Check that both still exist and publish again."),
                              titles, code="publish_conflict") from None
    answer = record(row)
    if ended:
        answer["experiment_ended"] = True
    if tested is not None:
        answer["tests_passed"] = tested
    return answer


async def resolve_version(session: AsyncSession, flow_id: str, version: int | None) -> int:
    """`version`, or the flow's latest when None; 404 / 422 when there is no such version."""
    if await session.get(FlowRow, flow_id) is None:
        raise NotFound(f"There is no flow '{flow_id}' to publish.", {"flow": flow_id})
    if version is None:
        version = (await session.execute(
            select(func.max(VersionRow.number)).where(VersionRow.flow_id == flow_id))).scalar_one_or_none()
        if version is None:
            raise Unprocessable(f"Flow '{flow_id}' has no versions yet; freeze one with "
                                f"POST /api/flows/{flow_id}/versions first.", code="no_version",
                                details=[{"path": "version", "message": "no version to publish"}])
    exists = (await session.execute(select(VersionRow.id).where(
        VersionRow.flow_id == flow_id, VersionRow.number == version))).first()
    if exists is None:
        raise no_such_version(flow_id, version)
    return version


async def notify_runtime(runtime: Any, publication: dict[str, Any]) -> None:
    """Tell the runtime (when running) so it serves the new version and applies migrate/reset."""
    if runtime is None:
        return
    try:
        await runtime.published(publication["bot"], publication["flow"], publication["version"],
                                publication["sessions"])
    except Exception:  # the publication is committed; replicas still pick it up from the database
        log.exception("runtime could not apply publication %s", publication["id"])


async def publications(session: AsyncSession, bot_id: str, limit: int = 200) -> list[dict[str, Any]]:
    """A bot's publication history, newest first."""
    await get_bot_row(session, bot_id)
    rows = (await session.execute(
        select(PublicationRow).where(PublicationRow.bot_id == bot_id)
        .order_by(PublicationRow.id.desc()).limit(limit))).scalars().all()
    return [record(r) for r in rows]


async def current(session: AsyncSession, bot_id: str) -> dict[str, Any] | None:
    """The bot's newest publication, or None."""
    rows = await publications(session, bot_id, limit=1)
    return rows[0] if rows else None
