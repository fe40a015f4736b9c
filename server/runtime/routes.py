"""HTTP routes of the runtime: the MAX webhook, plus the inspection routes from `inspect`."""
from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

import msgspec
from litestar import Request, Response, post

from server.api.params import PathStr
from server.errors import error_body
from server.runtime.inspect import ROUTES as INSPECT_ROUTES
from server.runtime.stores.base import LockLost, StoreUnavailable
from server.runtime.stores.resp import RedisError
from server.runtime.webhook import BadUpdate, parse_update, secret_ok

log = logging.getLogger("botflow.runtime.webhook")

SECRET_HEADER = "x-max-bot-api-secret"
OK_BODY = b'{"ok":true}'


def _error(status: int, code: str, message: str) -> tuple[int, bytes]:
    return status, msgspec.json.encode(error_body(code, message))


async def answer(runtime: Any, bot_id: str, secret: str | None,
                 read_body: Callable[[], Awaitable[bytes]]) -> tuple[int, bytes]:
    """Status and JSON body for one delivery; shared by the route and the fast path (`fastpath`)."""
    try:
        bot = await runtime.catalog.bot(bot_id)
    except Exception:  # noqa: BLE001 - the database is down: let MAX retry
        log.warning("bot lookup failed for %s", bot_id, exc_info=True)
        return _error(503, "unavailable", "The bot's settings cannot be read right now; retry later.")
    if bot is None:
        return _error(404, "not_found", f"There is no bot {bot_id!r}.")
    if not secret_ok(bot.secret, secret):
        return _error(403, "forbidden", "The X-Max-Bot-Api-Secret header does not match this bot's secret.")
    try:
        incoming = parse_update(msgspec.json.decode(await read_body()))
    except (msgspec.DecodeError, BadUpdate) as exc:
        return _error(400, "bad_update", f"The body is not a MAX update: {exc}.")
    if incoming is None:
        return 200, OK_BODY
    try:
        await runtime.dispatcher.handle(bot, incoming)
    except (StoreUnavailable, LockLost, RedisError) as exc:  # RedisError: LOADING, READONLY, OOM...
        log.warning("webhook for %s answered 503: %s", bot_id, exc)
        return _error(503, "unavailable", "Dialog storage is unreachable; the update was not handled, retry.")
    return 200, OK_BODY


@post("/webhooks/max/{bot_id:str}", status_code=200, include_in_schema=True, summary="MAX update delivery")
async def max_webhook(request: Request, bot_id: PathStr) -> Response:
    """One MAX update: 200 once handled (replies sent or safely queued), 403 bad secret, 400 bad body,
    503 when the storage is unreachable (MAX then delivers again)."""
    status, content = await answer(request.app.state.runtime, bot_id, request.headers.get(SECRET_HEADER),
                                   request.body)
    return Response(content, status_code=status, media_type="application/json")


ROUTES = [max_webhook, *INSPECT_ROUTES]
