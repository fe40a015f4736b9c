"""The bot's running dialogs: counts per flow, version and state, and a page of them with a user-id search."""
from __future__ import annotations

from typing import Any

from litestar import Request, get

from server.auth import requires_role
from server.errors import BadRequest
from server.http_params import PathStr
from server.api.runtime_reads import bot_or_404, store_read
from server.runtime.lifecycle import runtime_of
from server.runtime.stores.ports import Listing
from server.runtime.stores.listing import CURSOR_MAX, MAX_PAGE, BadSearch, DialogPage, Search, count_rows
from server.runtime.timeline import iso

DEFAULT_PAGE = 50
MAX_TEXT = 200


def _text(query: Any, name: str, most: int = MAX_TEXT) -> str | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    if len(value) > most or not value.isprintable():
        raise BadRequest(f"{name} must be printable text of at most {most} characters.")
    return value


def _number(query: Any, name: str, low: int, high: int) -> int | None:
    value = _text(query, name)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}, not {value!r}.")
    return int(value)


def parse_search(query: Any) -> Search:
    """?user=<id> (exact) or <start>* (prefix), state, version, cursor, limit; 400 with a sentence otherwise."""
    user = _text(query, "user") or ""
    exact = bool(user) and not user.endswith("*")
    user = user.rstrip("*")
    if "*" in user:
        raise BadRequest("user is a user id, or the start of one followed by a single * to search by prefix.")
    limit = _number(query, "limit", 1, MAX_PAGE)
    return Search(user=user, exact=exact, state=_text(query, "state"),
                  version=_number(query, "version", 1, 2**31 - 1), cursor=_text(query, "cursor", CURSOR_MAX),
                  limit=limit or DEFAULT_PAGE)


def page_view(page: DialogPage) -> dict[str, Any]:
    return {"dialogs": [{"user": d.user, "flow": d.flow, "version": d.version, "state": d.state,
                         "updated": iso(d.updated) if d.updated else None} for d in page.dialogs],
            "next": page.next}


async def live(store: Listing, bot_id: str, search: Search) -> dict[str, Any]:
    """Counts of every running dialog of the bot and one page of those `search` picks."""
    try:
        page = await store_read(store.dialog_page(bot_id, search))
    except BadSearch as exc:
        raise BadRequest(str(exc)) from None
    counts = await store_read(store.dialog_counts(bot_id))
    return {"counts": count_rows(counts), **page_view(page)}


@get("/api/bots/{bot_id:str}/dialogs", guards=[requires_role("viewer")], summary="Running dialogs of a bot")
async def list_dialogs(request: Request, bot_id: PathStr) -> dict[str, Any]:
    """{"counts": [{flow, version, state, dialogs}], "dialogs": [{user, flow, version, state, updated}], "next"}."""
    search = parse_search(request.query_params)
    await bot_or_404(request, bot_id)
    return await live(runtime_of(request.app).store, bot_id, search)


ROUTES = [list_dialogs]
