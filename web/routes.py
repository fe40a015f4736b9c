"""The designer's pages: login, flows, editor, versions, bots. Every page but login needs a signed-in user."""
from __future__ import annotations

from litestar import Router, get
from litestar.response import Redirect
from litestar.plugins.htmx import HTMXRequest

from web import (
    pages_auth, pages_bots, pages_editor, pages_experiment, pages_fallback, pages_flows, pages_language, pages_live,
    pages_privacy, pages_publish_preview, pages_translations, pages_users, pages_versions,
)
from web.pages import require_login


@get("/", include_in_schema=False)
async def home() -> Redirect:
    return Redirect("/flows", status_code=303)


ROUTES: list = [
    *pages_auth.ROUTES,
    *pages_language.ROUTES,
    *pages_fallback.ROUTES,
    Router(path="/", route_handlers=[home, *pages_flows.ROUTES, *pages_editor.ROUTES, *pages_versions.ROUTES,
                                     *pages_bots.ROUTES, *pages_experiment.ROUTES, *pages_live.ROUTES,
                                     *pages_publish_preview.ROUTES, *pages_privacy.ROUTES, *pages_users.ROUTES,
                                     *pages_translations.ROUTES],
           before_request=require_login, request_class=HTMXRequest, include_in_schema=False),
]
