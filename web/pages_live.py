"""Live dialogs on a bot's page: counts by version and state, a list with a user-id search, each dialog's
transcript, and "open in the simulator at this point"."""
from __future__ import annotations

import json
import logging
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.runtime import timeline
from server.runtime.stores.base import StoreUnavailable
from server.runtime.stores.listing import BadSearch, Search, count_rows
from server.services import bots as bot_service
from server.services import sandbox_copy, versions
from server.runtime.lifecycle import runtime_of
from web.i18n import gettext as _
from web.pages import app_error, is_htmx, problem, redirect, refusal, render, user_of
from web.transcript import clock, lines

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
log = logging.getLogger("botflow.web.live")
PAGE = 25
MAX_TEXT = 64


def _search(query: Any) -> Search | str:
    """The list's search from the page's form (the user id is a prefix), or a sentence saying what is wrong."""
    user = (query.get("user") or "").strip()
    state = (query.get("state") or "").strip() or None
    raw_version = (query.get("version") or "").strip()
    cursor = query.get("cursor") or None
    for value in (user, state or ""):  # the cursor is the store's to refuse (BadSearch, below)
        if len(value) > MAX_TEXT * 4 or not value.isprintable():
            return _("Type a user id (digits) or its beginning.")
    digits = raw_version.isascii() and raw_version.isdigit()
    if raw_version and (not digits or not 1 <= int(raw_version) <= 2**31 - 1):
        return _("Choose a version from the list.")
    return Search(user=user, state=state, version=int(raw_version) if raw_version else None, cursor=cursor,
                  limit=PAGE)


# Where a version's own title is kept among its state titles (no state id is empty: the loader refuses one).
FLOW_TITLE = ""


async def _titles(db_session: Any, pairs: Any) -> dict[tuple[Any, Any], dict[str, str]]:
    """State id -> title in each (flow, version) of `pairs`, the flow's title under FLOW_TITLE; a version that
    cannot be read is left out."""
    titles: dict[tuple[Any, Any], dict[str, str]] = {}
    for flow, version in set(pairs):
        if not flow or not isinstance(version, int):
            continue
        try:
            document = json.loads((await versions.get_version(db_session, flow, version)).document)
        except (AppError, ValueError):
            continue
        titles[(flow, version)] = {str(st.get("id")): st["title"] for st in document.get("states") or []
                                   if isinstance(st, dict) and isinstance(st.get("title"), str) and st["title"].strip()}
        title = document.get("title")
        if isinstance(title, str) and title.strip():
            titles[(flow, version)][FLOW_TITLE] = title.strip()
    return titles


