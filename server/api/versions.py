"""Versions of a flow: /api/flows/{id}/versions."""
from __future__ import annotations

import json
from typing import Any

from litestar import Controller, Request, Response, get, post

from server.bodies import json_body
from server.body_fields import Spec, fields
from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.services import versions as version_service

FREEZE_FIELDS: Spec = {"note": ((str, type(None)), False)}


class VersionController(Controller):
    """Freeze the draft into an immutable version; list and read versions."""

    path = "/api/flows/{flow_id:str}/versions"
    tags = ["versions"]

    @post("/", guards=[requires_role("publisher")], status_code=201,
          summary="Freeze the draft (201 new version, 200 when an identical version exists)")
    async def freeze(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        body = fields(await json_body(request, required=False), FREEZE_FIELDS)
        note = body.get("note") or ""
        version, created = await version_service.freeze(db_session, flow_id, note, actor(request))
        body_out = {"version": version["version"], "hash": version["hash"], "created": created}
        headers = {"Location": f"/api/flows/{flow_id}/versions/{version['version']}"}
        return Response(body_out, status_code=201 if created else 200, headers=headers)

    @get("/", guards=[requires_role("viewer")], summary="Versions, oldest first")
    async def list_versions(self, flow_id: PathStr, db_session: DbSession) -> list[dict[str, Any]]:
        return await version_service.list_versions(db_session, flow_id)

    @get("/{number:str}", guards=[requires_role("viewer")], summary="A frozen document")
    async def read(self, flow_id: PathStr, number: PathStr, db_session: DbSession) -> Response:
        row = await version_service.get_version(db_session, flow_id, version_service.parse_number(number, flow_id))
        headers = {"ETag": f'"{row.hash}"', "X-Botflow-Version": str(row.number)}
        return Response(json.loads(row.document), headers=headers)

    @get("/{number:str}/validation", guards=[requires_role("viewer")],
         summary="The validation result recorded when the version was frozen")
    async def validation(self, flow_id: PathStr, number: PathStr, db_session: DbSession) -> dict[str, Any]:
        row = await version_service.get_version(db_session, flow_id, version_service.parse_number(number, flow_id))
        return json.loads(row.validation)
