"""Bots: create, set token and webhook secret (write-only), delivery health, a test message, publication
history, rollback."""
from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.enums import MediaType, RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.bots import bot_changed
from server.api.params import DbSession, PathStr
from server.db.models import BotRow
from server.errors import AppError
from server.channels.max.client import MaxApiError
from server.channels.max.render import text_body
from server.channels.max.sender import max_client_of
from server.runtime.bot_counts import bot_counts
from server.services import bots as bot_service
from server.services import flows as flow_service
from server.services import publishing
from server.runtime.lifecycle import runtime_if_started, runtime_of
from web.pages import app_error, fragment, problem, redirect, refusal, render, user_of
from web.bot_health import BotHealth, max_answer_words, subscription_words
from web.messages import human_detail, human_message
from web.i18n import N_, human_datetime
from web.i18n import gettext as _
from web.pages_versions import SESSION_MODES, publish_version

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
log = logging.getLogger("botflow.web.bots")
HEALTH = BotHealth()
COUNT_SECONDS = 1.0  # the page waits at most this for the dialog and queue counts
COUNT_CAP = 2_000
LOST_SHOWN = 24 * 3600  # seconds the bots page tells that the dialog store lost dialogs
TEST_TEXT = N_("Test message from Botflow: the bot can reach you.")


async def delivery(request: HTMXRequest, bot: dict[str, Any]) -> dict[str, Any]:
    """Everything the delivery card shows for one bot."""
    state, settings = request.app.state, request.app.state.settings
    watchdog = getattr(state, "watchdog", None)
    tag, words = subscription_words(watchdog.health.get(bot["id"]) if watchdog else None, settings.public_url,
                                    bot["id"])
    counts = None
    try:
        counts = await asyncio.wait_for(bot_counts(runtime_of(request.app).store, bot["id"], COUNT_CAP), COUNT_SECONDS)
    except Exception as exc:  # the page still shows everything else
        log.warning("counting dialogs of bot %s for its page failed: %s", bot["id"], exc)
    return {"subscription_tag": tag, "subscription_words": words, "rate": settings.max_rate,
            "counts": counts, "count_cap": COUNT_CAP, **HEALTH.summary(bot["id"])}


def store_lost(request: HTMXRequest) -> str | None:
    """When the dialog store was last found to have lost dialogs, as people read it; None past a day."""
    runtime = runtime_if_started(request.app)
    if runtime is None:
        return None
    lost_at = runtime.store.lost_at()
    if lost_at is None or runtime.clock() - lost_at > LOST_SHOWN:
        return None
    return human_datetime(datetime.fromtimestamp(lost_at, timezone.utc))


def _secrets(data: dict[str, str]) -> dict[str, Any]:
    """Secrets typed into the form; a blank field leaves the stored secret as it is."""
    return {name: data[name].strip() for name in ("token", "webhook_secret") if (data.get(name) or "").strip()}


NEW_BOT_FIELDS = ("id", "title", "token", "webhook_secret")  # the new-bot form's fields, each with its error


