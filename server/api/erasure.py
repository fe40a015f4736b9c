"""`DELETE /api/bots/{bot}/users/{user_id}`: erase one user's dialog data (server.services.erasure)."""
from __future__ import annotations

from typing import Any

from litestar import Request, delete

from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.api.user_dialogs import USER_PATH
from server.auth import requires_role
from server.runtime.lifecycle import runtime_of
from server.services.erasure import erase_user


@delete(USER_PATH, guards=[requires_role("admin")], status_code=204,
        summary="Erase one user's dialog, timeline, timers and queued sends (counters are kept)")
async def erase(request: Request, db_session: DbSession, bot_id: PathStr, user_id: PathStr) -> None:
    """204 whether or not the user had data (erasure is idempotent); 404 for an unknown bot."""
    await erase_user(db_session, runtime_of(request.app).dispatcher, bot_id, user_id, actor(request))


ROUTES: list[Any] = [erase]
