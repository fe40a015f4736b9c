"""/schema: the OpenAPI document and a Redoc page that loads only our own vendored files."""
from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin

from server.headers import csp_nonce

REDOC = "/static/vendor/redoc/3.0.1/redoc.standalone.js"


class VendoredRedoc(OpenAPIRenderPlugin):
    """Redoc from static/vendor; its styles get this answer's CSP nonce through the csp-nonce meta tag."""

    def __init__(self) -> None:
        super().__init__(path=["/", "/redoc"], favicon="", style="")

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        nonce = csp_nonce(request.scope)
        title = escape(str(openapi_schema.get("info", {}).get("title", "API")))
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta property="csp-nonce" nonce="{nonce}" content="{nonce}">
  <title>{title} API</title>
</head>
<body>
  <redoc spec-url="{escape(self.get_openapi_json_route(request))}"></redoc>
  <script type="module" src="{REDOC}"></script>
</body>
</html>
""".encode()


class DocumentedJson(JsonRenderPlugin):
    """/schema/openapi.json with the request bodies and error shape server.api.openapi_doc adds (made once)."""

    def __init__(self) -> None:
        super().__init__()
        self._made: tuple[int, dict[str, Any]] | None = None

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        from server.api.openapi_doc import documented

        if self._made is None or self._made[0] != id(openapi_schema):
            self._made = (id(openapi_schema), documented(openapi_schema))
        return self.render_json(request, self._made[1])


def render_plugins() -> list[OpenAPIRenderPlugin]:
    """What /schema serves: Redoc at /schema and /schema/redoc, the document at /schema/openapi.json."""
    return [VendoredRedoc(), DocumentedJson()]