class BotsController(Controller):
    path = "/bots"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def index(self, request: HTMXRequest, db_session: DbSession) -> Template:
        settings = request.app.state.settings
        return render(request, "bots.html", "_partials/bots_table.html", section="bots",
                      bots=await bot_service.list_bots(db_session, settings.public_url),
                      can_admin=user_of(request).has_role("admin"), store_lost=store_lost(request))

    @post("/", include_in_schema=False, media_type=MediaType.HTML)
    async def create(self, request: HTMXRequest, db_session: DbSession, data: Form) -> Any:
        denied = refusal(request, "admin")
        if denied:
            return denied
        values = {"id": (data.get("id") or "").strip(), "title": (data.get("title") or "").strip() or None,
                  **_secrets(data)}
        try:
            row = await bot_service.create_bot(db_session, values, user_of(request).username)
        except AppError as exc:
            errors = {str(d["path"]): human_detail(d)["message"] for d in exc.details
                      if isinstance(d, dict) and d.get("path") in NEW_BOT_FIELDS}
            if exc.code == "bot_exists":
                errors["id"] = human_message(exc)
            # The form replaces itself: a refusal no field explains is said inside it, under the button.
            settings = request.app.state.settings
            return render(request, "bots.html", "_partials/bot_new.html", status=exc.status, section="bots",
                          bots=await bot_service.list_bots(db_session, settings.public_url), can_admin=True,
                          errors=errors, message=None if errors else human_message(exc),
                          values={"id": values["id"], "title": values["title"]})
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
                      can_publish=user.has_role("publisher"), health=await delivery(request, bot),
                      test_text=_(TEST_TEXT), flow_titles=await flow_service.titles(db_session))

    @get("/{bot_id:str}/health", include_in_schema=False)
    async def health(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr) -> Template:
        try:
            bot = await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
        except AppError as exc:
            return app_error(request, exc)
        return fragment(request, "_partials/bot_health.html", bot=bot, health=await delivery(request, bot))

    @post("/{bot_id:str}/test-message", include_in_schema=False)
    async def test_message(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr,
                           data: Form) -> Template:
        denied = refusal(request, "admin")
        if denied:
            return denied
        raw_user, text = (data.get("user_id") or "").strip(), (data.get("text") or "").strip() or _(TEST_TEXT)
        errors: dict[str, str] = {}
        if not raw_user.isdigit() or not 0 < int(raw_user) < 2**63:
            errors["user_id"] = _("Enter the MAX user id of the person to write to: digits only, e.g. 212843158.")
        if len(text) > 4000:
            errors["text"] = _("MAX takes at most %(n)s characters in one message.") % {"n": 4000}
        row = await db_session.get(BotRow, bot_id)
        if row is None:
            return problem(request, _("There is no bot %(id)s; it may have been deleted.") % {"id": bot_id}, status=404)
        token = row.token
        if not token and not errors:
            errors["user_id"] = _("The bot has no MAX token yet; set one in the settings first.")
        if errors or not token:
            return fragment(request, "_partials/bot_test_message.html", status=422, bot_id=bot_id,
                            errors=errors, user_id=raw_user, text=text)
        answer, failure = None, None
        try:
            answer = await max_client_of(runtime_of(request.app).link).send_message(
                token, user_id=int(raw_user), body=text_body(text))
        except MaxApiError as exc:
            failure = exc
        delivered, words = max_answer_words(failure, answer)
        log.info("test message for bot %s: %s", bot_id, "delivered" if delivered else "not delivered",
                 extra={"event": "test_message", "bot": bot_id, "user": raw_user,
                        "outcome": "sent" if delivered else "refused"})
        return fragment(request, "_partials/bot_test_message.html", bot_id=bot_id, errors={}, user_id=raw_user,
                        text=text, result={"delivered": delivered, "words": words})

    @post("/{bot_id:str}", include_in_schema=False)
    async def change(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "admin")
        if denied:
            return denied
        values: dict[str, Any] = _secrets(data)
        if "title" in data:
            values["title"] = data["title"].strip() or None
        changed_rule = False
        if "require_tests_shown" in data:
            values["require_tests"] = data.get("require_tests") == "on"
            stored = await db_session.get(BotRow, bot_id)
            changed_rule = stored is not None and bool(stored.require_tests) != values["require_tests"]
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
                        saved=sorted(k for k in values if k != "require_tests" or changed_rule),  # the checkbox is always sent
                        subscription=subscription, can_admin=True)

    @post("/{bot_id:str}/rollback", include_in_schema=False)
    async def rollback(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        flow_id = data.get("flow") or ""
        if not flow_id:
            return problem(request, _("Choose the publication to roll back to."), status=422)
        return await publish_version(request, db_session, bot_id, flow_id, data.get("version") or "",
                                     data.get("sessions") or "keep", bot_page=True)


ROUTES = [BotsController]
