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
from web.choices import (
    ACTION_NAMES, INPUT_TYPE_NAMES, KIND_NAMES, MODE_NAMES, OP_NAMES, SAVE_AS_EXAMPLES, TRIGGER_NAMES, options,
)
from flows.validate import validation_result
from web.forms import Edit, Fields, form_data
from web.issues import issues_pane
from web.i18n import N_
from web.i18n import gettext as _
from web.pages import app_error, fragment, problem, refusal, render, user_of

TRIGGER_HELP = {
    "input": N_("The state's input was valid (the value is already saved)."),
    "text": N_("The message equals one of the texts (trimmed, any case) or matches the pattern."),
    "button": N_("A press of a button with this payload."),
    "attachment": N_("A message with an attachment of one of the kinds."),
    "event": N_("An event another system sends to the dialog."),
    "timeout": N_("The user stayed idle in the state this long."),
    "invalid": N_("The input was invalid as many times in a row as “Max attempts” allows."),
    "else": N_("Any message nothing else took."),
}


def _state_choices(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["id"], f"{s.get('title') or s['id']} ({s['id']})" if s.get("title") else s["id"])
            for s in document.get("states") or [] if isinstance(s, dict) and "id" in s]


def _conflict(request: Request) -> Template:
    return problem(request, _("Someone else saved this flow since you opened this form; nothing was saved. "
                              "Reload the editor to see their version."), status=409)


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
            document, _revision = await flow_service.get_draft(db, flow_id)  # as stored, for the editor
        # A rejected edit (a rename to a taken id, say) still edits the object the panel was opened on.
        new_key = edit.select.split(":", 1)[1] if edit.select and ":" in edit.select and not edit.errors else key
        if edit.errors:
            headers["X-Botflow-Rejected"] = str(len(edit.errors))
        headers["X-Botflow-Select"] = f"{kind}:{new_key}" if kind != "settings" else "settings:"
        # Redraw only when the form's shape or its messages change, so a field being typed in is not replaced.
        redraw = bool(edit.errors or fields.text("_had_errors") or fields.text("_action")) or \
            _shape(before) != _shape(edit.values)
        if not redraw:
            headers["HX-Reswap"] = "none"
        values = edit.values if edit.errors else (_values(document, kind, new_key) or edit.values)
        # The answer carries what the editor needs after the edit (the stored draft, the issues), so one
        # field edit costs one request.
        answer = {"revision": headers.get("X-Botflow-Revision"), "document": document if "X-Botflow-Revision" in headers
                  else None, "issues": issues_of(document)}
        return _form(request, flow_id, document, kind, new_key, values, edit.errors,
                     saved=not edit.errors, headers=headers, answer=answer)

    @get("/issues", include_in_schema=False)
    async def issues(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        try:
            document, _ = await flow_service.get_draft(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        return fragment(request, "_partials/issues.html", issues=issues_of(document), oob=False)


def issues_of(document: dict[str, Any]) -> dict[str, Any]:
    """The issues pane of a stored draft."""
    issues = validation_result(flow_service.draft_flow(document))["issues"]
    no_final = not any(isinstance(s, dict) and s.get("final") for s in document.get("states") or [])
    return issues_pane(issues, no_final)


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
    message = _("The state %(id)s is no longer in the draft; someone may have removed it. Reload the editor.") \
        if kind == "state" else _("The transition %(id)s is no longer in the draft; someone may have removed it. "
                                  "Reload the editor.")
    return problem(request, message % {"id": key}, status=409)


def _form(request: Request, flow_id: str, document: dict[str, Any], kind: str, key: str, values: dict[str, Any],
          errors: dict[str, str], *, saved: bool, headers: dict[str, str] | None = None,
          answer: dict[str, Any] | None = None) -> Template:
    common = {"flow_id": flow_id, "v": values, "errors": errors, "saved": saved, "states": _state_choices(document),
              "answer": answer}
    if kind == "state":
        return fragment(request, "_partials/state_form.html", headers=headers, state_id=key,
                        input_types=options(INPUT_TYPES, INPUT_TYPE_NAMES), save_as_examples=SAVE_AS_EXAMPLES,
                        attachment_kinds=options(ATTACHMENT_KINDS, KIND_NAMES), **common)
    if kind == "transition":
        return fragment(request, "_partials/transition_form.html", headers=headers, transition_id=key,
                        triggers=options(TRIGGERS, TRIGGER_NAMES), trigger_help=TRIGGER_HELP,
                        ops=options(OPS, OP_NAMES), attachment_kinds=options(ATTACHMENT_KINDS, KIND_NAMES),
                        action_types=options(form_transition.ACTION_TYPES, ACTION_NAMES), **common)
    return fragment(request, "_partials/settings_form.html", headers=headers, command_help=form_settings.COMMAND_HELP,
                    command_titles=form_settings.COMMAND_TITLES,
                    modes=options(form_settings.MODES, MODE_NAMES), **common)


ROUTES = [EditorController]
