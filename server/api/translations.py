"""A flow's translations: /api/flows/{id}/translations (the table, one cell) and gettext files per language."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, patch, put

from server.api.flows import actor, etag
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.bodies import if_match, json_body, read_body
from server.body_fields import Spec, fields
from server.services import flows as flow_service
from server.services import translations as service

CELL_FIELDS: Spec = {"path": (str, True), "language": (str, True), "text": (str, True)}


def _code(name: str) -> str:
    """`en.po` -> `en`; the route's file name names the language."""
    return name.removesuffix(".po")


class TranslationController(Controller):
    """Read and edit the draft's texts language by language; export and import gettext .po files."""

    path = "/api/flows/{flow_id:str}/translations"
    tags = ["translations"]

    @get("/", guards=[requires_role("viewer")], summary="Every text of the draft in every language of the flow")
    async def read(self, flow_id: PathStr, db_session: DbSession) -> Response:
        document, revision = await flow_service.get_draft(db_session, flow_id)
        return Response(service.table(document), headers=etag(revision))

    @patch("/", guards=[requires_role("editor")],
           summary="Set one text in one language (an empty text removes that translation)")
    async def edit(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        body = fields(await json_body(request), CELL_FIELDS)
        document, revision = await flow_service.get_draft(db_session, flow_id)
        edited = service.edit_cell(document, body["path"], body["language"], body["text"])
        expected = if_match(request) or [revision]
        new_revision = await flow_service.save_draft(db_session, flow_id, edited, expected, actor(request))
        return Response({"id": flow_id, "revision": new_revision}, headers=etag(new_revision))

    @get("/{name:str}", guards=[requires_role("viewer")], summary="The gettext .po file of one language (en.po)")
    async def export(self, flow_id: PathStr, name: PathStr, db_session: DbSession) -> Response:
        document, _ = await flow_service.get_draft(db_session, flow_id)
        code = _code(name)
        return Response(service.export_po(document, code), media_type="text/x-gettext-translation; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{flow_id}-{code}.po"'})

    @put("/{name:str}", guards=[requires_role("editor")],
         summary="Import a translated .po file of one language into the draft")
    async def import_(self, flow_id: PathStr, name: PathStr, request: Request,
                      db_session: DbSession) -> dict[str, Any]:
        data = await read_body(request)
        return await service.import_into_draft(db_session, flow_id, _code(name), data, actor(request))