async def _with_titles(db_session: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row (with flow, version and state) also gets its flow's and its state's titles from that version,
    for people to read (the ids stay on hover); a version that cannot be read, or a flow without a title,
    leaves the id."""
    titles = await _titles(db_session, ((r.get("flow"), r.get("version")) for r in rows))
    for row in rows:
        found = titles.get((row.get("flow"), row.get("version")), {})
        row["flow_title"] = found.get(FLOW_TITLE)
        row["state_title"] = found.get(row["state"]) if row.get("state") else None
    return rows


async def _state_names(db_session: Any, records: list[dict[str, Any]], current: Any) -> dict[str, str]:
    """State id -> title for a transcript, from the versions its records and the running dialog were on (a
    later version's title wins)."""
    pairs = [((rec.get("s") or {}).get("flow"), (rec.get("s") or {}).get("version")) for rec in records]
    if current:
        pairs.append((current.get("flow"), current.get("version")))
    names: dict[str, str] = {}
    for _pair, found in sorted((await _titles(db_session, pairs)).items(), key=lambda item: item[0][1]):
        names.update({sid: title for sid, title in found.items() if sid != FLOW_TITLE})
    return names


def _dialog_rows(page: Any) -> list[dict[str, Any]]:
    return [{"user": d.user, "flow": d.flow, "version": d.version, "state": d.state,
             "updated": timeline.iso(d.updated) if d.updated else None} for d in page.dialogs]


class LiveController(Controller):
    path = "/bots/{bot_id:str}/dialogs"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def index(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr) -> Template:
        try:
            bot = await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
        except AppError as exc:
            return app_error(request, exc)
        search = _search(request.query_params)
        if isinstance(search, str):
            return problem(request, search, status=400)
        store = runtime_of(request.app).store
        only_list = request.query_params.get("part") == "list" and is_htmx(request)
        try:
            page = await store.dialog_page(bot_id, search)
            counts = {} if only_list else await store.dialog_counts(bot_id)
        except BadSearch:
            return problem(request, _("That page of the list is no longer there; search again."), status=400)
        except StoreUnavailable as exc:
            log.warning("listing dialogs of bot %s failed: %s", bot_id, exc)
            return problem(request, _("Dialog storage cannot be reached right now; try again in a moment."),
                           status=503)
        rows = await _with_titles(db_session, count_rows(counts))
        partial = "_partials/live_list.html" if only_list else "_partials/live_dialogs.html"
        return render(request, "bot_dialogs.html", partial, section="bots", bot=bot,
                      counts=rows, total=sum(r["dialogs"] for r in rows), dialogs=await _with_titles(db_session, _dialog_rows(page)),
                      next=page.next, search=search, searched=bool(search.user or search.state or search.version),
                      versions=sorted({r["version"] for r in rows if r["version"] is not None}),
                      states=sorted({r["state"] for r in rows if r["state"] is not None}))

    @get("/{user_id:str}", include_in_schema=False)
    async def transcript(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr,
                         user_id: PathStr) -> Template:
        try:
            bot = await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
        except AppError as exc:
            return app_error(request, exc)
        store = runtime_of(request.app).store
        try:
            records = await store.timeline(bot_id, user_id)
            current = await store.dialog(bot_id, user_id)
            waiting = await store.outbox_head(bot_id, user_id) is not None
        except StoreUnavailable as exc:
            log.warning("reading the timeline of %s/%s failed: %s", bot_id, user_id, exc)
            return problem(request, _("Dialog storage cannot be reached right now; try again in a moment."),
                           status=503)
        snap = timeline.snapshot(current)
        flow_title = None
        if snap:
            found = await _titles(db_session, [(snap.get("flow"), snap.get("version"))])
            flow_title = found.get((snap.get("flow"), snap.get("version")), {}).get(FLOW_TITLE)
        return render(request, "bot_transcript.html", "_partials/transcript.html", section="bots", bot=bot,
                      user_id=user_id, lines=lines(records), clock=clock, current=snap,
                      names=await _state_names(db_session, records, snap), flow_title=flow_title,
                      waiting=waiting,
                      can_simulate=user_of(request).has_role("editor"))

    @post("/{user_id:str}/simulate", include_in_schema=False)
    async def simulate(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, user_id: PathStr,
                       data: Form) -> Any:
        denied = refusal(request, "editor")
        if denied:
            return denied
        raw = (data.get("entry") or "").strip()
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 6:
            return problem(request, _("Choose a point of the transcript to open in the simulator."), status=422)
        try:
            await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
            found = timeline.state_at(await runtime_of(request.app).store.timeline(bot_id, user_id), int(raw))
        except AppError as exc:
            return app_error(request, exc)
        except StoreUnavailable:
            return problem(request, _("Dialog storage cannot be reached right now; try again in a moment."),
                           status=503)
        if found is None or found[1] is None:
            return problem(request, _("No dialog was running at that point, so there is nothing to simulate."),
                           status=422)
        try:
            sandbox_id, version = await sandbox_copy.copy_live(db_session, found[1], bot_id, user_id)
        except AppError as exc:
            return app_error(request, exc)
        flow_id = found[1]["flow"]
        query = urlencode({"sim": sandbox_id, "source": version, "bot": bot_id, "user": user_id, "entry": int(raw)})
        return redirect(request, f"/flows/{quote(flow_id, safe='')}/edit?{query}")


ROUTES = [LiveController]
