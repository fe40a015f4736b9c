"""The audit log: /api/audit."""
from __future__ import annotations

from typing import Any

from litestar import Request, get

from server.body_fields import clean_text
from server.api.params import DbSession
from server.auth import requires_role
from server.errors import BadRequest
from server.services import audit


@get("/api/audit", guards=[requires_role("admin")], tags=["audit"],
     summary="Who changed what, when: newest first; ?target=flow:<id> | bot:<id> | user:<name>, ?limit=n")
async def audit_log(request: Request, db_session: DbSession) -> list[dict[str, Any]]:
    limit_text = request.query_params.get("limit") or "100"
    if not limit_text.isascii() or not limit_text.isdigit() or not 1 <= int(limit_text) <= 1000:
        raise BadRequest("limit must be a whole number from 1 to 1000.")
    target = request.query_params.get("target")
    if target is not None and not clean_text(target):
        raise BadRequest("target must be text such as flow:registration.")
    return await audit.entries(db_session, target=target, limit=int(limit_text))


ROUTES = [audit_log]
