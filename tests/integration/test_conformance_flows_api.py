"""Conformance of the flow routes with http-api.md, read sentence by sentence, from outside."""
from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from tests.integration.api_helpers import create_flow, flow_doc

JSON = {"Content-Type": "application/json"}
YAML = {"Content-Type": "application/yaml"}


def assert_error_shape(response, status: int) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error", "message", "details"}, body
    assert isinstance(body["details"], list)
    return body


# "POST /api/flows ... 422 with details if the document is malformed": a body that is not a JSON or YAML
# object at all is the most malformed document there is.
@pytest.mark.parametrize("content, headers", [
    (b"{not json", JSON),
    (b"[1, 2]", JSON),
    (b"", JSON),
    (b"format: [unclosed", YAML),
    (b"- just\n- a list\n", YAML),
])
async def test_unparsable_document_is_422_with_details(app_client: AsyncTestClient, admin_headers, content,
                                                       headers) -> None:
    response = await app_client.post("/api/flows", content=content, headers={**admin_headers, **headers})
    body = assert_error_shape(response, 422)
    assert body["details"] and all(set(d) == {"path", "message"} for d in body["details"]), body


async def test_unparsable_document_on_put_is_422_and_overwrites_nothing(app_client: AsyncTestClient,
                                                                       admin_headers) -> None:
    revision = await create_flow(app_client, admin_headers, flow_doc("reg"))
    response = await app_client.put("/api/flows/reg", content=b"{", headers={
        **admin_headers, **JSON, "If-Match": f'"{revision}"'})
    assert_error_shape(response, 422)
    again = await app_client.get("/api/flows/reg", headers=admin_headers)
    assert again.headers["etag"] == f'"{revision}"'


# "GET /api/flows/{id}/export?format=json|yaml|mermaid|dot|scxml": one well-formed Content-Type each.
@pytest.mark.parametrize("fmt", ["json", "yaml", "mermaid", "dot", "scxml"])
async def test_export_content_type_is_well_formed(app_client: AsyncTestClient, admin_headers, fmt) -> None:
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    response = await app_client.get("/api/flows/reg/export", params={"format": fmt}, headers=admin_headers)
    assert response.status_code == 200
    content_type = response.headers["content-type"]
    assert content_type.lower().count("charset") <= 1, content_type


# "GET /healthz, GET /readyz: liveness; readiness checks the database and Redis".
async def test_readiness_names_its_checks(app_client: AsyncTestClient) -> None:
    assert (await app_client.get("/healthz")).status_code == 200
    ready = await app_client.get("/readyz")
    assert ready.status_code == 200
    checks = ready.json()["checks"]
    assert checks["database"] == "ok" and all(value == "ok" for value in checks.values())
    assert "redis" not in checks  # no BOTFLOW_REDIS_URL here: the SQL store is checked instead
