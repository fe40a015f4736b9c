"""Bots: create, set token and webhook secret (write-only), what each serves, publication history, rollback."""
from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.bots import bot_changed
from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.services import bots as bot_service
from server.services import publishing
from web.pages import app_error, fragment, problem, redirect, refusal, render, user_of
from web.i18n import gettext as _
from web.pages_versions import SESSION_MODES, publish_version

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]


def _secrets(data: dict[str, str]) -> dict[str, Any]:
    """Secrets typed into the form; a blank field leaves the stored secret as it is."""
    return {name: data[name].strip() for name in ("token", "webhook_secret") if (data.get(name) or "").strip()}


class BotsController(Controller):
    path = "/bots"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def index(self, request: HTMXRequest, db_session: DbSession) -> Template:
        settings = request.app.state.settings
        return render(request, "bots.html", "_partials/bots_table.html", section="bots",
                      bots=await bot_service.list_bots(db_session, settings.public_url),
                      can_admin=user_of(request).has_role("admin"))

    @post("/", include_in_schema=False)
    async def create(self, request: HTMXRequest, db_session: DbSession, data: Form) -> Any:
        denied = refusal(request, "admin")
        if denied:
            return denied
        values = {"id": (data.get("id") or "").strip(), "title": (data.get("title") or "").strip() or None,
                  **_secrets(data)}
        try:
            row = await bot_service.create_bot(db_session, values, user_of(request).username)
        except AppError as exc:
            return app_error(request, exc)
        await bot_changed(request, row.id)
        await bot_service.subscribe_webhook(request.app.state.settings, row)
        return redirect(request, f"/bots/{row.id}")

    @get("/{bot_id:str}", include_in_schema=False)
    async def detail(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr) -> Template:
        settings = request.app.state.settings
        try:
            bot = await bot_service.get_bot(db_session, bot_id, settings.public_url)
            history = await publishing.publications(db_session, bot_id)
        except AppError as exc:
            return app_error(request, exc)
        user = user_of(request)
        return render(request, "bot.html", "_partials/publications.html", section="bots", bot=bot, history=history,
                      session_modes=SESSION_MODES, can_admin=user.has_role("admin"),
                      can_publish=user.has_role("publisher"))

    @post("/{bot_id:str}", include_in_schema=False)
    async def change(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "admin")
        if denied:
            return denied
        values: dict[str, Any] = _secrets(data)
        if "title" in data:
            values["title"] = data["title"].strip() or None
        try:
            row = await bot_service.update_bot(db_session, bot_id, values, user_of(request).username)
        except AppError as exc:
            return app_error(request, exc)
        await bot_changed(request, bot_id)
        subscription = None
        if {"token", "webhook_secret"} & set(values):
            subscription = await bot_service.subscribe_webhook(request.app.state.settings, row)
        bot = await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
        return fragment(request, "_partials/bot_settings.html", headers={"HX-Trigger": "bots-changed"}, bot=bot,
                        saved=sorted(values), subscription=subscription, can_admin=True)

    @post("/{bot_id:str}/rollback", include_in_schema=False)
    async def rollback(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        flow_id = data.get("flow") or ""
        if not flow_id:
            return problem(request, _("Choose the publication to roll back to."), status=422)
        return await publish_version(request, db_session, bot_id, flow_id, data.get("version") or "",
                                     data.get("sessions") or "keep")


ROUTES = [BotsController]
