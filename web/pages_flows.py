"""The flows list: status of each flow, create, import a JSON/YAML file, export, delete."""
from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.enums import MediaType, RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template
from sqlalchemy.ext.asyncio import AsyncSession

from flows.errors import DocumentSyntaxError, FlowFormatError
from flows.export import EXPORT_FORMATS
from flows.limits import MAX_DOCUMENT_BYTES
from flows.load import parse_text
from flows.model import FORMAT
from server.bodies import unreadable
from server.api.params import DbSession, PathStr
from server import design_pool
from server.errors import AppError
from server.services import bots as bot_service
from server.services import design_work
from server.services import flows as flow_service
from server.runtime.lifecycle import runtime_if_started
from web.i18n import N_, current_language
from web.i18n import gettext as _
from web.i18n import ngettext
from web.messages import human_message, syntax_problem
from web.pages import app_error, fragment, problem, redirect, refusal, render, user_of

EXTENSIONS = {"json": "json", "yaml": "yaml", "mermaid": "mmd", "dot": "dot", "scxml": "scxml"}
FORMAT_NAMES = {"json": "JSON", "yaml": "YAML", "mermaid": "Mermaid", "dot": "Graphviz", "scxml": "SCXML"}
MAX_IMPORT = 2 * 1024 * 1024
# The example flows of the repository (web/examples links to examples/, so a wheel carries them too).
EXAMPLES = Path(__file__).resolve().parent / "examples"
# What each example is, in the reader's language; the bots themselves speak Russian, as their titles do.
EXAMPLE_NAMES = {"booking": N_("Salon booking"), "order": N_("Coffee shop order"),
                 "registration": N_("Registration"), "support": N_("Support desk")}


