"""Flows and their drafts: create, read, list, replace with a revision check, delete."""
from __future__ import annotations

import json
import secrets
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server import design_pool
from server.db.changed import changed
from server.db.models import BotRow, FlowRow, VersionRow, utcnow
from server.errors import N_, Conflict, Forbidden, NotFound, PreconditionFailed, Unprocessable
from server.services import audit, design_work, experiment_rows
from server.services.design_work import Checked
from server.services.common import is_slug, iso, raced


def new_revision(previous: str | None = None) -> str:
    """An opaque revision: a counter (for people reading logs) and randomness (so two saves never collide)."""
    count = 0
    if previous and previous[:1] == "r" and "-" in previous:
        head = previous[1:].split("-", 1)[0]
        count = int(head) if head.isdigit() else 0
    return f"r{count + 1}-{secrets.token_hex(4)}"


# BOTFLOW_ACTION_ALLOW of the running app (create_app sets it): every way a draft is saved applies one list.
_action_allow: tuple[str, ...] = ()


def set_action_allow(entries: tuple[str, ...]) -> None:
    """The internal hosts and networks webhook actions may name in documents saved from now on."""
    global _action_allow
    _action_allow = tuple(entries)


def action_allow() -> tuple[str, ...]:
    return _action_allow


async def get_row(session: AsyncSession, flow_id: str) -> FlowRow:
    # An id that cannot be a slug cannot exist; answering before the query keeps odd bytes away from SQL.
    row = await session.get(FlowRow, flow_id) if is_slug(flow_id) else None
    if row is None:
        raise NotFound(f"There is no flow '{flow_id}'; GET /api/flows lists the flows.", {"flow": flow_id})
    return row


async def get_draft(session: AsyncSession, flow_id: str) -> tuple[dict[str, Any], str]:
    """The draft document and its revision."""
    row = await get_row(session, flow_id)
    return json.loads(row.document), row.revision


async def checked(raw: Any) -> Checked:
    """A body or parsed document checked by the loader, in a design worker."""
    return await design_pool.run(design_work.checked, raw, _action_allow)


async def create_flow(session: AsyncSession, raw: Any, actor: str | None) -> FlowRow:
    """A new flow whose draft is `raw` (a parsed document or a `RawDocument`); 409 if the id is taken."""
    flow = await checked(raw)
    if await session.get(FlowRow, flow.id) is not None:
        raise Conflict(f"A flow with id '{flow.id}' already exists; PUT /api/flows/{flow.id} replaces its draft.",
                       code="flow_exists", params={"flow": flow.id})
    now = utcnow()
    row = FlowRow(id=flow.id, title=flow.title, document=flow.text, revision=new_revision(), version_seq=0,
                  created_at=now, updated_at=now, updated_by=actor)
    session.add(row)
    audit.record(session, actor, "flow.create", f"flow:{flow.id}", revision=row.revision)
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise Conflict(f"A flow with id '{flow.id}' already exists.", code="flow_exists",
                       params={"flow": flow.id}) from None
    return row


async def save_draft(session: AsyncSession, flow_id: str, raw: Any, if_match: list[str] | None,
                     actor: str | None) -> str:
    """Replace the draft if its revision is one of `if_match` (None = any); returns the new revision."""
    return await store_draft(session, flow_id, await checked(raw), if_match, actor)


async def store_draft(session: AsyncSession, flow_id: str, flow: Checked, if_match: list[str] | None,
                      actor: str | None) -> str:
    """`save_draft` of a document the loader already passed (the side panel loads its edit once)."""
    if flow.id != flow_id:
        raise Unprocessable(f"The document's id '{flow.id}' differs from the flow '{flow_id}' in the URL; "
                            "ids cannot be changed, create a new flow instead.", code="id_mismatch",
                            details=[{"path": "id", "message": f"must be '{flow_id}'"}])
    current = await get_row(session, flow_id)
    previous = current.revision
    revision = new_revision(previous)
    # The revision check is the UPDATE's own WHERE, so check-and-write is one atomic statement: of two
    # saves from the same revision exactly one matches the row, the other changes nothing.
    statement = update(FlowRow).where(FlowRow.id == flow_id)
    if if_match is not None:
        statement = statement.where(FlowRow.revision.in_(if_match or [""]))
    result = await session.execute(
        statement.values(document=flow.text, title=flow.title, revision=revision, updated_at=utcnow(),
                         updated_by=actor).execution_options(synchronize_session=False))
    if changed(result) != 1:
        await session.rollback()
        session.expire_all()
        now = await session.get(FlowRow, flow_id)
        if now is None:
            raise NotFound(f"The flow '{flow_id}' was deleted meanwhile.")
        raise PreconditionFailed(f"The draft changed since revision {', '.join(if_match or ['(none)'])}; "
                                 f"it is now {now.revision}. Reload it, reapply your change and send the "
                                 "new revision in If-Match.")
    audit.record(session, actor, "flow.save", f"flow:{flow_id}", revision=revision, previous=previous)
    await session.commit()
    return revision


