"""Pictures for messages: /api/uploads (the body is the file itself)."""
from __future__ import annotations

import asyncio

from litestar import Controller, Request, Response, get, post

from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.bodies import BODY_SECONDS
from server.errors import AppError
from server.services import uploads as upload_service

# A picture is the same bytes for its whole life: browsers may keep it.
CACHE = "private, max-age=31536000, immutable"


async def _file_body(request: Request) -> bytes:
    """The body, refused past MAX_UPLOAD as soon as it says or shows it is larger."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > upload_service.MAX_UPLOAD:
        raise upload_service.too_large()
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(BODY_SECONDS):
            async for chunk in request.stream():
                size += len(chunk)
                if size > upload_service.MAX_UPLOAD:
                    raise upload_service.too_large()
                chunks.append(chunk)
    except TimeoutError:
        raise AppError(408, "request_timeout", f"The file did not arrive within {BODY_SECONDS:g} seconds;"
                                               " upload it again.") from None
    return b"".join(chunks)


class UploadController(Controller):
    """Upload a picture once; a message names it by id (`"upload": "<id>"`), each bot sends it to MAX once."""

    path = "/api/uploads"
    tags = ["uploads"]

    @post("/", guards=[requires_role("editor")], status_code=201, request_max_body_size=None,
          summary="Upload a picture (PNG, JPEG, GIF or WebP, at most 10 MB); the body is the file",
          description="Send the file's bytes as the body; `?filename=` names it. The same bytes uploaded again"
                      " answer the first upload.")
    async def upload(self, request: Request, db_session: DbSession) -> Response:
        data = await _file_body(request)
        filename = str(request.query_params.get("filename") or "")
        row = await upload_service.store(db_session, data, filename, actor(request))
        return Response(upload_service.described(row), status_code=201,
                        headers={"Location": f"/api/uploads/{row.id}"})

    @get("/{upload_id:str}", guards=[requires_role("viewer")], summary="The uploaded picture itself")
    async def read(self, upload_id: PathStr, db_session: DbSession) -> Response:
        row = await upload_service.read(db_session, upload_id)
        return Response(row.data, media_type=row.content_type,
                        headers={"Cache-Control": CACHE, "X-Content-Type-Options": "nosniff"})
