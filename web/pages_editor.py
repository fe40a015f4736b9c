"""The editor page and its side-panel forms: each form post edits the draft at the revision it was opened on."""
from __future__ import annotations

from typing import Any, Callable

from litestar import Controller, Request, get, post
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template
from sqlalchemy.ext.asyncio import AsyncSession

from flows.errors import FlowFormatError
from flows.model import ATTACHMENT_KINDS, INPUT_TYPES, OPS, TRIGGERS
from flows.languages import listed
from flows.translations import flat, restore, rows, set_text
from server.api.params import DbSession, PathStr
from server.bodies import if_match
from server import design_pool
from server.errors import AppError
from server.services import design_work
from server.services import flows as flow_service
from web import durations, form_settings, form_state, form_transition
from web.choices import (
    ACTION_NAMES, INPUT_TYPE_NAMES, KIND_NAMES, MODE_NAMES, OP_NAMES, SAVE_AS_EXAMPLES, TRIGGER_NAMES, options,
)
from web.forms import Edit, Fields, form_data
from web.issues import issues_pane
from web.i18n import N_
from web.i18n import gettext as _
from web.i18n import language_name
from web.pages import app_error, fragment, problem, refusal, render, user_of
from web.pages_translations import place

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


def _state_titles(document: dict[str, Any]) -> dict[str, str]:
    """State id -> title, for the panel's heading (a state without a title is named by its id there)."""
    return {str(s["id"]): s["title"] for s in document.get("states") or []
            if isinstance(s, dict) and "id" in s and isinstance(s.get("title"), str) and s["title"].strip()}


def _conflict(request: Request) -> Template:
    """The answer to a form post made on a revision that is no longer the draft's: 412, as the canvas gets."""
    return problem(request, _("Someone else saved this flow since you opened this form; nothing was saved. "
                              "Reload the editor to see their version."), status=412)


async def _posted(request: Request, db: AsyncSession, flow_id: str) -> Template | tuple[Fields, dict[str, Any], str]:
    """A side-panel post's fields with the draft it edits, read once; the refusal instead for a viewer, a missing
    flow, a post without If-Match (428) or one whose If-Match is not the draft's revision any more (412)."""
    denied = refusal(request, "editor")
    if denied:
        return denied
    fields = Fields(form_data(await request.form()))
    try:
        document, revision = await flow_service.get_draft(db, flow_id)
    except AppError as exc:
        return app_error(request, exc)
    expected = if_match(request)
    if expected is None:
        return problem(request, _("The form was sent without the revision it edits; reload the editor and "
                                  "make the change again."), status=428)
    if revision not in expected:
        return _conflict(request)
    return fields, document, revision


