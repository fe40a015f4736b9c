"""What the routes read from the running runtime: a bot from its catalog (404 if none), a store read (503)."""
from __future__ import annotations

from typing import Awaitable, TypeVar

from litestar import Request

from server.errors import NotFound, Unavailable
from server.runtime.catalog import BotInfo
from server.runtime.lifecycle import runtime_of
from server.runtime.stores.base import StoreUnavailable

T = TypeVar("T")


async def store_read(awaitable: Awaitable[T]) -> T:
    """A store read; an unreachable store is a 503, not a 500."""
    try:
        return await awaitable
    except StoreUnavailable as exc:
        raise Unavailable(f"Dialog storage is unreachable: {exc}") from exc


async def bot_or_404(request: Request, bot_id: str) -> BotInfo:
    """The bot as the runtime serves it; 404 for an unknown one."""
    bot = await runtime_of(request.app).catalog.bot(bot_id)
    if bot is None:
        raise NotFound(f"There is no bot {bot_id!r}.", {"bot": bot_id})
    return bot
