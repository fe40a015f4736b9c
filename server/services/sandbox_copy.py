"""A live dialog copied into the simulator's sandbox, and a sandbox dialog read back (to open the editor on it)."""
from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any

from sqlalchemy import delete, func
from sqlalchemy.ext.asyncio import AsyncSession

from flows.dialog import replace
from flows.firing import new_dialog
from flows.testing.reads import live_payloads
from server.db.changed import changed
from server.db.models import SandboxRow
from server.errors import NotFound, Unprocessable
from server.services.sandbox import _save, source_flow


def copies_of(bot_id: str, user_id: str) -> str:
    """The start of the id of every sandbox copy of this user's dialogs with this bot (erasure finds them by it)."""
    # A hash, not the ids: a sandbox id shows in the editor's address.
    return "live-" + hashlib.blake2b(f"{bot_id}\x00{user_id}".encode(), digest_size=8).hexdigest() + "-"


async def erase_copies(db: AsyncSession, bot_id: str, user_id: str) -> int:
    """Delete every sandbox copy of the user's dialogs with the bot, in the caller's transaction; how many."""
    prefix = copies_of(bot_id, user_id)
    result = await db.execute(delete(SandboxRow).where(
        func.substr(SandboxRow.session_id, 1, len(prefix)) == prefix))
    return changed(result)


async def copy_live(db: AsyncSession, snapshot: dict[str, Any], bot_id: str, user_id: str) -> tuple[str, int]:
    """A new sandbox dialog with the snapshot's state, data and history, on the version it ran;
    returns (sandbox id, version). The copy's clocks start now: a reminder due in the live dialog is not."""
    flow_id, version, state = snapshot.get("flow"), snapshot.get("version"), snapshot.get("state")
    if not isinstance(flow_id, str) or not isinstance(version, int) or not isinstance(state, str):
        raise Unprocessable("This point of the dialog names no flow version and state to simulate.",
                            code="invalid_dialog")
    flow = await source_flow(db, flow_id, version)
    if not flow.has_state(state):
        raise Unprocessable(f"Version {version} of {flow_id} has no state {state!r}.", code="invalid_dialog")
    now = time.time()
    dialog = replace(new_dialog(flow, state, dict(snapshot.get("data") or {}), now),
                     history=[s for s in snapshot.get("history") or [] if isinstance(s, str) and flow.has_state(s)])
    sandbox_id = copies_of(bot_id, user_id) + secrets.token_hex(8)
    await _save(db, None, flow_id, sandbox_id, dialog, 0.0, now + float(flow.settings.session_ttl))
    return sandbox_id, version


async def read(db: AsyncSession, flow_id: str, sandbox_id: str, source: Any) -> dict[str, Any]:
    """The sandbox dialog as the simulator shows a step: state, data, session, now, clock, live payloads."""
    row = await db.get(SandboxRow, (flow_id, sandbox_id))
    if row is None or row.expires_at < time.time():
        raise NotFound(f"There is no sandbox dialog {sandbox_id!r} of flow {flow_id!r}; it may have expired.")
    flow = await source_flow(db, flow_id, source)
    dialog = json.loads(row.state) if row.state else None
    now = time.time() + row.clock_offset
    state = dialog["state"] if dialog is not None else None
    return {"state": state, "data": dialog.get("data", {}) if dialog else {}, "replies": [],
            "fired": {"transition": None, "reason": ""}, "now": now, "clock": round(row.clock_offset, 3),
            "session": dialog, "live_payloads": live_payloads(flow, state)}
