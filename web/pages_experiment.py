"""The bot page's experiment panel: start an A/B test between versions, watch it live, promote or stop."""
from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.bots import bot_changed, runtime_store
from server.api.params import DbSession, PathStr
from server.errors import AppError, NotFound
from server.runtime.stores.base import StoreUnavailable
from server.services import bots as bot_service
from server.services import experiments, publishing
from server.services import versions as version_service
from server.services.experiment_input import MAX_ARMS
from server.runtime.lifecycle import runtime_if_started
from web import experiment_view as view
from web.i18n import gettext as _
from web.messages import human_detail, human_message
from web.pages import app_error, fragment, refusal, user_of

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
CHANGED = {"HX-Trigger": "versions-changed"}  # the publication history below refreshes itself


async def _states(db_session: DbSession, flow_id: str | None, version: int | None) -> list[tuple[str, str]]:
    """(id, title) of the states of a version, for the goal's choice and to name the goal."""
    if not flow_id or not version:
        return []
    try:
        flow = await version_service.version_flow(db_session, flow_id, version)
    except AppError:
        return []
    return [(s.id, s.title or s.id) for s in flow.states]


async def panel(request: HTMXRequest, db_session: DbSession, bot_id: str, *, errors: list[str] | None = None,
                typed: dict[str, str] | None = None, status: int = 200, headers: dict[str, str] | None = None,
                notice: str | None = None) -> Template:
    """The panel as it is now: the running (or last) experiment, and the start form when none runs."""
    bot = await bot_service.get_bot(db_session, bot_id, request.app.state.settings.public_url)
    experiment, unreachable = None, False
    try:
        experiment = await experiments.report(db_session, runtime_store(request), bot_id)
    except NotFound:
        pass
    except StoreUnavailable:
        unreachable = True
        experiment = experiments.record(await experiments.latest(db_session, bot_id))
    versions = await version_service.list_versions(db_session, bot["flow"]) if bot["flow"] else []
    goal_title = None
    if experiment is not None:
        states = dict(await _states(db_session, experiment["flow"], experiment["arms"][0]["version"]))
        goal_title = states.get(experiment["goal"]["state"], experiment["goal"]["state"])
    running = experiment is not None and experiment["status"] == "running"
    return fragment(request, "_partials/experiment_panel.html", status=status, headers=headers or {}, bot=bot,
                    experiment=experiment, running=running, unreachable=unreachable, goal_title=goal_title,
                    rows=view.arms(experiment, {}) if experiment else [],
                    chart=view.chart(experiment) if experiment and not unreachable else None,
                    confidence=view.confidence(experiment["auto_promote"]["confidence"])
                    if experiment and experiment["auto_promote"] else None,
                    versions=versions, goal_states=await _states(db_session, bot["flow"], bot["version"]),
                    can_publish=user_of(request).has_role("publisher"), errors=errors or [], typed=typed or {},
                    arm_slots=range(1, MAX_ARMS + 1), notice=notice)


def _whole(raw: str | None) -> int | None:
    raw = (raw or "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else None


def _body(data: dict[str, str], flow: str | None) -> tuple[dict[str, Any], list[str]]:
    """The start request from the form, and what is wrong with it in the reader's words."""
    problems: list[str] = []
    arms = []
    for slot in range(1, MAX_ARMS + 1):
        version, weight = _whole(data.get(f"version_{slot}")), (data.get(f"weight_{slot}") or "").strip()
        if version is None:
            continue
        if _whole(weight) is None or not 1 <= (_whole(weight) or 0) <= 1_000_000:
            problems.append(_("The weight of version %(n)s must be a whole number from 1.") % {"n": version})
        arms.append({"version": version, "weight": _whole(weight) or 0})
    chosen = [a["version"] for a in arms]
    if len(set(chosen)) < 2:
        problems.append(_("Choose at least two different versions to compare."))
    elif len(set(chosen)) != len(chosen):
        problems.append(_("Each version may be chosen once."))
    auto = None
    if data.get("auto") == "on":
        confidence, least = _whole(data.get("confidence")), _whole(data.get("min_dialogs"))
        if confidence is None or not 50 <= confidence <= 99:
            problems.append(_("The confidence is a percentage from 50 to 99."))
        if least is None or least < 1:
            problems.append(_("The least number of dialogs per version is a whole number from 1."))
        auto = {"confidence": (confidence or 0) / 100, "min_dialogs": least or 0}
    return {"flow": flow, "arms": arms, "goal": {"state": data.get("goal") or ""}, "auto_promote": auto}, problems


def _said(exc: AppError) -> list[str]:
    """A refusal of the start, one sentence per problem, in the reader's language where the form knows it."""
    said = []
    for detail in exc.details:
        path = str(detail.get("path", "")) if isinstance(detail, dict) else ""
        if path == "goal.state":
            said.append(_("The goal state is missing from a chosen version: pick a state every version has."))
        elif path.endswith(".version"):
            said.append(_("A chosen version no longer exists; reload the page and choose again."))
        elif isinstance(detail, dict):
            said.append(human_detail(detail)["message"])
    return said or [human_message(exc)]


class ExperimentController(Controller):
    path = "/bots/{bot_id:str}/experiment"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def show(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr) -> Template:
        try:
            return await panel(request, db_session, bot_id)
        except AppError as exc:
            return app_error(request, exc)

    @post("/", include_in_schema=False)
    async def start(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "publisher")
        if denied:
            return denied
        try:
            bot = await bot_service.get_bot(db_session, bot_id)
        except AppError as exc:
            return app_error(request, exc)
        body, problems = _body(data, bot["flow"])
        if problems:
            return await panel(request, db_session, bot_id, errors=problems, typed=data, status=422)
        try:
            await experiments.start(db_session, bot_id, body, user_of(request).username)
        except AppError as exc:
            await db_session.rollback()
            words = [_("Another experiment already runs on this bot; stop it first.")] if exc.status == 409 \
                else _said(exc)
            return await panel(request, db_session, bot_id, errors=words, typed=data, status=exc.status)
        await bot_changed(request, bot_id)
        return await panel(request, db_session, bot_id, notice=_("The experiment started: new dialogs are "
                                                                 "shared between the versions from now on."))

    @post("/stop", include_in_schema=False)
    async def stop(self, request: HTMXRequest, db_session: DbSession, bot_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "publisher")
        if denied:
            return denied
        promote = _whole(data.get("promote"))
        try:
            _record, publication = await experiments.stop(db_session, runtime_store(request), bot_id,
                                                          {"promote": promote}, user_of(request).username)
        except AppError as exc:
            await db_session.rollback()
            if exc.code == "no_experiment":
                return await panel(request, db_session, bot_id, status=409,
                                   errors=[_("The experiment has already ended; nothing was changed.")])
            return app_error(request, exc)
        if publication is not None:
            await publishing.notify_runtime(runtime_if_started(request.app), publication)
            notice = _("Version %(n)s is published alone; running dialogs finish on the version they started "
                       "on.") % {"n": promote}
        else:
            await bot_changed(request, bot_id)
            notice = _("The experiment is stopped; the bot serves its published version again.")
        return await panel(request, db_session, bot_id, headers=CHANGED, notice=notice)


ROUTES = [ExperimentController]
