"""The translation table of a flow: one row per text, one column per language, cells edited in place, and
gettext files to download and upload for translators."""
from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from flows.languages import listed
from flows.translations import rows
from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.services import flows as flow_service
from server.services import translations as service
from web.i18n import gettext as _
from web.i18n import language_name, ngettext
from web.messages import human_message
from web.pages import app_error, fragment, problem, refusal, render, user_of

Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
Upload = Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)]


def place(row: dict[str, Any], document: dict[str, Any]) -> str:
    """Where a text is, as the forms name it: «Phone» · message 1, the fallback reply, ..."""
    keys = row["keys"]
    if keys[0] == "states":
        state = document["states"][keys[1]]
        where = f"«{state.get('title') or state.get('id')}»"
        rest = keys[2:]
        if rest[0] == "say":
            what = _("message %(n)s") % {"n": rest[1] + 1}
            if "buttons" in rest:
                what = _("button «%(text)s»") % {"text": row["texts"][listed(document)[0]][:40]}
        else:
            what = _("choices") if rest[-1] == "choices" else _("error text")
        return f"{where} · {what}"
    if keys[0] == "settings":
        if keys[1] == "fallback":
            return _("Fallback reply")
        return _("Reminder button «%(text)s»") % {"text": row["texts"][listed(document)[0]][:40]} \
            if "buttons" in keys else _("Reminder")
    return _("Reply of the %(name)s command") % {"name": keys[1]}


def table_rows(document: dict[str, Any], missing_only: bool) -> list[dict[str, Any]]:
    found = []
    for row in rows(document):
        if missing_only and not row["missing"]:
            continue
        found.append({**row, "place": place(row, document)})
    return found


def columns(document: dict[str, Any]) -> list[dict[str, Any]]:
    codes = listed(document)
    return [{"code": code, "name": language_name(code), "default": i == 0} for i, code in enumerate(codes)]


class TranslationsController(Controller):
    path = "/flows/{flow_id:str}/translations"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def page(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Template:
        try:
            document, _revision = await flow_service.get_draft(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        missing_only = request.query_params.get("missing") == "1"
        return self._page(request, flow_id, document, missing_only)

    def _page(self, request: HTMXRequest, flow_id: str, document: dict[str, Any], missing_only: bool,
              report: dict[str, Any] | None = None, status: int = 200) -> Template:
        return render(request, "translations.html", status=status, section="flows",
                      flow={"id": flow_id, "title": document.get("title", "")},
                      columns=columns(document), rows=table_rows(document, missing_only),
                      all_rows=len(rows(document)) if listed(document) else 0, missing_only=missing_only,
                      can_edit=user_of(request).has_role("editor"), report=report)

    @post("/cell", include_in_schema=False)
    async def cell(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr, data: Form) -> Template:
        denied = refusal(request, "editor")
        if denied:
            return denied
        path, code, text = data.get("path", ""), data.get("language", ""), data.get("text", "")
        try:
            document, revision = await flow_service.get_draft(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        try:
            edited = service.edit_cell(document, path, code, text)
            await flow_service.save_draft(db_session, flow_id, edited, [revision], user_of(request).username)
        except AppError as exc:
            # The row stays, with the refusal under the cell it is about.
            row = next((r for r in table_rows(document, False) if r["path"] == path), None) if listed(document) else None
            if row is None:
                return problem(request, human_message(exc), status=exc.status)
            return fragment(request, "_partials/translation_row.html", status=exc.status, row=row,
                            columns=columns(document), flow={"id": flow_id}, can_edit=True, failed=code,
                            error=human_message(exc))
        row = next((r for r in table_rows(edited, False) if r["path"] == path), None)
        return fragment(request, "_partials/translation_row.html", row=row, columns=columns(edited),
                        flow={"id": flow_id}, can_edit=True, saved=code)

    @post("/upload", include_in_schema=False, request_max_body_size=service.MAX_PO_BYTES + 64 * 1024)
    async def upload(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr, data: Upload) -> Template:
        denied = refusal(request, "editor")
        if denied:
            return denied
        code = str(data.get("language") or "")
        upload = data.get("file")
        try:
            document, _revision = await flow_service.get_draft(db_session, flow_id)
        except AppError as exc:
            return app_error(request, exc)
        if not isinstance(upload, UploadFile):
            return self._page(request, flow_id, document, False, {"error": _("Choose the .po file to upload.")}, 400)
        content = await upload.read(service.MAX_PO_BYTES + 1)
        try:
            result = await service.import_into_draft(db_session, flow_id, code, content, user_of(request).username)
        except AppError as exc:
            return self._page(request, flow_id, document, False, {"error": human_message(exc)}, exc.status)
        document, _revision = await flow_service.get_draft(db_session, flow_id)
        n, stale = len(result["changed"]), len(result["stale"]) + len(result["unknown"])
        said = ngettext("%(n)s translation into %(lang)s was taken from the file.",
                        "%(n)s translations into %(lang)s were taken from the file.", n) \
            % {"n": n, "lang": language_name(code)}
        if stale:
            said += " " + ngettext("%(n)s was left out: its source text has changed since the export.",
                                   "%(n)s were left out: their source texts have changed since the export.", stale) \
                % {"n": stale}
        return self._page(request, flow_id, document, False, {"message": said})


ROUTES = [TranslationsController]
