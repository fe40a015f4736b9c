"""Erasure of one user: `DELETE /api/bots/{bot}/users/{user_id}` and the bot page's button share it."""
from __future__ import annotations

from typing import Any

from litestar import Request, delete
from sqlalchemy.ext.asyncio import AsyncSession

from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.errors import BadRequest
from server.runtime.dispatch import Dispatcher
from server.runtime.inspect import USER_PATH, Unavailable
from server.runtime.stores.base import StoreUnavailable
from server.services import audit, privacy
from server.services.bots import get_row


async def erase_user(session: AsyncSession, dispatcher: Dispatcher, bot_id: str, user_id: str,
                     who: str | None) -> dict[str, int]:
    """Forget the user's dialog data (counters stay) and record it in the audit log; how much of each went."""
    await get_row(session, bot_id)  # 404 for an unknown bot
    problem = privacy.user_id_problem(user_id)
    if problem is not None:
        raise BadRequest(problem, code="invalid_user_id", details=[{"path": "user_id", "message": problem}])
    try:
        erased = await dispatcher.erase(bot_id, user_id)
    except StoreUnavailable as exc:
        raise Unavailable(f"Dialog storage is unreachable, nothing was recorded as erased; retry: {exc}") from exc
    audit.record(session, who, "bot.user_erase", f"bot:{bot_id}", user=user_id, erased=erased)
    await session.commit()
    return erased


@delete(USER_PATH, guards=[requires_role("admin")], status_code=204,
        summary="Erase one user's dialog, timeline, timers and queued sends (counters are kept)")
async def erase(request: Request, db_session: DbSession, bot_id: PathStr, user_id: PathStr) -> None:
    """204 whether or not the user had data (erasure is idempotent); 404 for an unknown bot."""
    await erase_user(db_session, request.app.state.runtime.dispatcher, bot_id, user_id, actor(request))


ROUTES: list[Any] = [erase]
