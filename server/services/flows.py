"""Flows and their drafts: create, read, list, replace with a revision check, delete."""
from __future__ import annotations

import json
import secrets
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from flows.errors import FlowFormatError
from flows.load import load
from flows.model import Flow
from server.db.models import BotRow, FlowRow, VersionRow, utcnow
from server.errors import N_, Conflict, Forbidden, NotFound, PreconditionFailed, Unprocessable
from server.services import audit
from server.services.common import is_slug, iso


def new_revision(previous: str | None = None) -> str:
    """An opaque revision: a counter (for people reading logs) and randomness (so two saves never collide)."""
    count = 0
    if previous and previous[:1] == "r" and "-" in previous:
        head = previous[1:].split("-", 1)[0]
        count = int(head) if head.isdigit() else 0
    return f"r{count + 1}-{secrets.token_hex(4)}"


def to_text(document: dict[str, Any]) -> str:
    """A document as the JSON text we store; refuses text that cannot be stored as UTF-8."""
    text = json.dumps(document, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unprocessable("The document contains an unpaired surrogate (\\ud800-\\udfff); "
                            "send proper Unicode text.", code="invalid_document",
                            details=[{"path": "", "message": "unpaired surrogate in a string"}]) from None
    return text


# BOTFLOW_ACTION_ALLOW of the running app (create_app sets it): every way a draft is saved applies one list.
_action_allow: tuple[str, ...] = ()


def set_action_allow(entries: tuple[str, ...]) -> None:
    """The internal hosts and networks webhook actions may name in documents saved from now on."""
    global _action_allow
    _action_allow = tuple(entries)


def action_allow() -> tuple[str, ...]:
    return _action_allow


def check_document(raw: Any) -> Flow:
    """A parsed body as a Flow; FlowFormatError (422 with one detail per problem) otherwise."""
    try:
        return load(raw, allow=_action_allow)
    except RecursionError:
        raise FlowFormatError("The document is nested too deeply to read.",
                              [{"path": "", "message": "nested too deeply"}]) from None


def title_of(flow: Flow) -> str:
    return (flow.title or "").replace("\x00", "")[:500]


async def get_row(session: AsyncSession, flow_id: str) -> FlowRow:
    # An id that cannot be a slug cannot exist; answering before the query keeps odd bytes away from SQL.
    row = await session.get(FlowRow, flow_id) if is_slug(flow_id) else None
    if row is None:
        raise NotFound(f"There is no flow '{flow_id}'; GET /api/flows lists the flows.")
    return row


async def get_draft(session: AsyncSession, flow_id: str) -> tuple[dict[str, Any], str]:
    """The draft document and its revision."""
    row = await get_row(session, flow_id)
    return json.loads(row.document), row.revision


def draft_flow(document: dict[str, Any]) -> Flow:
    """A stored draft as a Flow (stored drafts always passed the loader; their action hosts were checked then)."""
    try:
        return load(document, allow=None)
    except RecursionError:
        raise FlowFormatError("The document is nested too deeply to read.",
                              [{"path": "", "message": "nested too deeply"}]) from None


async def create_flow(session: AsyncSession, raw: Any, actor: str | None) -> FlowRow:
    """A new flow whose draft is `raw`; 409 if the id is taken."""
    flow = check_document(raw)
    text = to_text(flow.document)
    if await session.get(FlowRow, flow.id) is not None:
        raise Conflict(f"A flow with id '{flow.id}' already exists; PUT /api/flows/{flow.id} replaces its draft.",
                       code="flow_exists")
    now = utcnow()
    row = FlowRow(id=flow.id, title=title_of(flow), document=text, revision=new_revision(), version_seq=0,
                  created_at=now, updated_at=now, updated_by=actor)
    session.add(row)
    audit.record(session, actor, "flow.create", f"flow:{flow.id}", revision=row.revision)
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise Conflict(f"A flow with id '{flow.id}' already exists.", code="flow_exists") from None
    return row


async def save_draft(session: AsyncSession, flow_id: str, raw: Any, if_match: list[str] | None,
                     actor: str | None) -> str:
    """Replace the draft if its revision is one of `if_match` (None = any); returns the new revision."""
    flow = check_document(raw)
    if flow.id != flow_id:
        raise Unprocessable(f"The document's id '{flow.id}' differs from the flow '{flow_id}' in the URL; "
                            "ids cannot be changed, create a new flow instead.", code="id_mismatch",
                            details=[{"path": "id", "message": f"must be '{flow_id}'"}])
    text = to_text(flow.document)
    current = await get_row(session, flow_id)
    previous = current.revision
    revision = new_revision(previous)
    # The revision check is the UPDATE's own WHERE, so check-and-write is one atomic statement: of two
    # saves from the same revision exactly one matches the row, the other changes nothing.
    statement = update(FlowRow).where(FlowRow.id == flow_id)
    if if_match is not None:
        statement = statement.where(FlowRow.revision.in_(if_match or [""]))
    result = await session.execute(
        statement.values(document=text, title=title_of(flow), revision=revision, updated_at=utcnow(),
                         updated_by=actor).execution_options(synchronize_session=False))
    if result.rowcount != 1:
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
                      if_match: list[str] | None = None) -> None:
    """Delete a flow with its versions; 409 while a bot serves it. Flows with versions need a publisher."""
    from server.auth import RANK

    row = await get_row(session, flow_id)
    if if_match is not None and row.revision not in if_match:
        raise PreconditionFailed(f"The draft changed; it is now {row.revision}.")
    bots = await serving_bots(session, flow_id)
    if bots:
        raise Conflict.worded(N_("The flow '%(flow)s' is served by %(bots)s; publish another flow to those bots "
                                 "first."), {"flow": flow_id, "bots": ", ".join(bots)}, code="flow_in_use",
                              details=[{"bot": b, "message": f"the bot {b} serves this flow"} for b in bots])
    if row.version_seq > 0 and RANK.get(actor_role or "", -1) < RANK["publisher"]:
        raise Forbidden("Deleting a flow that has versions needs the publisher role or above.")
    await session.execute(delete(VersionRow).where(VersionRow.flow_id == flow_id))
    await session.execute(delete(FlowRow).where(FlowRow.id == flow_id))
    audit.record(session, actor, "flow.delete", f"flow:{flow_id}", revision=row.revision)
    try:
        await session.commit()
    except IntegrityError:  # a bot started serving it between our check and the delete
        await session.rollback()
        raise Conflict.worded(N_("The flow '%(flow)s' is served by a bot; publish another flow there first."),
                              {"flow": flow_id}, code="flow_in_use") from None
