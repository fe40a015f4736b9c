"""The simulator: the live engine on sandbox dialogs stored per (flow, session id), with a movable clock."""
from __future__ import annotations

import json
import math
import time
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from flows.firing import add_state_messages, new_dialog, plan
from flows.model import Flow
from flows.dialog import Dialog, Reply, StepResult, Update, replace
from flows.testing import updates
from flows.testing.reads import live_payloads
from flows.testing.runner import advance, final_data
from server.db.models import SandboxRow
from server.errors import Unprocessable
from server.services.design_work import draft_flow
from server.services.flows import get_draft
from server.services.versions import version_flow


def bad_update(message: str, path: str = "update") -> Unprocessable:
    return Unprocessable(message, code="invalid_update", details=[{"path": path, "message": message}])


def parse_update(raw: Any) -> tuple[Update, float]:
    """A simulator update as an engine Update plus the seconds the clock advances first (422 if malformed)."""
    try:
        return updates.parse_update(raw)
    except updates.BadUpdate as exc:
        raise bad_update(exc.message, exc.path) from None


async def source_flow(session: AsyncSession, flow_id: str, source: Any) -> Flow:
    """The draft or a version of the flow."""
    if source is None or source == "draft":
        document, _ = await get_draft(session, flow_id)
        return draft_flow(document)
    if isinstance(source, bool) or not isinstance(source, int) or not 1 <= source <= 2**31 - 1:
        raise Unprocessable('source must be "draft" or a version number.', code="invalid_source",
                            details=[{"path": "source", "message": 'expected "draft" or a version number'}])
    return await version_flow(session, flow_id, source)


def answer(results: list[StepResult], dialog: Dialog | None) -> dict[str, Any]:
    """The simulator's reply body."""
    fired = next((r for r in reversed(results) if r.transition), results[-1])
    data = final_data(results, dialog)
    return {
        "state": dialog.state if dialog is not None else None,
        "data": data,
        "replies": [reply.to_dict() for r in results for reply in r.replies],
        "fired": {"transition": fired.transition, "reason": " ".join(r.reason for r in results if r.reason)},
        "transitions": [r.transition for r in results if r.transition],
        "outcome": results[-1].outcome,
        "effects": [{"type": e.type, "url": e.url, "data": e.data} for r in results for e in r.effects],
        "version": dialog.version if dialog is not None else None,
        "language": dialog.language if dialog is not None else None,
    }


async def simulate(session: AsyncSession, flow_id: str, sandbox_id: str, raw_update: Any,
                   source: Any) -> dict[str, Any]:
    """One simulator step; the sandbox dialog and its clock persist until the flow's session_ttl passes."""
    update, idle = parse_update(raw_update)
    flow = await source_flow(session, flow_id, source)
    wall = time.time()
    await session.execute(delete(SandboxRow).where(SandboxRow.expires_at < wall))
    row = await session.get(SandboxRow, (flow_id, sandbox_id))
    offset = row.clock_offset if row is not None else 0.0
    dialog = Dialog.from_dict(json.loads(row.state)) if row is not None and row.state else None
    results, now = advance(flow, dialog, update, idle, wall + offset)
    after = results[-1].dialog
    offset = now - wall
    await _save(session, row, flow_id, sandbox_id, after, offset, wall + float(flow.settings.session_ttl))
    body = answer(results, after)
    body["clock"] = round(offset, 3)
    body["now"] = now
    body["session"] = after.to_dict() if after is not None else None
    body["live_payloads"] = live_payloads(flow, after.state if after is not None else None)
    return body


async def _save(session: AsyncSession, row: SandboxRow | None, flow_id: str, sandbox_id: str,
                after: Dialog | None, offset: float, expires: float) -> None:
    state_text = json.dumps(after.to_dict(), ensure_ascii=False) if after is not None else None
    if row is None:
        session.add(SandboxRow(flow_id=flow_id, session_id=sandbox_id, state=state_text,
                               clock_offset=offset, expires_at=expires))
    else:
        row.state, row.clock_offset, row.expires_at = state_text, offset, expires
    try:
        await session.commit()
    except IntegrityError:  # the same sandbox id was created concurrently; last writer wins
        await session.rollback()
        await session.execute(delete(SandboxRow).where(
            SandboxRow.flow_id == flow_id, SandboxRow.session_id == sandbox_id))
        session.add(SandboxRow(flow_id=flow_id, session_id=sandbox_id, state=state_text,
                               clock_offset=offset, expires_at=expires))
        await session.commit()


