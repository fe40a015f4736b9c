"""Versions over HTTP: freeze, the identical-draft rule, validation blocking, listing, diff, export."""
from __future__ import annotations

import json

import yaml

from tests.integration.api_helpers import broken_doc, create_flow, flow_doc, freeze


async def test_freeze_list_and_read(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    first = await app_client.post("/api/flows/reg/versions", json={"note": "first cut"}, headers=admin_headers)
    assert first.status_code == 201
    body = first.json()
    assert body["version"] == 1 and body["hash"].startswith("sha256:")

    again = await app_client.post("/api/flows/reg/versions", json={"note": "same"}, headers=admin_headers)
    assert again.status_code == 200
    assert again.json()["version"] == 1 and again.json()["hash"] == body["hash"]

    draft = (await app_client.get("/api/flows/reg", headers=admin_headers))
    changed = draft.json()
    changed["states"][0]["say"][0]["text"] = "Здравствуйте! Как вас зовут?"
    put = await app_client.put("/api/flows/reg", json=changed,
                               headers={**admin_headers, "If-Match": draft.headers["etag"]})
    assert put.status_code == 200
    second = await app_client.post("/api/flows/reg/versions", json={}, headers=admin_headers)
    assert second.status_code == 201 and second.json()["version"] == 2

    listing = (await app_client.get("/api/flows/reg/versions", headers=admin_headers)).json()
    assert [v["version"] for v in listing] == [1, 2]
    assert listing[0]["note"] == "first cut" and listing[0]["author"] == "admin"
    assert all(set(v) >= {"version", "hash", "note", "author", "created_at"} for v in listing)

    frozen = (await app_client.get("/api/flows/reg/versions/1", headers=admin_headers)).json()
    assert frozen["states"][0]["say"][0]["text"] == "Привет! Как вас зовут?"
    flows = (await app_client.get("/api/flows", headers=admin_headers)).json()
    assert flows[0]["latest_version"] == 2


async def test_moving_states_is_not_a_new_version(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("moved"))
    v1 = await freeze(app_client, admin_headers, "moved")
    draft = await app_client.get("/api/flows/moved", headers=admin_headers)
    document = draft.json()
    document["layout"] = {"ask_name": {"x": 10.0, "y": 20.0}}
    await app_client.put("/api/flows/moved", json=document, headers={**admin_headers, "If-Match": draft.headers["etag"]})
    again = await app_client.post("/api/flows/moved/versions", json={"note": "moved"}, headers=admin_headers)
    assert again.status_code == 200 and again.json()["version"] == v1["version"]


async def test_freeze_refuses_validation_errors(app_client, admin_headers):
    await create_flow(app_client, admin_headers, broken_doc("broken"))
    response = await app_client.post("/api/flows/broken/versions", json={"note": "x"}, headers=admin_headers)
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "validation_failed"
    assert any(d["code"] == "unknown_state" and d["severity"] == "error" for d in body["details"])
    assert (await app_client.get("/api/flows/broken/versions", headers=admin_headers)).json() == []


async def test_a_note_past_2000_characters_is_refused_and_nothing_frozen(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("noted"))
    refused = await app_client.post("/api/flows/noted/versions", json={"note": "x" * 2001}, headers=admin_headers)
    assert refused.status_code == 422 and refused.json()["details"] == [
        {"path": "note", "message": "at most 2000 characters", "code": "too_long", "params": {"max": 2000}}]
    assert refused.json()["message"] == "The note is 2001 characters long; keep it under 2000."
    assert (await app_client.get("/api/flows/noted/versions", headers=admin_headers)).json() == []
    made = await app_client.post("/api/flows/noted/versions", json={"note": "x" * 2000}, headers=admin_headers)
    assert made.status_code == 201


async def test_missing_versions_and_flows_are_404(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    for path in ("/api/flows/reg/versions/1", "/api/flows/reg/versions/0", "/api/flows/reg/versions/abc",
                 "/api/flows/reg/versions/99999999999999999999", "/api/flows/reg/versions/" + "9" * 4301,
                 "/api/flows/reg/diff?from=1&to=" + "9" * 4301, "/api/flows/nope/versions",
                 "/api/flows/nope/versions/1"):
        response = await app_client.get(path, headers=admin_headers)
        assert response.status_code == 404, path
        assert response.json()["message"]
    assert (await app_client.post("/api/flows/nope/versions", json={}, headers=admin_headers)).status_code == 404


async def test_diff_between_versions_and_draft(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    await freeze(app_client, admin_headers, "reg")
    draft = await app_client.get("/api/flows/reg", headers=admin_headers)
    document = draft.json()
    document["states"].append({"id": "extra", "final": True, "say": [{"text": "bye"}]})
    document["states"][0]["title"] = "Name"
    await app_client.put("/api/flows/reg", json=document, headers={**admin_headers, "If-Match": draft.headers["etag"]})

    response = await app_client.get("/api/flows/reg/diff?from=1&to=draft", headers=admin_headers)
    assert response.status_code == 200
    body = response.json()
    assert body["states"]["added"] == ["extra"]
    assert body["states"]["changed"][0]["id"] == "ask_name"
    assert body["identical"] is False
    same = (await app_client.get("/api/flows/reg/diff?from=1&to=1", headers=admin_headers)).json()
    assert same["identical"] is True

    for query, status in (("from=7&to=draft", 404), ("from=x&to=draft", 400), ("from=1&to=-3", 400)):
        bad = await app_client.get(f"/api/flows/reg/diff?{query}", headers=admin_headers)
        assert bad.status_code == status, query
        assert bad.json()["message"]
    assert (await app_client.get("/api/flows/nope/diff?from=1&to=draft", headers=admin_headers)).status_code == 404


async def test_exports(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    expected = {"json": "application/json", "yaml": "application/yaml", "mermaid": "text/vnd.mermaid",
                "dot": "text/vnd.graphviz", "scxml": "application/scxml+xml"}
    for fmt, media in expected.items():
        response = await app_client.get(f"/api/flows/reg/export?format={fmt}", headers=admin_headers)
        assert response.status_code == 200, fmt
        assert response.headers["content-type"].startswith(media), fmt
    assert json.loads((await app_client.get("/api/flows/reg/export?format=json", headers=admin_headers)).text)["id"] == "reg"
    assert yaml.safe_load((await app_client.get("/api/flows/reg/export?format=yaml", headers=admin_headers)).text)["id"] == "reg"
    assert "ask_name" in (await app_client.get("/api/flows/reg/export?format=mermaid", headers=admin_headers)).text
    bad = await app_client.get("/api/flows/reg/export?format=pdf", headers=admin_headers)
    assert bad.status_code == 400 and "mermaid" in bad.json()["message"]
    await freeze(app_client, admin_headers, "reg")
    assert (await app_client.get("/api/flows/reg/export?format=dot&version=1", headers=admin_headers)).status_code == 200
    assert (await app_client.get("/api/flows/reg/export?format=dot&version=2", headers=admin_headers)).status_code == 404
