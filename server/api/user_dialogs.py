"""One user's dialog over HTTP: send an event, read the session, the timeline, the state as of an entry."""
from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get, post
from litestar.params import QueryParameter

from flows.checks import Report, json_data_problems
from flows.dialog import Update
from server.api.runtime_reads import bot_or_404, store_read
from server.http_params import PathInt, PathStr
from server.auth import requires_role
from server.bodies import json_body
from server.body_fields import fields
from server.errors import Conflict, NotFound, Unavailable, Unprocessable
from server.runtime import timeline
from server.runtime.lifecycle import runtime_of
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.ports import Timelines

USER_PATH = "/api/bots/{bot_id:str}/users/{user_id:str}"


EVENT_BODY = '{"name": "<event>", "payload": {...}}'
MAX_EVENT_NAME = 4096


def _session_view(stored: dict[str, Any]) -> dict[str, Any]:
    return {"flow": stored.get("flow"), "version": stored.get("version"), "state": stored.get("state"),
            "data": stored.get("data") or {}, "history": list(stored.get("history") or [])}


@post(USER_PATH + "/events", guards=[requires_role("editor")], status_code=200, summary="Send an event to a dialog")
async def send_event(request: Request, bot_id: PathStr, user_id: PathStr) -> dict[str, Any]:
    """The `event` trigger: 200 {"state","fired"} when a transition took it, 409 when none did, 404 without a dialog."""
    data = fields(await json_body(request), {"name": (str, True), "payload": ((dict, type(None)), False)})
    name, payload = data["name"], data.get("payload")
    report = Report()
    json_data_problems(payload, report)  # numbers past 2^53 and deep nesting, as in a document
    if report:
        raise Unprocessable("The event's payload holds values a dialog cannot keep; see the details.",
                            details=[{**d, "path": "payload" + ("." if d["path"] and d["path"][0] != "[" else "")
                                      + d["path"]} for d in report.details])
    if not name.strip():
        raise Unprocessable(f"Name the event: send {EVENT_BODY}.",
                            details=[{"path": "name", "message": "the event's name is empty"}])
    if len(name) > MAX_EVENT_NAME:  # a mistake, not a name; the answers would repeat it in full
        raise Unprocessable(f"The event's name is {len(name):,} characters long; names are at most {MAX_EVENT_NAME}.",
                            details=[{"path": "name", "message": f"longer than {MAX_EVENT_NAME} characters"}])
    bot = await bot_or_404(request, bot_id)
    runtime = runtime_of(request.app)
    try:
        status, result = await runtime.dispatcher.turn(bot, user_id, Update.event(name, payload),
                                                       require_dialog=True, require_fire=True)
    except StoreUnavailable as exc:
        raise Unavailable(f"Dialog storage is unreachable: {exc}") from exc
    if status == "no_dialog" or (status == "not_fired" and result is None):
        raise NotFound(f"User {user_id} has no dialog with bot {bot_id!r}.")
    fired = {"transition": result.transition if result else None, "reason": result.reason if result else ""}
    if status == "not_fired":
        # The engine's reason says why: no transition takes it, or the one that would grows data past the bound.
        why = result.reason if result is not None and result.reason else (
            f"No transition from the current state takes the event {name!r}; nothing changed.")
        raise Conflict(why, code="event_not_accepted", details=[fired])
    state = result.dialog.state if result is not None and result.dialog is not None else None
    return {"state": state, "fired": fired}


@get(USER_PATH + "/session", guards=[requires_role("viewer")], summary="A user's current dialog")
async def get_session(request: Request, bot_id: PathStr, user_id: PathStr,
                      at: Annotated[int | None, QueryParameter()] = None) -> dict[str, Any]:
    """flow, version, state, data, history (oldest first); `?at=n` gives the dialog as of timeline entry n."""
    await bot_or_404(request, bot_id)
    store = runtime_of(request.app).store
    if at is not None:
        return (await _as_of(store, bot_id, user_id, at))["session"]
    stored = await store_read(store.dialog(bot_id, user_id))
    if stored is None:
        raise NotFound(f"User {user_id} has no dialog with bot {bot_id!r}.")
    return _session_view(stored)


@get(USER_PATH + "/timeline", guards=[requires_role("viewer")], summary="What happened in a user's dialogs")
async def get_timeline(request: Request, bot_id: PathStr, user_id: PathStr) -> list[dict[str, Any]]:
    """Entries oldest first: {"time","kind","state","transition","text"}."""
    await bot_or_404(request, bot_id)
    return timeline.entries(await store_read(runtime_of(request.app).store.timeline(bot_id, user_id)))


@get(USER_PATH + "/timeline/{index:int}/state", guards=[requires_role("viewer")],
     summary="The dialog as of one timeline entry")
async def get_state_at(request: Request, bot_id: PathStr, user_id: PathStr, index: PathInt) -> dict[str, Any]:
    """{"entry", "session"}: session is null when no dialog existed at that point."""
    await bot_or_404(request, bot_id)
    return await _as_of(runtime_of(request.app).store, bot_id, user_id, index)


async def _as_of(store: Timelines, bot_id: str, user_id: str, index: int) -> dict[str, Any]:
    found = timeline.state_at(await store_read(store.timeline(bot_id, user_id)), index) if index >= 0 else None
    if found is None:
        raise NotFound(f"The timeline of user {user_id} has no entry {index}.")
    entry, snap = found
    return {"entry": entry, "session": _session_view(snap) if snap is not None else None}


ROUTES = [send_event, get_session, get_timeline, get_state_at]
