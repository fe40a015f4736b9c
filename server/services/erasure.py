"""Erasing one user's dialog data; the API's DELETE route and the bot page's button share it."""
from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from server.errors import BadRequest, Unavailable
from server.runtime.dispatch import Dispatcher
from server.runtime.stores.base import StoreUnavailable
from server.services import audit, privacy, sandbox_copy
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
    # "Open in simulator" copies of the user's dialogs go too: a copy is their data as much as the dialog.
    erased = {**erased, "sandbox_copies": await sandbox_copy.erase_copies(session, bot_id, user_id)}
    audit.record(session, who, "bot.user_erase", f"bot:{bot_id}", user=user_id, erased=erased)
    await session.commit()
    return erased
