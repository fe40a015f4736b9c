"""The designer's pages: login, flows, editor, versions, bots. Every page but login needs a signed-in user."""
from __future__ import annotations

from litestar import Router
from litestar.plugins.htmx import HTMXRequest

from web import pages_auth, pages_editor
from web.pages import require_login

ROUTES: list = [
    *pages_auth.ROUTES,
    Router(path="/", route_handlers=[*pages_editor.ROUTES], before_request=require_login,
           request_class=HTMXRequest, include_in_schema=False),
]