async def _stored(request: Request, db: AsyncSession, flow_id: str, edited: dict[str, Any], revision: str
                  ) -> Template | FlowFormatError | tuple[str, dict[str, Any], dict[str, Any]]:
    """Save an edited draft, loaded once in a design worker: (new revision, the document as stored, its issues
    pane); the loader's refusal of the edit; a refusal page for a conflict or another error."""
    try:
        loaded = await design_pool.run(design_work.edit_checked, edited, flow_service.action_allow())
        if isinstance(loaded, FlowFormatError):
            return loaded
        new_revision = await flow_service.store_draft(db, flow_id, loaded.checked, [revision],
                                                      user_of(request).username)
    except AppError as exc:
        return _conflict(request) if exc.status == 412 else app_error(request, exc)
    return new_revision, loaded.document, _pane(loaded.document, loaded.validation)


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
                                lambda doc, f: form_state.edit_state(doc, state_id, f, check=False))

    @get("/transition/{transition_id:str}", include_in_schema=False)
    async def transition_form(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                              transition_id: PathStr) -> Template:
        return await self._show(request, db_session, flow_id, "transition", transition_id)

    @post("/transition/{transition_id:str}", include_in_schema=False)
    async def transition_post(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                              transition_id: PathStr) -> Template:
        return await self._edit(request, db_session, flow_id, "transition", transition_id,
                                lambda doc, f: form_transition.edit_transition(doc, transition_id, f, check=False))

    @get("/settings", include_in_schema=False)
    async def settings_form(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        return await self._show(request, db_session, flow_id, "settings", "")

    @post("/settings", include_in_schema=False)
    async def settings_post(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        return await self._edit(request, db_session, flow_id, "settings", "",
                                lambda doc, f: form_settings.edit_settings(doc, f, check=False))

    @post("/translate/state/{state_id:str}", include_in_schema=False)
    async def translate_state(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr,
                              state_id: PathStr) -> Template:
        return await self._translate(request, db_session, flow_id, "state", state_id)

    @post("/translate/settings", include_in_schema=False)
    async def translate_settings(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        return await self._translate(request, db_session, flow_id, "settings", "")

    # ---- shared ----

    async def _show(self, request: Request, db: AsyncSession, flow_id: str, kind: str, key: str) -> Template:
        try:
            document, _ = await flow_service.get_draft(db, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        lang = request.query_params.get("lang") or ""
        if kind != "transition" and lang in listed(document)[1:]:
            texts = _texts(document, kind, key, lang)
            if texts is None:
                return _gone(request, kind, key)
            return _translate_form(request, flow_id, document, kind, key, lang, texts, {})
        values = _values(flat(document), kind, key)
        if values is None:
            return _gone(request, kind, key)
        return _form(request, flow_id, document, kind, key, values, {}, saved=False)

    async def _edit(self, request: Request, db: AsyncSession, flow_id: str, kind: str, key: str,
                    apply: Callable[[dict[str, Any], Fields], Edit]) -> Template:
        posted = await _posted(request, db, flow_id)
        if isinstance(posted, Template):
            return posted
        fields, document, revision = posted
        # The forms edit the default language's texts as plain strings; the other languages are put back.
        plain = flat(document)
        before = _values(plain, kind, key)
        if before is None:
            return _gone(request, kind, key)
        edit = apply(plain, fields)
        if edit.document is not None:
            edit.document = restore(document, edit.document)
            edit.changed = edit.document != document
        headers: dict[str, str] = {}
        issues: dict[str, Any] | None = None
        if edit.document is not None and edit.changed:
            stored = await _stored(request, db, flow_id, edit.document, revision)
            if isinstance(stored, Template):
                return stored
            if isinstance(stored, FlowFormatError):
                edit.refuse(stored.details or [{"path": "", "message": stored.message}])
            else:
                headers["X-Botflow-Revision"], document, issues = stored
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
        values = edit.values if edit.errors else (_values(flat(document), kind, new_key) or edit.values)
        if kind == "settings" and not edit.errors:
            values = form_settings.keep_command_texts(values, edit.values)
        # The answer carries what the editor needs after the edit (the stored draft, the issues), so one
        # field edit costs one request.
        answer = {"revision": headers.get("X-Botflow-Revision"), "document": document if "X-Botflow-Revision" in headers
                  else None, "issues": issues if issues is not None else await issues_of(document)}
        return _form(request, flow_id, document, kind, new_key, values, edit.errors,
                     saved=not edit.errors, headers=headers, answer=answer)

    async def _translate(self, request: Request, db: AsyncSession, flow_id: str, kind: str, key: str) -> Template:
        """Save the translations a state's (or the settings') translation form posts, one language at a time."""
        posted = await _posted(request, db, flow_id)
        if isinstance(posted, Template):
            return posted
        fields, document, revision = posted
        lang = fields.text("lang")
        texts = _texts(document, kind, key, lang) if lang in listed(document)[1:] else None
        if texts is None:
            return _gone(request, kind, key)
        edited = document
        for row in texts:
            text = fields.text(f"t:{row['path']}", row["own"])
            if text != row["own"]:
                edited = set_text(edited, row["path"], lang, text)
        headers = {"HX-Reswap": "none", "X-Botflow-Select": f"{kind}:{key}" if kind != "settings" else "settings:"}
        answer: dict[str, Any] = {"revision": None, "document": None, "issues": None}
        if edited is not document:
            stored = await _stored(request, db, flow_id, edited, revision)
            if isinstance(stored, Template):
                return stored
            if isinstance(stored, FlowFormatError):
                raise stored  # a translation cannot break the format: answered as any refused document is
            new_revision, document, answer["issues"] = stored
            headers["X-Botflow-Revision"] = new_revision
            answer.update(revision=new_revision, document=document)
        if answer["issues"] is None:
            answer["issues"] = await issues_of(document)
        return _translate_form(request, flow_id, document, kind, key, lang, _texts(document, kind, key, lang) or [],
                               answer, headers=headers)

    @get("/issues", include_in_schema=False)
    async def issues(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        try:
            document, _ = await flow_service.get_draft(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        return fragment(request, "_partials/issues.html", issues=await issues_of(document), oob=False)


async def issues_of(document: dict[str, Any]) -> dict[str, Any]:
    """The issues pane of a stored draft (validated in a design worker)."""
    return _pane(document, await design_pool.run(design_work.validation_of, document))


def _pane(document: dict[str, Any], validation: dict[str, Any]) -> dict[str, Any]:
    no_final = not any(isinstance(s, dict) and s.get("final") for s in document.get("states") or [])
    return issues_pane(validation["issues"], no_final, document)


def _values(document: dict[str, Any], kind: str, key: str) -> dict[str, Any] | None:
    if kind == "settings":
        return form_settings.settings_values(document)
    items = document.get("states" if kind == "state" else "transitions") or []
    found = next((i for i in items if isinstance(i, dict) and i.get("id") == key), None)
    if found is None:
        return None
    return form_state.state_values(document, found) if kind == "state" else form_transition.transition_values(found)


def _texts(document: dict[str, Any], kind: str, key: str, lang: str) -> list[dict[str, Any]] | None:
    """The texts of a state (or of the settings and commands) in `lang`, each with the default's text."""
    codes = listed(document)
    if kind == "state":
        index = next((i for i, s in enumerate(document.get("states") or []) if isinstance(s, dict)
                      and s.get("id") == key), None)
        if index is None:
            return None
        mine = [row for row in rows(document) if row["keys"][:2] == ("states", index)]
    else:
        mine = [row for row in rows(document) if row["keys"][0] in ("settings", "commands")]
    return [{"path": row["path"], "place": place(row, document), "kind": row["kind"], "own": row["texts"][lang],
             "source": row["texts"][codes[0]]} for row in mine]


def _translate_form(request: Request, flow_id: str, document: dict[str, Any], kind: str, key: str, lang: str,
                    texts: list[dict[str, Any]], answer: dict[str, Any], *,
                    headers: dict[str, str] | None = None) -> Template:
    codes = listed(document)
    return fragment(request, "_partials/translate_form.html", headers=headers, flow_id=flow_id, kind=kind, key=key,
                    titles=_state_titles(flat(document)),
                    lang=lang, lang_name=language_name(lang), default_name=language_name(codes[0]), texts=texts,
                    answer=answer or None)


def _shape(values: dict[str, Any]) -> tuple[Any, ...]:
    """The values that decide which fields a form shows (input type, trigger, command modes, ...)."""
    commands = values.get("commands") or {}
    reminder = values.get("reminder") or {}
    return (values.get("id"), (values.get("input") or {}).get("type"), values.get("on"),
            reminder.get("enabled"), tuple(c.get("mode") for c in commands.values()),
            tuple(b.get("kind") for row in reminder.get("buttons") or [] for b in row),
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
    common: dict[str, Any] = {"flow_id": flow_id, "v": values, "errors": errors, "saved": saved,
                              "states": _state_choices(document), "titles": _state_titles(flat(document)),
                              "answer": answer, "units": durations.unit_choices()}
    if kind == "state":
        return fragment(request, "_partials/state_form.html", headers=headers, state_id=key,
                        input_types=options(INPUT_TYPES, INPUT_TYPE_NAMES), save_as_examples=SAVE_AS_EXAMPLES,
                        attachment_kinds=options(ATTACHMENT_KINDS, KIND_NAMES), **common)
    if kind == "transition":
        return fragment(request, "_partials/transition_form.html", headers=headers, transition_id=key,
                        triggers=options(TRIGGERS, TRIGGER_NAMES), trigger_help=TRIGGER_HELP,
                        ops=options(OPS, OP_NAMES), attachment_kinds=options(ATTACHMENT_KINDS, KIND_NAMES),
                        action_types=options(form_transition.ACTION_TYPES, ACTION_NAMES),
                        flow_languages=[(code, language_name(code).capitalize()) for code in listed(document)], **common)
    return fragment(request, "_partials/settings_form.html", headers=headers, command_help=form_settings.COMMAND_HELP,
                    command_titles=form_settings.COMMAND_TITLES,
                    modes=options(form_settings.MODES, MODE_NAMES), **common)


ROUTES = [EditorController]