def bad_dialog(message: str, path: str) -> Unprocessable:
    return Unprocessable(message, code="invalid_dialog", details=[{"path": path, "message": message}])


def dialog_of(flow: Flow, raw: Any, now: float) -> Dialog | None:
    """A dialog to put into the sandbox: a saved step (`session` as the simulator answered it) or a state
    with data (start anywhere); 422 with a sentence otherwise."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("state"), str):
        raise bad_dialog('dialog must be {"state": "<state id>", "data": {...}} or a session the simulator '
                         "answered.", "dialog")
    if not flow.has_state(raw["state"]):
        raise bad_dialog(f"There is no state {raw['state']!r} in this flow.", "dialog.state")
    data = raw.get("data", {})
    if not isinstance(data, dict):
        raise bad_dialog("dialog.data must be an object.", "dialog.data")
    language = raw.get("language")
    if language is not None and (not isinstance(language, str) or language not in flow.languages):
        listed = ", ".join(flow.languages) or "none"
        raise bad_dialog(f"dialog.language must be one of the flow's languages ({listed}).", "dialog.language")
    if "updated_at" not in raw:
        started = new_dialog(flow, raw["state"], dict(data), now)
        return replace(started, language=language or started.language)
    history = raw.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, str) for h in history) or len(history) > 1000:
        raise bad_dialog("dialog.history must be a list of state ids.", "dialog.history")
    for name in ("started_at", "updated_at", "entered_at", "attempts"):
        value = raw.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad_dialog(f"dialog.{name} must be a number, as the simulator answered it.", f"dialog.{name}")
    try:
        dialog = Dialog.from_dict({**raw, "flow": flow.id})
    except (TypeError, ValueError, KeyError, OverflowError):
        raise bad_dialog("dialog is not a session the simulator answered.", "dialog") from None
    return dialog


async def restore(session: AsyncSession, flow_id: str, sandbox_id: str, raw_dialog: Any, at: Any,
                  source: Any) -> dict[str, Any]:
    """Put a dialog into the sandbox: step back to an earlier step, or start anywhere with chosen data."""
    flow = await source_flow(session, flow_id, source)
    wall = time.time()
    row = await session.get(SandboxRow, (flow_id, sandbox_id))
    if at is None:
        now = wall + (row.clock_offset if row is not None else 0.0)
    elif isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) or \
            abs(at - wall) > updates.MAX_IDLE * 2:
        raise bad_dialog("now must be the sandbox time of the step (the simulator's \"now\").", "now")
    else:
        now = float(at)
    dialog = dialog_of(flow, raw_dialog, now)
    replies: list[dict[str, Any]] = []
    if dialog is not None and "updated_at" not in raw_dialog:
        out: list[Reply] = []
        add_state_messages(out, plan(flow).states[dialog.state], dialog.data)
        replies = [r.to_dict() for r in out]
    await _save(session, row, flow_id, sandbox_id, dialog, now - wall, wall + float(flow.settings.session_ttl))
    return {"state": dialog.state if dialog is not None else None, "data": dialog.data if dialog else {},
            "replies": replies, "fired": {"transition": None, "reason": "The sandbox dialog was set."},
            "now": now, "clock": round(now - wall, 3), "session": dialog.to_dict() if dialog else None,
            "live_payloads": live_payloads(flow, dialog.state if dialog is not None else None)}


async def reset(session: AsyncSession, flow_id: str, sandbox_id: str) -> None:
    """Forget a sandbox dialog and its clock."""
    await session.execute(delete(SandboxRow).where(
        SandboxRow.flow_id == flow_id, SandboxRow.session_id == sandbox_id))
    await session.commit()


async def sandboxes(session: AsyncSession, flow_id: str) -> list[str]:
    rows = await session.execute(select(SandboxRow.session_id).where(SandboxRow.flow_id == flow_id))
    return list(rows.scalars().all())
