"""The publish form's preview: what publishing the chosen version with the chosen mode does to running dialogs."""
from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Annotated, Any

from litestar import Controller, get
from litestar.params import QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from server.api.bots import runtime_store
from server.api.params import DbSession, PathStr
from flows.testing.runner import run_cases
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


class SavedTests:
    """The saved tests' outcome per flow, version and tests revision: each set runs once however often the
    preview asks (a version never changes, and saving tests makes a new revision)."""

    def __init__(self, kept: int = 64) -> None:
        self.kept = kept
        self._done: OrderedDict[tuple[str, int, str], dict[str, Any]] = OrderedDict()
        self._running: dict[tuple[str, int, str], asyncio.Task[dict[str, Any]]] = {}

    async def outcome(self, db_session: Any, flow_id: str, version: int) -> dict[str, Any] | None:
        """Counts and failing names (`slow`: not done in TESTS_SECONDS; None: they could not run)."""
        try:
            flow, cases, revision = await flow_tests.saved_cases(db_session, flow_id, version)
            key = (flow_id, version, revision)
            if key in self._done:
                return self._done[key]
            task = self._running.get(key)
            if task is None:  # a run outlasting one preview goes on for the next instead of starting again
                task = self._running[key] = asyncio.create_task(summary(flow, cases))
                task.add_done_callback(lambda done: self._finished(key, done))
            return await asyncio.wait_for(asyncio.shield(task), TESTS_SECONDS)
        except TimeoutError:
            return {"slow": True}
        except Exception as exc:  # the preview still says everything else
            log.warning("running the saved tests of %s version %s for the publish preview failed: %s", flow_id,
                        version, exc)
            return None

    def _finished(self, key: tuple[str, int, str], task: asyncio.Task[dict[str, Any]]) -> None:
        self._running.pop(key, None)
        if not task.cancelled() and task.exception() is None:
            self._done[key] = task.result()
            while len(self._done) > self.kept:
                self._done.popitem(last=False)


async def summary(flow: Any, cases: list[Any]) -> dict[str, Any]:
    """Run the cases off the event loop; their counts and the names of those failing."""
    report = await asyncio.to_thread(run_cases, flow, cases)
    return {"total": report["total"], "failed": report["failed"],
            "failing": [r["name"] for r in report["results"] if not r["passed"]]}


SAVED_TESTS = SavedTests()


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
                        tests=await SAVED_TESTS.outcome(db_session, flow_id, number))


ROUTES = [PublishPreviewController]
