"""Saved dialog tests of a flow: /api/flows/{id}/tests (read, replace, run, generate)."""
from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, delete, get, post, put

from server.bodies import if_match, json_body, read_body
from server.body_fields import fields
from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.errors import PreconditionRequired, Unprocessable
from server.services import flow_tests

SOURCE = ((str, int, type(None)), False)


def etag(revision: str) -> dict[str, str]:
    return {"ETag": f'"{revision}"'}


def names_of(value: Any) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Unprocessable("tests must be a list of test names.",
                            details=[{"path": "tests", "message": "expected a list of strings"}])
    return value


class FlowTestsController(Controller):
    """Tests belong to the flow, not to its document: saving them makes no new draft revision or version."""

    path = "/api/flows/{flow_id:str}/tests"
    tags = ["tests"]

    @get("/", guards=[requires_role("viewer")], summary="The flow's saved tests, with their revision as ETag")
    async def read(self, flow_id: PathStr, db_session: DbSession) -> Response:
        tests, revision = await flow_tests.get_tests(db_session, flow_id)
        return Response({"tests": tests, "revision": revision}, headers=etag(revision))

    @put("/", guards=[requires_role("editor")],
         summary="Replace the saved tests; needs If-Match with their current revision")
    async def replace(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        await read_body(request)  # before the database (see flows.replace)
        await flow_tests.get_tests(db_session, flow_id)
        self.need_if_match(request, flow_id)
        body = fields(await json_body(request), {"tests": (list, True), "revision": (str, False)})
        revision = await flow_tests.save_tests(db_session, flow_id, body["tests"], if_match(request),
                                               actor(request))
        return Response({"id": flow_id, "revision": revision, "tests": len(body["tests"])},
                        headers=etag(revision))

    @post("/", guards=[requires_role("editor")], status_code=201,
          summary="Add one test (body {\"test\": {...}}); needs If-Match with the tests' revision")
    async def append(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        await read_body(request)  # before the database (see flows.replace)
        await flow_tests.get_tests(db_session, flow_id)
        self.need_if_match(request, flow_id)
        body = fields(await json_body(request), {"test": (dict, True)})
        revision = await flow_tests.append_test(db_session, flow_id, body["test"], if_match(request),
                                                actor(request))
        return Response({"id": flow_id, "revision": revision}, status_code=201, headers=etag(revision))

    @delete("/{name:str}", guards=[requires_role("editor")], status_code=200,
            summary="Delete one saved test by name; needs If-Match with the tests' revision")
    async def remove(self, flow_id: PathStr, name: PathStr, request: Request, db_session: DbSession) -> Response:
        await flow_tests.get_tests(db_session, flow_id)
        self.need_if_match(request, flow_id)
        revision = await flow_tests.remove_test(db_session, flow_id, name, if_match(request), actor(request))
        return Response({"id": flow_id, "revision": revision}, headers=etag(revision))

    @staticmethod
    def need_if_match(request: Request, flow_id: str) -> None:
        if "if-match" not in request.headers:
            raise PreconditionRequired(
                f'Send If-Match: "<revision>" with the revision of the tests you edited (the ETag of GET '
                f'/api/flows/{flow_id}/tests, "{flow_tests.EMPTY_REVISION}" before the first save).')

    @post("/run", guards=[requires_role("viewer")], status_code=200,
          summary="Run the saved tests on the draft or a version: passed, or the first step that differs")
    async def run(self, flow_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request, required=False), {"source": SOURCE, "tests": ((list,), False)})
        return await flow_tests.run_saved(db_session, flow_id, body.get("source"), names_of(body.get("tests")))

    @post("/generated", guards=[requires_role("editor")], status_code=200,
          summary="Generate on the server and add the new cases to the saved tests; needs If-Match")
    async def add_generated(self, flow_id: PathStr, request: Request, db_session: DbSession) -> Response:
        await read_body(request)  # before the database (see flows.replace)
        await flow_tests.get_tests(db_session, flow_id)
        self.need_if_match(request, flow_id)
        body = fields(await json_body(request, required=False), {"source": SOURCE})
        answer = await flow_tests.add_generated(db_session, flow_id, body.get("source"), if_match(request),
                                                actor(request))
        return Response(answer, headers=etag(answer["revision"]))

    @post("/generate", guards=[requires_role("viewer")], status_code=200,
          summary="Dialogs that together fire every transition they can, and the ones they cannot, with why")
    async def generate(self, flow_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
        body = fields(await json_body(request, required=False), {"source": SOURCE})
        return await flow_tests.generated(db_session, flow_id, body.get("source"))
