"""Replay production against a draft: /api/bots/{bot}/replay."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from litestar import Request, post

from server.bodies import json_body
from server.body_fields import fields
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.errors import Unprocessable
from server.services import replay as replay_service
from server.runtime.lifecycle import runtime_if_started

MAX_LAST = 20_000


def instant(value: Any, path: str) -> float | None:
    """An ISO 8601 time as Unix seconds (UTC when no zone is given)."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable(f"{path} must be an ISO 8601 time such as 2026-12-01T09:00:00Z.",
                            details=[{"path": path, "message": "expected an ISO 8601 time"}]) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


@post("/api/bots/{bot_id:str}/replay", guards=[requires_role("viewer")], status_code=200, tags=["tests"],
      summary="Replay the bot's recorded dialogs on the draft or a version: which would now go differently")
async def replay(bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
    body = fields(await json_body(request, required=False), {
        "source": ((str, int, type(None)), False), "flow": ((str, type(None)), False),
        "since": ((str, type(None)), False), "until": ((str, type(None)), False),
        "last": ((int, type(None)), False), "users": ((list, type(None)), False)})
    last = body.get("last")
    if last is not None and not 1 <= last <= MAX_LAST:
        raise Unprocessable(f"last must be a number of dialogs from 1 to {MAX_LAST}.",
                            details=[{"path": "last", "message": "out of range"}])
    users = body.get("users")
    if users is not None and (not all(isinstance(u, str) and u for u in users) or len(users) > MAX_LAST):
        raise Unprocessable("users must be a list of user ids (strings).",
                            details=[{"path": "users", "message": "expected a list of strings"}])
    runtime = runtime_if_started(request.app)
    return await replay_service.replay_bot(
        db_session, getattr(runtime, "store", None), bot_id, body.get("flow"), body.get("source"),
        instant(body.get("since"), "since"), instant(body.get("until"), "until"), last, users)


ROUTES = [replay]
