"""Flows and drafts: /api/flows."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, delete, get, post, put

from flows.export import EXPORT_FORMATS
from flows.limits import MAX_DOCUMENT_BYTES
from server import design_pool
from server.bodies import document_body, if_match, read_body
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.errors import BadRequest, PreconditionRequired
from server.services import design_work
from server.services import flows as flow_service
from server.services import versions as version_service
from server.runtime.lifecycle import runtime_if_started


def etag(revision: str) -> dict[str, str]:
    return {"ETag": f'"{revision}"'}


def actor(request: Request) -> str | None:
    user = request.scope.get("user")
    return user.username if user else None


class FlowController(Controller):
    """Create, list, read, replace and delete flows; validation, diff and export of a flow."""

    path = "/api/flows"
    tags = ["flows"]

    @post("/", guards=[requires_role("editor")], summary="Create a flow from a JSON or YAML document",
          status_code=201, request_max_body_size=MAX_DOCUMENT_BYTES)
    async def create(self, request: Request, db_session: DbSession) -> Response:
        raw = await document_body(request)
        row = await flow_service.create_flow(db_session, raw, actor(request))
        headers = {**etag(row.revision), "Location": f"/api/flows/{row.id}"}
        return Response({"id": row.id, "revision": row.revision}, status_code=201, headers=headers)

    @get("/", guards=[requires_role("viewer")], summary="List flows with revision, latest version, bots")
    async def list_flows(self, db_session: DbSession) -> list[dict[str, Any]]:
        return await flow_service.list_flows(db_session)

    @get("/{flow_id:str}", guards=[requires_role("viewer")], summary="The draft document, with its ETag")
    async def read(self, flow_id: PathStr, db_session: DbSession) -> Response:
        document, revision = await flow_service.get_draft(db_session, flow_id)
        return Response(document, headers=etag(revision))

    @put("/{flow_id:str}", guards=[requires_role("editor")], request_max_body_size=MAX_DOCUMENT_BYTES,
         summary="Replace the draft; needs If-Match with the current revision")
    async def replace(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        await read_body(request)  # before the database: a slowly sent body must not hold a connection
        await flow_service.get_row(db_session, flow_id)
        if not request.headers.get("if-match", "").strip():  # an empty If-Match names no revision either
            raise PreconditionRequired(
                f'Send If-Match: "<revision>" with the revision you edited (the ETag of GET /api/flows/{flow_id}); '
                "this keeps two editors from overwriting each other.")
        expected = if_match(request)
        raw = await document_body(request)
        revision = await flow_service.save_draft(db_session, flow_id, raw, expected, actor(request))
        return Response({"id": flow_id, "revision": revision}, headers=etag(revision))

    @delete("/{flow_id:str}", guards=[requires_role("editor")], status_code=204,
            summary="Delete a flow and its versions (409 while a bot serves it)")
    async def remove(self, flow_id: PathStr, request: Request, db_session: DbSession) -> None:
        user = request.scope.get("user")
        ended = await flow_service.delete_flow(db_session, flow_id, user.role if user else None, actor(request),
                                               if_match(request))
        runtime = runtime_if_started(request.app)
        if runtime is not None:
            for bot_id in ended:  # their experiments ended: serve the publication
                await runtime.bot_changed(bot_id)

    @get("/{flow_id:str}/validation", guards=[requires_role("viewer")], summary="Validation issues of the draft")
    async def validation(self, flow_id: PathStr, db_session: DbSession) -> dict[str, Any]:
        row = await flow_service.get_row(db_session, flow_id)
        return await design_pool.run(design_work.validation_of, row.document)

    @get("/{flow_id:str}/diff", guards=[requires_role("viewer")],
         summary="Semantic diff between two versions or a version and the draft")
    async def diff(self, flow_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        params = request.query_params
        return await version_service.diff_refs(db_session, flow_id, params.get("from"), params.get("to"))

    @get("/{flow_id:str}/export", guards=[requires_role("viewer")],
         summary="Export the draft (or ?version=n) as json, yaml, mermaid, dot or scxml")
    async def export(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        fmt = request.query_params.get("format") or "json"
        if fmt not in EXPORT_FORMATS:
            raise BadRequest(f"Unknown export format '{fmt}'; use one of {', '.join(EXPORT_FORMATS)}.",
                             code="unknown_format")
        version = request.query_params.get("version")
        number = None if version in (None, "", "draft") else version_service.parse_number(version, flow_id)
        stored = await version_service.text_at(db_session, flow_id, "draft" if number is None else str(number))
        text, media_type = await design_pool.run(design_work.exported, stored, fmt, number)
        suffix = {"json": "json", "yaml": "yaml", "mermaid": "mmd", "dot": "dot", "scxml": "scxml"}[fmt]
        name = f"{flow_id}{'-v' + str(number) if number else ''}.{suffix}"
        return Response(text.encode("utf-8"), media_type=media_type,
                        headers={"Content-Disposition": f'inline; filename="{name}"'})
