"""Versions of a flow: list, freeze the draft with a note, diff any two on the graph, publish to a bot."""
from __future__ import annotations

import json
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.enums import MediaType, RequestEncodingType
from litestar.params import Body, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template
from sqlalchemy.ext.asyncio import AsyncSession

from server.api.bots import runtime_store
from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.services import bots as bot_service
from server.services import flows as flow_service
from server.services import publishing
from server.services import versions as version_service
from server.runtime.lifecycle import runtime_if_started
from web.diffview import KINDS, change_lines, diff_graph
from web.issues import group_issues
from web.i18n import N_
from web.i18n import gettext as _
from web.pages import app_error, fragment, problem, refusal, render, user_of

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
SESSION_MODES = (
    ("keep", N_("keep — running dialogs finish on the version they started on")),
    ("migrate", N_("migrate — running dialogs continue on the version published now where their state exists")),
    ("reset", N_("reset — running dialogs are dropped")),
)
SESSION_WORDS = (N_("keep"), N_("migrate"), N_("reset"))


def refs_of(versions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What the compare form offers: the draft, then every version, newest first."""
    return [("draft", _("Draft"))] + [(str(v["version"]), _("Version %(n)s") % {"n": v["version"]})
                                      for v in reversed(versions)]


class VersionsController(Controller):
    path = "/flows/{flow_id:str}"
    request_class = HTMXRequest

    @get("/versions", include_in_schema=False)
    async def index(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        try:
            document, revision = await flow_service.get_draft(db_session, flow_id)
            versions = await version_service.list_versions(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        bots = await bot_service.list_bots(db_session)
        user = user_of(request)
        return render(request, "versions.html", "_partials/versions_table.html", section="flows",
                      flow={"id": flow_id, "title": document.get("title", ""), "revision": revision},
                      versions=list(reversed(versions)), bots=bots, refs=refs_of(versions), session_modes=SESSION_MODES,
                      serving=[b for b in bots if b["flow"] == flow_id],
                      can_publish=user.has_role("publisher"))

    @post("/versions", include_in_schema=False)
    async def freeze(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "publisher")
        if denied:
            return denied
        note = (data.get("note") or "").strip()
        try:
            version, created = await version_service.freeze(db_session, flow_id, note, user_of(request).username)
        except AppError as exc:
            if exc.code == "validation_failed":
                issues = [i for i in exc.details if isinstance(i, dict)]
                try:  # the draft's titles name the states
                    draft: dict[str, Any] | None = (await flow_service.get_draft(db_session, flow_id))[0]
                except AppError:
                    draft = None
                return fragment(request, "_partials/freeze_result.html", status=422,
                                refused=_("The draft has errors, so it cannot be frozen."), flow_id=flow_id,
                                issues=group_issues(issues, None, draft), version=None, created=False)
            return app_error(request, exc)
        # The answer also redraws the versions table and the version lists (out of band), so the page is current.
        versions = await version_service.list_versions(db_session, flow_id)
        return fragment(request, "_partials/freeze_result.html", headers={"HX-Trigger": "versions-changed"},
                        refused=None, issues=[], version=version, created=created, oob=True,
                        flow={"id": flow_id}, versions=list(reversed(versions)), refs=refs_of(versions))

    # The file is JSON; a refusal (no such version) is a page, so the route's own type is HTML.
    @get("/versions/{number:str}/download", include_in_schema=False, media_type=MediaType.HTML)
    async def download(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                       number: PathStr) -> Any:
        try:
            document = await version_service.document_at(db_session, flow_id, number)
        except AppError as exc:
            return app_error(request, exc)
        return Response(json.dumps(document, ensure_ascii=False, indent=2), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{flow_id}-v{number}.json"'})

    @get("/diff", include_in_schema=False)
    async def diff(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                   a: Annotated[str, QueryParameter()] = "", b: Annotated[str, QueryParameter()] = "") -> Template:
        try:
            result = await version_service.diff_refs(db_session, flow_id, a or None, b or None)
            old = await version_service.document_at(db_session, flow_id, a)
            new = await version_service.document_at(db_session, flow_id, b)
        except AppError as exc:
            return app_error(request, exc)
        return fragment(request, "_partials/diff.html", a=a, b=b, identical=result["identical"],
                        graph=diff_graph(old, new, result), changes=change_lines(result, old, new), kinds=KINDS)

    @post("/publish", include_in_schema=False)
    async def publish(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr, data: Form) -> Template:
        return await publish_version(request, db_session, data.get("bot") or "", flow_id, data.get("version") or "",
                                     data.get("sessions") or "keep")


async def publish_version(request: Request, db: AsyncSession, bot_id: str, flow_id: str, version: str,
                          sessions: str, bot_page: bool = False) -> Template:
    """Publish (or roll back to) a version, tell the runtime, and show the publication (with the parts of
    the versions page it changes, or of the bot page for a rollback there)."""
    denied = refusal(request, "publisher")
    if denied:
        return denied
    if not bot_id:
        return problem(request, _("Choose the bot to publish to."), status=422)
    if not version:  # the form always names one; publishing "the latest" unasked could be a surprise
        return problem(request, _("Choose the version to publish."), status=422)
    try:
        number = version_service.parse_number(version, flow_id)
        record = await publishing.publish(db, bot_id, flow_id, number, sessions, user_of(request).username,
                                          runtime_store(request))
    except AppError as exc:
        return app_error(request, exc)
    await publishing.notify_runtime(runtime_if_started(request.app), record)
    bots = await bot_service.list_bots(db)
    bot = await bot_service.get_bot(db, bot_id, request.app.state.settings.public_url) if bot_page else None
    return fragment(request, "_partials/published.html", headers={"HX-Trigger": "versions-changed, bots-changed"},
                    record=record, oob=True, bots=bots, chosen_bot=bot_id, bot_page=bot_page, bot=bot,
                    flow_titles=await flow_service.titles(db),
                    bot_title=next((b.get("title") for b in bots if b["id"] == bot_id), None) or bot_id,
                    serving=[b for b in bots if b["flow"] == flow_id])


ROUTES = [VersionsController]
