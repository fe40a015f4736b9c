"""The editor page and its side-panel forms: each form post edits the draft at the revision it was opened on."""
from __future__ import annotations

from typing import Any, Callable

from litestar import Controller, Request, get, post
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template
from sqlalchemy.ext.asyncio import AsyncSession

from flows.model import ATTACHMENT_KINDS, INPUT_TYPES, OPS, TRIGGERS
from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.services import flows as flow_service
from web import form_settings, form_state, form_transition
from web.forms import Edit, Fields, form_data
from web.pages import app_error, fragment, problem, refusal, render, user_of

TRIGGER_HELP = {
    "input": "The state's input was valid (the value is already saved).",
    "text": "The message equals one of the texts (trimmed, any case) or matches the pattern.",
    "button": "A press of a button with this payload.",
    "attachment": "A message with an attachment of one of the kinds.",
    "event": "An external event sent through the API.",
    "timeout": "The user stayed idle in the state this long.",
    "invalid": "Max attempts invalid inputs in a row.",
    "else": "Any message nothing else took.",
}


def _state_choices(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["id"], f"{s.get('title') or s['id']} ({s['id']})" if s.get("title") else s["id"])
            for s in document.get("states") or [] if isinstance(s, dict) and "id" in s]


def _conflict(request: Request) -> Template:
    return problem(request, "Someone else saved this flow since you opened this form; nothing was saved. "
                            "Reload the editor to see their version.", status=409)


class EditorController(Controller):
    path = "/flows/{flow_id:str}/edit"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def page(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        try:
            document, _ = await flow_service.get_draft(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        user = user_of(request)
        return render(request, "editor.html", section="flows", can_edit=user.has_role("editor"),
                      flow={"id": flow_id, "title": document.get("title", "")})

    # ---- forms: GET draws the stored object, POST applies the edit ----

    @get("/state/{state_id:str}", include_in_schema=False)
    async def state_form(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                         state_id: PathStr) -> Template:
        return await self._show(request, db_session, flow_id, "state", state_id)

    @post("/state/{state_id:str}", include_in_schema=False)
    async def state_post(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                         state_id: PathStr) -> Template:
        return await self._edit(request, db_session, flow_id, "state", state_id,
                                lambda doc, f: form_state.edit_state(doc, state_id, f))

    @get("/transition/{transition_id:str}", include_in_schema=False)
    async def transition_form(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                              transition_id: PathStr) -> Template:
        return await self._show(request, db_session, flow_id, "transition", transition_id)

    @post("/transition/{transition_id:str}", include_in_schema=False)
    async def transition_post(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                              transition_id: PathStr) -> Template:
        return await self._edit(request, db_session, flow_id, "transition", transition_id,
                                lambda doc, f: form_transition.edit_transition(doc, transition_id, f))

    @get("/settings", include_in_schema=False)
    async def settings_form(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        return await self._show(request, db_session, flow_id, "settings", "")

    @post("/settings", include_in_schema=False)
    async def settings_post(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        return await self._edit(request, db_session, flow_id, "settings", "",
                                lambda doc, f: form_settings.edit_settings(doc, f))

    # ---- shared ----

    async def _show(self, request: Request, db: AsyncSession, flow_id: str, kind: str, key: str) -> Template:
        try:
            document, _ = await flow_service.get_draft(db, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        values = _values(document, kind, key)
        if values is None:
            return _gone(request, kind, key)
        return _form(request, flow_id, document, kind, key, values, {}, saved=False)

    async def _edit(self, request: Request, db: AsyncSession, flow_id: str, kind: str, key: str,
                    apply: Callable[[dict[str, Any], Fields], Edit]) -> Template:
        denied = refusal(request, "editor")
        if denied:
            return denied
        fields = Fields(form_data(await request.form()))
        try:
            document, revision = await flow_service.get_draft(db, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        if fields.text("revision") != revision:
            return _conflict(request)
        before = _values(document, kind, key)
        if before is None:
            return _gone(request, kind, key)
        edit = apply(document, fields)
        headers: dict[str, str] = {}
        if edit.document is not None and edit.changed:
            try:
                new_revision = await flow_service.save_draft(db, flow_id, edit.document, [revision],
                                                           user_of(request).username)
            except AppError as exc:
                if exc.status == 412:
                    return _conflict(request)
                return app_error(request, exc)
            headers["X-Botflow-Revision"] = new_revision
            document = edit.document
        new_key = edit.select.split(":", 1)[1] if edit.select and ":" in edit.select else key
        headers["X-Botflow-Select"] = f"{kind}:{new_key}" if kind != "settings" else "settings:"
        # Redraw only when the form's shape or its messages change, so a field being typed in is not replaced.
        redraw = bool(edit.errors or fields.text("_had_errors") or fields.text("_action")) or \
            _shape(before) != _shape(edit.values)
        if not redraw:
            headers["HX-Reswap"] = "none"
        values = edit.values if edit.errors else (_values(document, kind, new_key) or edit.values)
        return _form(request, flow_id, document, kind, new_key, values, edit.errors,
                     saved=not edit.errors, headers=headers)


def _values(document: dict[str, Any], kind: str, key: str) -> dict[str, Any] | None:
    if kind == "settings":
        return form_settings.settings_values(document)
    items = document.get("states" if kind == "state" else "transitions") or []
    found = next((i for i in items if isinstance(i, dict) and i.get("id") == key), None)
    if found is None:
        return None
    return form_state.state_values(document, found) if kind == "state" else form_transition.transition_values(found)


def _shape(values: dict[str, Any]) -> tuple[Any, ...]:
    """The values that decide which fields a form shows (input type, trigger, command modes, ...)."""
    commands = values.get("commands") or {}
    return (values.get("id"), (values.get("input") or {}).get("type"), values.get("on"),
            (values.get("reminder") or {}).get("enabled"), tuple(c.get("mode") for c in commands.values()),
            tuple(b.get("kind") for m in values.get("say") or [] for row in m["buttons"] for b in row),
            tuple(a.get("type") for a in values.get("actions") or []))


def _gone(request: Request, kind: str, key: str) -> Template:
    return problem(request, f"The {kind} {key} is no longer in the draft; someone may have removed it. "
                            "Reload the editor.", status=409)


def _form(request: Request, flow_id: str, document: dict[str, Any], kind: str, key: str, values: dict[str, Any],
          errors: dict[str, str], *, saved: bool, headers: dict[str, str] | None = None) -> Template:
    common = {"flow_id": flow_id, "v": values, "errors": errors, "saved": saved, "states": _state_choices(document)}
    if kind == "state":
        return fragment(request, "_partials/state_form.html", headers=headers, state_id=key,
                        input_types=[(t, t) for t in INPUT_TYPES], attachment_kinds=ATTACHMENT_KINDS, **common)
    if kind == "transition":
        return fragment(request, "_partials/transition_form.html", headers=headers, transition_id=key,
                        triggers=[(t, t) for t in TRIGGERS], trigger_help=TRIGGER_HELP, ops=OPS,
                        attachment_kinds=ATTACHMENT_KINDS, action_types=form_transition.ACTION_TYPES, **common)
    return fragment(request, "_partials/settings_form.html", headers=headers, command_help=form_settings.COMMAND_HELP,
                    modes=[(m, m) for m in form_settings.MODES], **common)


ROUTES = [EditorController]
