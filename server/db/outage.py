"""Telling a database outage from a bug: such errors answer 503 with a sentence, and are counted."""
from __future__ import annotations

import logging
from types import TracebackType

from html import escape

from litestar import MediaType, Request, Response
from sqlalchemy import exc as sa_exc

from server.errors import error_body, internal_error_handler
from server.metrics import DATABASE_ERRORS

log = logging.getLogger("botflow.db")

# Modules whose frames mark an OSError (refused, reset, timed out) as the database's.
DRIVER_MODULES = ("asyncpg", "aiosqlite", "sqlalchemy", "server.db")
UNAVAILABLE_MESSAGE = "The database is not answering right now; nothing was changed. Retry in a moment."
PAGE_MESSAGE = "The server cannot reach its database right now, so nothing was changed. Try again in a moment."


class DatabaseUnavailable(Exception):
    """The database did not answer within the configured time, or refused the connection."""


def _from_driver(tb: TracebackType | None) -> bool:
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith(DRIVER_MODULES):
            return True
        tb = tb.tb_next
    return False


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` means the database cannot be reached (not a bad query or a bug)."""
    if isinstance(exc, DatabaseUnavailable | sa_exc.TimeoutError | sa_exc.OperationalError | sa_exc.InterfaceError):
        return True
    if isinstance(exc, sa_exc.DBAPIError):
        return bool(exc.connection_invalidated)
    # asyncpg raises plain OSErrors (TimeoutError, ConnectionRefusedError) from connect and command timeouts.
    return isinstance(exc, OSError) and _from_driver(exc.__traceback__)


def outage_handler(request: Request, exc: Exception) -> Response:
    """503 in the error shape for an outage; anything else is the generic 500."""
    if not is_outage(exc):
        return internal_error_handler(request, exc)
    DATABASE_ERRORS.inc()
    log.warning("database unavailable on %s %s: %s", request.method, request.url.path,
                f"{type(exc).__name__}: {exc}".rstrip(": "))
    headers = {"Retry-After": "5"}
    if request.url.path.startswith(("/api/", "/webhooks/")) or "text/html" not in request.headers.get("accept", ""):
        return Response(error_body("unavailable", UNAVAILABLE_MESSAGE), status_code=503, headers=headers)
    # A person in the designer: a sentence, as a fragment for htmx or as a small page.
    notice = f'<p class="notice error" role="alert">{escape(PAGE_MESSAGE)}</p>'
    body = notice if request.headers.get("hx-request") else (
        f'<!doctype html><html><head><meta charset="utf-8"><title>Try again in a moment</title>'
        f'<link rel="stylesheet" href="/static/css/app.css"></head><body><main>{notice}</main></body></html>')
    return Response(body, status_code=503, headers=headers, media_type=MediaType.HTML)


OUTAGE_HANDLERS = {
    OSError: outage_handler,
    sa_exc.SQLAlchemyError: outage_handler,
    DatabaseUnavailable: outage_handler,
}
