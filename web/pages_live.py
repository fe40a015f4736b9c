"""Live dialogs on a bot's page: counts by version and state, a list with a user-id search, each dialog's
transcript, and "open in the simulator at this point"."""
from __future__ import annotations

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
from server.services import sandbox_copy
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
        store = request.app.state.runtime.store
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
        rows = count_rows(counts)
        partial = "_partials/live_list.html" if only_list else "_partials/live_dialogs.html"
        return render(request, "bot_dialogs.html", partial, section="bots", bot=bot,
                      counts=rows, total=sum(r["dialogs"] for r in rows), dialogs=_dialog_rows(page),
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
        store = request.app.state.runtime.store
        try:
            records = await store.timeline(bot_id, user_id)
            current = await store.session(bot_id, user_id)
            waiting = await store.outbox_head(bot_id, user_id) is not None
        except StoreUnavailable as exc:
            log.warning("reading the timeline of %s/%s failed: %s", bot_id, user_id, exc)
            return problem(request, _("Dialog storage cannot be reached right now; try again in a moment."),
                           status=503)
        return render(request, "bot_transcript.html", "_partials/transcript.html", section="bots", bot=bot,
                      user_id=user_id, lines=lines(records), clock=clock, current=timeline.snapshot(current),
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
            found = timeline.state_at(await request.app.state.runtime.store.timeline(bot_id, user_id), int(raw))
        except AppError as exc:
            return app_error(request, exc)
        except StoreUnavailable:
            return problem(request, _("Dialog storage cannot be reached right now; try again in a moment."),
                           status=503)
        if found is None or found[1] is None:
            return problem(request, _("No dialog was running at that point, so there is nothing to simulate."),
                           status=422)
        try:
            sandbox_id, version = await sandbox_copy.copy_live(db_session, found[1])
        except AppError as exc:
            return app_error(request, exc)
        flow_id = found[1]["flow"]
        query = urlencode({"sim": sandbox_id, "source": version, "bot": bot_id, "user": user_id, "entry": int(raw)})
        return redirect(request, f"/flows/{quote(flow_id, safe='')}/edit?{query}")


ROUTES = [LiveController]
