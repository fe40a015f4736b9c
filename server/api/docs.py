"""/schema: the OpenAPI document and a Redoc page that loads only our own vendored files."""
from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, YamlRenderPlugin

from server.headers import csp_nonce

REDOC = "vendor/redoc/3.0.1/redoc.standalone.js"  # under static/, given its versioned address per answer


class VendoredRedoc(OpenAPIRenderPlugin):
    """Redoc from static/vendor; its styles get this answer's CSP nonce through the csp-nonce meta tag."""

    def __init__(self) -> None:
        super().__init__(path=["/", "/redoc"], favicon="", style="")

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        nonce = csp_nonce(request.scope)
        title = escape(str(openapi_schema.get("info", {}).get("title", "API")))
        script = escape(request.app.state.assets.url(REDOC))
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
  <script type="module" src="{script}"></script>
</body>
</html>
""".encode()


class _Documented:
    """The generated document with the request bodies, auth and error shape server.api.openapi_doc adds,
    made once per generated schema."""

    def __init__(self) -> None:
        self._made: tuple[int, dict[str, Any]] | None = None

    def __call__(self, openapi_schema: dict[str, Any]) -> dict[str, Any]:
        from server.api.openapi_doc import documented

        if self._made is None or self._made[0] != id(openapi_schema):
            self._made = (id(openapi_schema), documented(openapi_schema))
        return self._made[1]


class DocumentedJson(JsonRenderPlugin):
    """/schema/openapi.json."""

    def __init__(self, made: _Documented) -> None:
        super().__init__()
        self.made = made

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        return self.render_json(request, self.made(openapi_schema))


class DocumentedYaml(YamlRenderPlugin):
    """/schema/openapi.yaml (and .yml): the same document for tools that read YAML."""

    def __init__(self, made: _Documented) -> None:
        super().__init__()
        self.made = made

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, self.made(openapi_schema))


def render_plugins() -> list[OpenAPIRenderPlugin]:
    """What /schema serves: Redoc at /schema and /schema/redoc, the document at /schema/openapi.json and
    /schema/openapi.yaml."""
    made = _Documented()
    return [VendoredRedoc(), DocumentedJson(made), DocumentedYaml(made)]