@functools.cache
def examples() -> dict[str, dict[str, Any]]:
    """The example documents a new flow can start from, by file name."""
    found = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        found[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    return found


def example_name(key: str, doc: dict[str, Any]) -> str:
    """How the new-flow form offers an example: by its Russian title, or named and marked Russian for others."""
    if current_language() == "ru" or key not in EXAMPLE_NAMES:
        return _("the example “%(title)s”") % {"title": doc.get("title") or key}
    return _("the example “%(title)s” (its bot speaks Russian)") % {"title": _(EXAMPLE_NAMES[key])}


async def flow_rows(db: AsyncSession) -> list[dict[str, Any]]:
    """Each flow with its draft revision, latest version and the bots serving it (with their version)."""
    served: dict[str, list[dict[str, Any]]] = {}
    for bot in await bot_service.list_bots(db):
        if bot["flow"]:
            served.setdefault(bot["flow"], []).append({"id": bot["id"], "version": bot["version"]})
    return [{**row, "bots": served.get(row["id"], [])} for row in await flow_service.list_flows(db)]


def _format_of(filename: str) -> str | None:
    name = filename.lower()
    if name.endswith(".json"):
        return "json"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    return None


class FlowsController(Controller):
    path = "/flows"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def index(self, request: HTMXRequest, db_session: DbSession) -> Template:
        return await self._table(request, db_session)

    async def _table(self, request: Request, db: AsyncSession, error: str | None = None,
                     status: int = 200) -> Template:
        return render(request, "flows.html", "_partials/flows_table.html", status=status, section="flows",
                      flows=await flow_rows(db), formats=EXPORT_FORMATS, format_names=FORMAT_NAMES, error=error,
                      can_edit=user_of(request).has_role("editor"),
                      examples=[(key, example_name(key, doc)) for key, doc in examples().items()])

    @post("/", include_in_schema=False)
    async def create(self, request: HTMXRequest, db_session: DbSession,
                     data: Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Any:
        denied = refusal(request, "editor")
        if denied:
            return denied
        flow_id, title = (data.get("id") or "").strip(), (data.get("title") or "").strip()
        example = data.get("example") or ""
        if example and example not in examples():
            return problem(request, _("Choose an example from the list."), status=422)
        if example:
            document = {**copy.deepcopy(examples()[example]), "id": flow_id}
            document["title"] = title or document.get("title", "")
        else:
            document = {"format": FORMAT, "id": flow_id, "title": title, "states": [], "transitions": []}
        try:
            await flow_service.create_flow(db_session, document, user_of(request).username)
        except FlowFormatError as exc:
            return problem(request, _("The flow cannot be created."), exc.details, status=422)
        except AppError as exc:
            return app_error(request, exc)
        return redirect(request, f"/flows/{flow_id}/edit")

    @post("/import", include_in_schema=False, request_max_body_size=MAX_DOCUMENT_BYTES)
    async def import_file(self, request: HTMXRequest, db_session: DbSession,
                          data: Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)]) -> Any:
        denied = refusal(request, "editor")
        if denied:
            return denied
        upload = data.get("document")
        if not isinstance(upload, UploadFile):
            return problem(request, _("Choose a JSON or YAML file to import."), status=400)
        content = await upload.read(MAX_IMPORT + 1)
        if len(content) > MAX_IMPORT:
            return problem(request, _("The file is larger than %(size)s KiB.") % {"size": MAX_IMPORT // 1024},
                           status=413)
        name = upload.filename or ""
        if not content.strip():
            return problem(request, _("%(file)s is empty: choose the file that holds the flow.") % {"file": name},
                           status=422)
        replace = data.get("replace") == "1"
        try:
            raw = parse_text(content, _format_of(name))
            if replace and isinstance(raw, dict) and isinstance(raw.get("id"), str):
                await flow_service.save_draft(db_session, raw["id"], raw, None, user_of(request).username)
                row = await flow_service.get_row(db_session, raw["id"])
            else:
                row = await flow_service.create_flow(db_session, raw, user_of(request).username)
        except DocumentSyntaxError as exc:
            return problem(request, _("%(file)s cannot be read.") % {"file": name},
                           [{"path": "", "message": syntax_problem(exc)}], status=422)
        except FlowFormatError as exc:
            count = len(exc.details) or 1
            return problem(request, ngettext("%(file)s is not a valid flow document (%(n)s problem).",
                                             "%(file)s is not a valid flow document (%(n)s problems).", count)
                           % {"file": name, "n": count},
                           exc.details or [{"path": "", "message": exc.message}], status=422)
        except AppError as exc:
            if exc.code == "flow_exists":
                return fragment(request, "_partials/import_exists.html", status=409, message=human_message(exc))
            return app_error(request, exc)
        except (ValueError, RecursionError) as exc:  # a 5000-digit number, nesting past the parser's depth
            message = unreadable(exc) if isinstance(exc, ValueError) else _("The document is nested too deeply to read.")
            return problem(request, _("%(file)s cannot be read.") % {"file": name}, [{"path": "", "message": message}],
                           status=422)
        return fragment(request, "_partials/imported.html", headers={"HX-Trigger": "flows-changed"},
                        flow={"id": row.id, "title": row.title}, replaced=replace)

    @get("/{flow_id:str}/export/{fmt:str}", include_in_schema=False, media_type=MediaType.HTML)
    async def export_flow(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr, fmt: PathStr) -> Any:
        if fmt not in EXPORT_FORMATS:
            return problem(request, _("Unknown format %(fmt)s; choose one of %(all)s.")
                           % {"fmt": fmt, "all": ", ".join(EXPORT_FORMATS)}, status=404)
        try:
            stored = (await flow_service.get_row(db_session, flow_id)).document
            text, media_type = await design_pool.run(design_work.exported, stored, fmt, None)
        except AppError as exc:
            return app_error(request, exc)
        filename = f"{flow_id}.{EXTENSIONS[fmt]}"
        return Response(text, media_type=media_type,
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    @post("/{flow_id:str}/delete", include_in_schema=False, media_type=MediaType.HTML)
    async def delete(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr) -> Any:
        denied = refusal(request, "editor")
        if denied:
            return denied
        user = user_of(request)
        try:
            ended = await flow_service.delete_flow(db_session, flow_id, user.role, user.username)
            runtime = runtime_if_started(request.app)
            if runtime is not None:
                for bot_id in ended:  # their experiments ended with the versions
                    await runtime.bot_changed(bot_id)
        except AppError as exc:
            return await self._table(request, db_session, error=human_message(exc), status=exc.status)
        return await self._table(request, db_session)


ROUTES = [FlowsController]
