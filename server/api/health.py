"""Liveness and readiness probes."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any

from litestar import Request, Response, get

from server.runtime.lifecycle import HasState, runtime_if_started

# Each check gets this long, and they run side by side, so /readyz answers well within 2 s in an outage.
CHECK_SECONDS = 1.5


@get("/healthz", tags=["health"], summary="Liveness: the process answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


async def _bounded(check: Any) -> bool:
    """Whether `check()` says yes within CHECK_SECONDS; an error or a timeout is a no."""
    try:
        result = check()
        return bool(await asyncio.wait_for(result, CHECK_SECONDS) if inspect.isawaitable(result) else result)
    except Exception:  # a failing or hanging check is an answer, not a crash
        return False


async def dependencies_answer(app: HasState) -> dict[str, bool]:
    """Whether each dependency answers, checked side by side: database, and redis (or dialog_store)."""
    state = app.state
    db = getattr(state, "db", None)
    checks: dict[str, Any] = {"database": (lambda: db.ping(CHECK_SECONDS)) if db is not None else (lambda: False)}
    runtime = runtime_if_started(app)
    if runtime is not None:
        # Name the dependency the spec asks about: Redis when configured, else the SQL-backed dialog store.
        name = "redis" if getattr(getattr(state, "settings", None), "redis_url", None) else "dialog_store"
        checks[name] = runtime.ready
    answers = await asyncio.gather(*(_bounded(check) for check in checks.values()))
    return dict(zip(checks, answers))


PARTS = ("webhooks", "designer")


@get("/readyz", tags=["health"], summary="Readiness: what this replica can serve (webhooks by default; "
     "?for=designer asks for the pages and the API)")
async def readyz(request: Request) -> Response:
    """200 when this replica can serve `for` (webhooks: the dialog store answers and bot settings can be
    read, from the database or the catalog's last copies; designer: the database answers); the body says
    every check and what the replica serves, so a database outage alone leaves the webhooks in balance."""
    part = request.query_params.get("for", "webhooks")
    if part not in PARTS:
        return Response({"error": "bad_request", "message": f"for must be one of {', '.join(PARTS)}"},
                        status_code=400)
    ok = await dependencies_answer(request.app)
    store = next((name for name in ("redis", "dialog_store") if name in ok), None)
    catalog = getattr(runtime_if_started(request.app), "catalog", None)
    serves = {
        "webhooks": (ok[store] and (ok["database"] or bool(catalog and catalog.has_copies()))) if store
        else ok["database"],
        "designer": ok["database"],
    }
    body = {"status": "ok" if all(ok.values()) else "degraded" if serves[part] else "unavailable",
            "checks": {name: "ok" if up else "unavailable" for name, up in ok.items()}, "serves": serves}
    return Response(body, status_code=200 if serves[part] else 503)


ROUTES = [healthz, readyz]
