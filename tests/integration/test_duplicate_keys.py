"""A key stated twice in a JSON or YAML body is refused with the key named; last-one-wins made admins."""
from __future__ import annotations

import json

import pytest

from tests.integration.api_helpers import flow_doc

JSON = {"Content-Type": "application/json"}


async def test_a_repeated_role_never_makes_an_admin(app_client, admin_headers):
    body = '{"username": "mallory", "role": "viewer", "role": "admin"}'
    refused = await app_client.post("/api/users", content=body, headers={**admin_headers, **JSON})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_json"
    assert "'role' appears twice" in refused.json()["message"]
    assert refused.json()["details"] == [{"path": "role", "message": "appears twice in one object"}]
    assert "mallory" not in (await app_client.get("/api/users", headers=admin_headers)).text


@pytest.mark.parametrize("path, method", [("/api/users/admin", "PATCH"), ("/api/bots", "POST"),
                                          ("/api/flows/x/simulate", "POST"), ("/api/users/admin/tokens", "POST")])
async def test_every_json_route_refuses_a_repeated_key(app_client, admin_headers, path, method):
    answer = await app_client.request(method, path, content='{"label": "a", "label": "b"}',
                                      headers={**admin_headers, **JSON})
    assert answer.status_code == 400 and "'label' appears twice" in answer.json()["message"], answer.text


async def test_a_json_document_with_a_repeated_key_is_refused(app_client, admin_headers):
    text = json.dumps(flow_doc("twice"))
    text = text.replace('"id": "twice"', '"id": "twice", "title": "one", "title": "two"', 1)
    refused = await app_client.post("/api/flows", content=text, headers={**admin_headers, **JSON})
    assert refused.status_code == 422 and refused.json()["error"] == "invalid_json"
    assert "'title' appears twice" in refused.json()["message"]


async def test_a_yaml_document_with_a_repeated_key_is_refused_where_it_is(app_client, admin_headers):
    text = "format: botflow/v1\nid: twice\nstart: a\nstates:\n  - id: a\n    final: true\n    final: false\n"
    refused = await app_client.post("/api/flows", content=text,
                                    headers={**admin_headers, "Content-Type": "application/yaml"})
    assert refused.status_code == 422 and refused.json()["error"] == "invalid_yaml"
    assert "'final' appears twice" in refused.json()["message"] and "line 7" in refused.json()["message"]
    # Overriding what a merge brought in is what merging is for, not a repeated key.
    merged = ("format: botflow/v1\nid: merged\nstart: a\nbase: &b {final: false}\nstates:\n"
              "  - <<: *b\n    id: a\n    final: true\n")
    answer = await app_client.post("/api/flows", content=merged,
                                   headers={**admin_headers, "Content-Type": "application/yaml"})
    assert "appears twice" not in answer.text
