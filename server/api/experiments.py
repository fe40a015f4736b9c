"""A/B experiments: /api/bots/{bot}/experiment (start, read) and /experiment/stop."""
from __future__ import annotations

import asyncio
import logging
import os
import uuid
from typing import Any

from litestar import Request, Response, get, post

from server.api.bots import bot_changed, runtime_store
from server.api.flows import actor
from server.api.params import DbSession, PathStr
from server.auth import requires_role
from server.bodies import json_body
from server.runtime.loop import repeat
from server.errors import Unavailable
from server.runtime.stores.base import StoreUnavailable
from server.services import experiments, publishing
from server.runtime.lifecycle import runtime_if_started, runtime_of

log = logging.getLogger("botflow.experiments")

CHECK_EVERY = 15.0  # seconds between auto-promotion passes; BOTFLOW_EXPERIMENT_CHECK overrides it


@post("/api/bots/{bot_id:str}/experiment", guards=[requires_role("publisher")], status_code=201,
      summary="Start an A/B experiment between versions of one flow (409 while another runs)")
async def start_experiment(bot_id: PathStr, request: Request, db_session: DbSession) -> Response:
    row = await experiments.start(db_session, bot_id, await json_body(request), actor(request))
    await bot_changed(request, bot_id)
    return Response(experiments.record(row), status_code=201,
                    headers={"Location": f"/api/bots/{bot_id}/experiment"})


@get("/api/bots/{bot_id:str}/experiment", guards=[requires_role("viewer")],
     summary="The running (or last) experiment: per arm dialogs, goal reached, conversion, probability to be best")
async def read_experiment(bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
    try:
        return await experiments.report(db_session, runtime_store(request), bot_id)
    except StoreUnavailable as exc:
        raise Unavailable(f"Dialog storage is unreachable, so the experiment cannot be counted: {exc}") from exc


@post("/api/bots/{bot_id:str}/experiment/stop", guards=[requires_role("publisher")], status_code=200,
      summary="End the experiment; {\"promote\": n} also publishes version n alone (sessions keep)")
async def stop_experiment(bot_id: PathStr, request: Request, db_session: DbSession) -> dict[str, Any]:
    record, publication = await experiments.stop(db_session, runtime_store(request), bot_id,
                                                 await json_body(request), actor(request))
    if publication is not None:
        await publishing.notify_runtime(runtime_if_started(request.app), publication)
        record["publication"] = publication
    else:
        await bot_changed(request, bot_id)
    return record


class AutoPromotion:
    """The background check of every replica; a lease per experiment lets one replica at a time look."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.holder = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.task: asyncio.Task[None] | None = None

    async def check_once(self) -> list[dict[str, Any]]:
        """One pass; the publications it made are applied to the runtime like any publish."""
        runtime = runtime_of(self.app)
        made = await experiments.auto_check(self.app.state.db.sessionmaker, runtime.store, self.holder)
        for publication in made:
            await publishing.notify_runtime(runtime, publication)
        return made

    def start(self) -> None:
        async def once() -> None:
            await self.check_once()

        every = float(os.environ.get("BOTFLOW_EXPERIMENT_CHECK") or CHECK_EVERY)
        self.task = asyncio.create_task(repeat("experiment auto-promotion", once, every, log))

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


ROUTES = [start_experiment, read_experiment, stop_experiment]
