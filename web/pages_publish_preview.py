"""The publish form's preview: what publishing the chosen version with the chosen mode does to running dialogs."""
from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any

from litestar import Controller, get
from litestar.params import QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.bots import runtime_store
from server.api.params import DbSession, PathStr
from server.errors import AppError
from server.runtime.stores.base import StoreUnavailable
from server.services import bots as bot_service
from server.services import flow_tests, publish_preview, publishing
from server.services import versions as version_service
from web.i18n import gettext as _
from web.pages import fragment

Query = Annotated[str, QueryParameter()]
log = logging.getLogger("botflow.web.publish")
TESTS_SECONDS = 3.0  # the preview waits at most this for the saved tests (hundreds of them take seconds)


async def saved_tests(db_session: Any, flow_id: str, version: int) -> dict[str, Any] | None:
    """The saved tests' outcome on the version (`slow`: not done in time; None: they could not run)."""
    try:
        report = await asyncio.wait_for(flow_tests.run_saved(db_session, flow_id, version), TESTS_SECONDS)
    except TimeoutError:
        return {"slow": True}
    except Exception as exc:  # the preview still says everything else
        log.warning("running the saved tests of %s version %s for the publish preview failed: %s", flow_id, version,
                    exc)
        return None
    failing = [r["name"] for r in report["results"] if not r["passed"]]
    return {"total": report["total"], "failed": report["failed"], "failing": failing}


class PublishPreviewController(Controller):
    path = "/flows/{flow_id:str}/publish/preview"
    request_class = HTMXRequest

    @get("/", include_in_schema=False)
    async def preview(self, request: HTMXRequest, db_session: DbSession, flow_id: PathStr, bot: Query = "",
                      version: Query = "", sessions: Query = "keep") -> Template:
        def say(message: str, status: int = 200) -> Template:
            return fragment(request, "_partials/publish_preview.html", status=status, preview=None, message=message)

        store = runtime_store(request)
        if not bot:
            return say(_("Choose the bot to see what publishing does to its running dialogs."))
        if sessions not in publish_preview.SESSION_MODES:
            return say(_("Choose what happens to the dialogs already running."), 400)
        try:
            number = version_service.parse_number(version, flow_id) if version else None
            number = await publishing.resolve_version(db_session, flow_id, number)
            if store is None:
                return say(_("The runtime is not running here, so running dialogs cannot be counted."))
            found = await publish_preview.preview(db_session, store, bot, flow_id, number, sessions)
            chosen = await bot_service.get_bot(db_session, bot)
        except AppError as exc:  # the form offers only existing bots and versions: one was deleted meanwhile
            if exc.code == "no_version":
                return say(_("This flow has no version yet: freeze the draft first."))
            return say(_("That bot or version is no longer there; reload the page."))
        except StoreUnavailable:
            return say(_("Running dialogs cannot be counted right now; the publish itself still works."))
        return fragment(request, "_partials/publish_preview.html", preview=found, message=None,
                        token_set=chosen["token_set"], require_tests=chosen["require_tests"],
                        tests=await saved_tests(db_session, flow_id, number))


ROUTES = [PublishPreviewController]
