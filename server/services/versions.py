"""Immutable versions: freeze a draft, list, read, diff."""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from flows.model import Flow
from server.db.models import FlowRow, VersionRow, utcnow
from server.errors import N_, BadRequest, NotFound, Unprocessable
from server import design_pool
from server.services import audit, design_work
from server.services.common import MAX_INT, iso
from server.services.design_work import draft_flow
from server.services.flows import get_row

MAX_NOTE = 2000  # a sentence or two; the list shows every note in full


def summary(row: VersionRow) -> dict[str, Any]:
    return {"version": row.number, "hash": row.hash, "note": row.note, "author": row.author,
            "created_at": iso(row.created_at)}


async def freeze(session: AsyncSession, flow_id: str, note: str, actor: str | None) -> tuple[dict[str, Any], bool]:
    """Freeze the draft as the next version; (version summary, created). An unchanged draft returns its version."""
    if len(note) > MAX_NOTE:
        raise Unprocessable.worded(N_("The note is %(n)s characters long; keep it under %(max)s."),
                                   {"n": len(note), "max": MAX_NOTE},
                                   details=[{"path": "note", "message": f"at most {MAX_NOTE} characters",
                                             "code": "too_long", "params": {"max": MAX_NOTE}}])
    # Bumping the counter first takes the flow's row lock, so concurrent freezes of one flow queue up here
    # and each then sees the versions the others committed.
    seq = (await session.execute(
        update(FlowRow).where(FlowRow.id == flow_id).values(version_seq=FlowRow.version_seq + 1)
        .returning(FlowRow.version_seq, FlowRow.document)
    )).first()
    if seq is None:
        await session.rollback()
        await get_row(session, flow_id)  # raises the 404
        raise NotFound(f"There is no flow '{flow_id}'.", {"flow": flow_id})
    number, text = seq
    digest, result = await design_pool.run(design_work.frozen, text)
    existing = (await session.execute(
        select(VersionRow).where(VersionRow.flow_id == flow_id, VersionRow.hash == digest)
        .order_by(VersionRow.number.desc()).limit(1))).scalar_one_or_none()
    if existing is not None:
        found = summary(existing)  # read before the rollback expires the row
        await session.rollback()
        return found, False
    if not result["ok"]:
        await session.rollback()
        errors = sum(1 for issue in result["issues"] if issue["severity"] == "error")
        raise Unprocessable(
            f"The draft has {errors} validation error{'s' if errors != 1 else ''}; fix "
            f"{'them' if errors != 1 else 'it'} before freezing a version (details list every issue).",
            code="validation_failed", details=result["issues"])
    row = VersionRow(flow_id=flow_id, number=number, document=text, hash=digest, note=note, author=actor,
                     created_at=utcnow(), validation=json.dumps(result, ensure_ascii=False))
    session.add(row)
    audit.record(session, actor, "version.create", f"flow:{flow_id}", version=number, hash=digest)
    await session.commit()
    return summary(row), True


async def list_versions(session: AsyncSession, flow_id: str) -> list[dict[str, Any]]:
    """Versions of a flow, oldest first."""
    await get_row(session, flow_id)
    rows = (await session.execute(
        select(VersionRow).where(VersionRow.flow_id == flow_id).order_by(VersionRow.number))).scalars().all()
    return [summary(r) for r in rows]


def parse_number(value: Any, flow_id: str) -> int:
    """A version number from a path or query; 404 for anything that cannot be one."""
    text = str(value).strip()
    # The length first: int() refuses past 4,300 digits, and no version number is longer than MAX_INT.
    if (not text.isascii() or not text.isdigit() or len(text.lstrip("0")) > len(str(MAX_INT))
            or not 1 <= int(text) <= MAX_INT):
        raise NotFound.worded(N_("There is no version '%(value)s' of flow '%(flow)s'; versions are numbered from 1."),
                              {"value": value, "flow": flow_id})
    return int(text)


async def get_version(session: AsyncSession, flow_id: str, number: int) -> VersionRow:
    row = (await session.execute(
        select(VersionRow).where(VersionRow.flow_id == flow_id, VersionRow.number == number))).scalar_one_or_none()
    if row is None:
        await get_row(session, flow_id)
        raise no_such_version(flow_id, number)
    return row


def no_such_version(flow_id: str, number: int) -> NotFound:
    """404 for a version number the flow does not have; the pages say it without the API's pointer."""
    error = NotFound(f"Flow '{flow_id}' has no version {number}; GET /api/flows/{flow_id}/versions lists them.")
    error.words = (N_("Flow %(flow)s has no version %(n)s."), {"flow": flow_id, "n": number})
    return error


async def version_flow(session: AsyncSession, flow_id: str, number: int) -> Flow:
    """A frozen version as a Flow with `version` set."""
    row = await get_version(session, flow_id, number)
    flow = draft_flow(json.loads(row.document))
    flow.version = number
    return flow


async def document_at(session: AsyncSession, flow_id: str, ref: str | None) -> dict[str, Any]:
    """The document at a reference: "draft" or a version number."""
    return json.loads(await text_at(session, flow_id, ref))


async def text_at(session: AsyncSession, flow_id: str, ref: str | None) -> str:
    """The stored text of the document at a reference: "draft" or a version number."""
    if ref is None or ref == "":
        raise BadRequest.worded(N_("Give both 'from' and 'to': a version number or 'draft'."), {})
    if ref == "draft":
        return (await get_row(session, flow_id)).document
    text = ref.strip()
    if not text.isascii() or not text.isdigit():
        raise BadRequest.worded(N_("'%(ref)s' is not a version reference; use a version number (1, 2, ...) or 'draft'."),
                                {"ref": ref})
    return (await get_version(session, flow_id, parse_number(text, flow_id))).document


async def diff_refs(session: AsyncSession, flow_id: str, old: str | None, new: str | None) -> dict[str, Any]:
    """Semantic diff between two references of one flow."""
    await get_row(session, flow_id)
    old_text = await text_at(session, flow_id, old)
    new_text = await text_at(session, flow_id, new)
    return {"from": old, "to": new, **await design_pool.run(design_work.difference, old_text, new_text)}
