"""The simulator: /api/flows/{id}/simulate."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, post, put

from server.bodies import json_body
from server.body_fields import Spec, clean_text, fields
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from flows.testing.reads import keys_read
from server.errors import NotFound, Unprocessable
from server.services import sandbox, sandbox_copy
from server.services.flows import get_row

MAX_SESSION_ID = 128


def session_id(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_SESSION_ID or not clean_text(value):
        raise Unprocessable(f"session must be a string of 1-{MAX_SESSION_ID} characters naming the sandbox dialog.",
                            details=[{"path": "session", "message": "expected a non-empty string"}])
    return value


SIMULATE_FIELDS: Spec = {"session": (str, True), "update": (dict, True), "source": ((str, int, type(None)), False)}


class SimulateController(Controller):
    """Drive a sandbox dialog with the live engine; never touches live dialogs or the messenger."""

    path = "/api/flows/{flow_id:str}/simulate"
    tags = ["simulator"]

    @post("/", guards=[requires_role("editor")], status_code=200,
          summary="One update to a sandbox dialog of the draft or a version")
    async def simulate(self, flow_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request), SIMULATE_FIELDS)
        await get_row(db_session, flow_id)
        return await sandbox.simulate(db_session, flow_id, session_id(body["session"]), body["update"],
                                      body.get("source"))

    @put("/{session:str}", guards=[requires_role("editor")],
         summary="Set a sandbox dialog: step back to an earlier step, or start anywhere with chosen data")
    async def restore(self, flow_id: PathStr, session: PathStr, request: Request,
                      db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request), {
            "dialog": ((dict, type(None)), True), "now": ((int, float, type(None)), False),
            "source": ((str, int, type(None)), False)})
        await get_row(db_session, flow_id)
        return await sandbox.restore(db_session, flow_id, session_id(session), body["dialog"], body.get("now"),
                                     body.get("source"))

    @get("/reads", guards=[requires_role("viewer")],
         summary="The data keys a state's texts and conditions read (to start a dialog there)")
    async def reads(self, flow_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        await get_row(db_session, flow_id)
        state = request.query_params.get("state") or ""
        flow = await sandbox.source_flow(db_session, flow_id, None)
        if not flow.has_state(state):
            raise NotFound(f"There is no state '{state}' in the draft of '{flow_id}'.")
        return {"state": state, "keys": keys_read(flow, state)}

    @get("/{session:str}", guards=[requires_role("editor")],
         summary="A sandbox dialog as it stands (the editor opens a copied live dialog with it)")
    async def read(self, flow_id: PathStr, session: PathStr, request: Request,
                   db_session: DbSession) -> dict[str, Any]:
        await get_row(db_session, flow_id)
        raw = request.query_params.get("source") or "draft"
        if raw != "draft" and (not raw.isascii() or not raw.isdigit()):
            raise Unprocessable('source must be "draft" or a version number.', code="invalid_source")
        return await sandbox_copy.read(db_session, flow_id, session_id(session),
                                       raw if raw == "draft" else int(raw))

    @delete("/{session:str}", guards=[requires_role("editor")], status_code=204,
            summary="Forget a sandbox dialog and its clock")
    async def reset(self, flow_id: PathStr, session: PathStr, db_session: DbSession) -> None:
        await get_row(db_session, flow_id)
        await sandbox.reset(db_session, flow_id, session_id(session))