async def list_flows(session: AsyncSession) -> list[dict[str, Any]]:
    """Every flow: id, title, revision, latest version, the bots serving it."""
    latest = dict((await session.execute(
        select(VersionRow.flow_id, func.max(VersionRow.number)).group_by(VersionRow.flow_id))).all())
    served: dict[str, list[str]] = {}
    for bot_id, flow_id in (await session.execute(
            select(BotRow.id, BotRow.flow_id).where(BotRow.flow_id.is_not(None)).order_by(BotRow.id))).all():
        assert flow_id is not None  # the query keeps only bots that serve a flow
        served.setdefault(flow_id, []).append(bot_id)
    rows = (await session.execute(select(FlowRow).order_by(FlowRow.id))).scalars().all()
    return [
        {"id": r.id, "title": r.title, "revision": r.revision, "latest_version": latest.get(r.id),
         "published_to": served.get(r.id, []), "updated_at": iso(r.updated_at), "updated_by": r.updated_by}
        for r in rows
    ]


async def titles(session: AsyncSession) -> dict[str, str]:
    """Each flow's title by id (flows without one are left out), for pages that name flows to people."""
    return {flow_id: title for flow_id, title in (await session.execute(select(FlowRow.id, FlowRow.title))).all()
            if title}


async def serving_bots(session: AsyncSession, flow_id: str) -> list[str]:
    return list((await session.execute(
        select(BotRow.id).where(BotRow.flow_id == flow_id).order_by(BotRow.id))).scalars().all())


async def delete_flow(session: AsyncSession, flow_id: str, actor_role: str | None, actor: str | None,
                      if_match: list[str] | None = None) -> list[str]:
    """Delete a flow with its versions; 409 while a bot serves it. Flows with versions need a publisher.

    Experiments between its versions end; the bots whose did are returned (their runtime must hear of it)."""
    from server.auth import RANK

    row = await get_row(session, flow_id)
    title = row.title or flow_id  # read before a rollback expires the row
    if if_match is not None and row.revision not in if_match:
        raise PreconditionFailed(f"The draft changed; it is now {row.revision}.")
    bots = await serving_bots(session, flow_id)
    if bots:
        titles = dict((await session.execute(select(BotRow.id, BotRow.title).where(BotRow.id.in_(bots)))).all())
        named = [titles.get(b) or b for b in bots]
        error = Conflict.worded(N_("The flow '%(flow)s' is served by %(bots)s; publish another flow to those bots "
                                   "first."), {"flow": title, "bots": ", ".join(named)},
                                code="flow_in_use",
                                details=[{"bot": b, "message": f"the bot {b} serves this flow"} for b in bots])
        # The API's sentence names the ids beside the titles (scripts act on ids); pages show the titles alone.
        error.message = (f"The flow '{title}' ({flow_id}) is served by "
                         f"{', '.join(f'{n} ({b})' for b, n in zip(bots, named))}; publish another flow to those bots first.")
        raise error
    if row.version_seq > 0 and RANK.get(actor_role or "", -1) < RANK["publisher"]:
        raise Forbidden("Deleting a flow that has versions needs the publisher role or above.")
    try:
        ended = await experiment_rows.end_for_flow(session, flow_id, actor)
        await session.execute(delete(VersionRow).where(VersionRow.flow_id == flow_id))
        await session.execute(delete(FlowRow).where(FlowRow.id == flow_id))
        audit.record(session, actor, "flow.delete", f"flow:{flow_id}", revision=row.revision)
        await session.commit()
    except DBAPIError as exc:  # a bot started serving it between our check and the delete
        if not raced(exc):
            raise
        await session.rollback()
        raise Conflict.worded(N_("The flow '%(flow)s' is served by a bot; publish another flow there first."),
                              {"flow": title}, code="flow_in_use") from None
    return ended
