"""What a browser gets where there is no page: the icon, and a 404 page instead of the API's JSON."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from litestar import Request, Response, route
from litestar.enums import HttpMethod, ScopeType
from litestar.exceptions import HTTPException
from litestar.middleware.session.client_side import ClientSideSessionBackend
from litestar.response import Template
from litestar.types import Scope
from litestar.utils.scope.state import ScopeState

from server.auth import current_user, user_for_session
from server.csrf import CSRF_COOKIE, signed_by
from server.errors import http_exception_handler
from server.static_files import asset_answer
from web.i18n import COOKIE, choose, format_size, set_language
from web.i18n import gettext as _
from web.pages import is_htmx, problem

MACHINE_PREFIXES = ("/api", "/webhooks", "/healthz", "/readyz", "/schema", "/metrics", "/static")
log = logging.getLogger("botflow.web")


@route("/favicon.ico", http_method=[HttpMethod.GET, HttpMethod.HEAD], include_in_schema=False)
async def favicon(request: Request) -> Response[bytes]:
    """static/favicon.svg under the name browsers ask for, revalidated like any unversioned asset."""
    return asset_answer(request, request.app.state.assets.lookup("favicon.svg")[0])


def wants_page(request: Request) -> bool:
    """A browser navigating to a page, not a program calling the API."""
    return (not request.url.path.startswith(MACHINE_PREFIXES)
            and "text/html" in request.headers.get("accept", ""))


def from_a_page(request: Request) -> bool:
    """A page's own form or htmx request (not the API): its refusal is shown in the page."""
    return wants_page(request) or (is_htmx(request) and not request.url.path.startswith(MACHINE_PREFIXES))


def too_large(request: Request) -> Response:
    """A form or upload past its route's limit (BOTFLOW_MAX_BODY, or a flow document's): said where the page
    shows refusals, not as JSON."""
    limit = request.route_handler.resolve_request_max_body_size() if "route_handler" in request.scope else None
    message = _("That is more than the %(size)s a form may send; shorten the text or choose a smaller file.") % {
        "size": format_size(limit or request.app.state.settings.max_body)}
    return problem(request, message, status=413)


def visitor_hook(sessions: ClientSideSessionBackend) -> Callable[[Exception, Scope], Awaitable[None]]:
    """An after-exception hook naming the signed-in visitor of an address with no page: the router refuses
    such an address before the session and auth middleware run, and the 404 page should still show who
    is signed in and their navigation."""

    async def visitor(exc: Exception, scope: Scope) -> None:
        if (scope["type"] != ScopeType.HTTP or "user" in scope or not isinstance(exc, HTTPException)
                or exc.status_code not in (404, 405)):
            return
        request: Request = Request(scope)
        if not wants_page(request):
            return
        user = None
        # The bar's "Log out" is a form: without a CSRF token this server signed, the bar is not shown.
        token = request.cookies.get(CSRF_COOKIE)
        if token and signed_by(token, scope["app"].state.settings.secret_key):
            try:
                session = await sessions.load_from_connection(request)
                if session:
                    user = await user_for_session(scope["app"].state.db, session)
            except Exception:  # noqa: BLE001 - the page is shown all the same, without the visitor's name
                log.warning("could not tell who asked for a missing page", exc_info=True)
            if user is not None:
                ScopeState.from_scope(scope).csrf_token = token  # what the CSRF middleware would have set
        scope["user"] = user

    return visitor


def page_or_json(request: Request, exc: HTTPException) -> Response:
    """404 and 405 as a page for browsers, 413 in the page that sent too much (these fail before the
    middleware, so the language is read here). A refused CSRF token is web.pages_auth.refused_form's."""
    if exc.status_code == 413 and from_a_page(request):
        set_language(choose(request.cookies.get(COOKIE), request.headers.get("accept-language")))
        return too_large(request)
    if exc.status_code not in (404, 405) or not wants_page(request):
        return http_exception_handler(request, exc)
    set_language(choose(request.cookies.get(COOKIE), request.headers.get("accept-language")))
    return Template("error.html", status_code=exc.status_code, context={
        "heading": _("Page not found"), "user": current_user(request) if "user" in request.scope else None,
        "message": _("There is no page at this address. It may have been moved or deleted.")})


ROUTES = [favicon]
