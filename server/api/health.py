"""Liveness and readiness probes."""
from __future__ import annotations

import inspect

from litestar import Request, Response, get


@get("/healthz", tags=["health"], summary="Liveness: the process answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", tags=["health"], summary="Readiness: the database (and Redis, when configured) answer")
async def readyz(request: Request) -> Response:
    checks: dict[str, str] = {}
    db = getattr(request.app.state, "db", None)
    checks["database"] = "ok" if db is not None and await db.ping() else "unavailable"
    runtime = getattr(request.app.state, "runtime", None)
    ready = getattr(runtime, "ready", None)
    if ready is not None:
        try:
            result = ready()
            ok = await result if inspect.isawaitable(result) else result
        except Exception:  # a failing check is an answer, not a crash
            ok = False
        # Name the dependency the spec asks about: Redis when configured, else the SQL-backed dialog store.
        settings = getattr(request.app.state, "settings", None)
        name = "redis" if getattr(settings, "redis_url", None) else "dialog_store"
        checks[name] = "ok" if ok else "unavailable"
    healthy = all(value == "ok" for value in checks.values())
    body = {"status": "ok" if healthy else "unavailable", "checks": checks}
    return Response(body, status_code=200 if healthy else 503)


ROUTES = [healthz, readyz]
