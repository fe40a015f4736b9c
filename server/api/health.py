"""Liveness and readiness probes."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any

from litestar import Request, Response, get

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


@get("/readyz", tags=["health"], summary="Readiness: the database (and Redis, when configured) answer")
async def readyz(request: Request) -> Response:
    state = request.app.state
    db = getattr(state, "db", None)
    checks: dict[str, Any] = {"database": (lambda: db.ping(CHECK_SECONDS)) if db is not None else (lambda: False)}
    ready = getattr(getattr(state, "runtime", None), "ready", None)
    if ready is not None:
        # Name the dependency the spec asks about: Redis when configured, else the SQL-backed dialog store.
        name = "redis" if getattr(getattr(state, "settings", None), "redis_url", None) else "dialog_store"
        checks[name] = ready
    answers = await asyncio.gather(*(_bounded(check) for check in checks.values()))
    results = {name: "ok" if ok else "unavailable" for name, ok in zip(checks, answers)}
    healthy = all(answers)
    body = {"status": "ok" if healthy else "unavailable", "checks": results}
    return Response(body, status_code=200 if healthy else 503)


ROUTES = [healthz, readyz]
