"""Flows and drafts over HTTP: create, read with ETag, replace with If-Match, list, delete."""
from __future__ import annotations

import yaml

from tests.integration.api_helpers import broken_doc, create_flow, flow_doc, freeze


async def test_create_read_and_list(app_client, admin_headers):
    response = await app_client.post("/api/flows", json=flow_doc("reg"), headers=admin_headers)
    assert response.status_code == 201
    body = response.json()
    assert body["id"] == "reg" and body["revision"]
    assert response.headers["etag"] == f'"{body["revision"]}"'

    got = await app_client.get("/api/flows/reg", headers=admin_headers)
    assert got.status_code == 200
    assert got.headers["etag"] == f'"{body["revision"]}"'
    assert got.json()["states"][0]["id"] == "ask_name"
    assert got.json()["title"] == "Регистрация"

    listing = (await app_client.get("/api/flows", headers=admin_headers)).json()
    assert listing == [{**listing[0], "id": "reg", "title": "Регистрация", "revision": body["revision"],
                        "latest_version": None, "published_to": []}]


async def test_create_from_yaml(app_client, admin_headers):
    text = yaml.safe_dump(flow_doc("from_yaml"), allow_unicode=True)
    for media in ("application/yaml", "text/yaml", "application/x-yaml"):
        await app_client.delete("/api/flows/from_yaml", headers=admin_headers)
        response = await app_client.post("/api/flows", content=text.encode(),
                                         headers={**admin_headers, "Content-Type": media})
        assert response.status_code == 201, response.text
    got = await app_client.get("/api/flows/from_yaml", headers=admin_headers)
    assert got.json()["start"] == "ask_name"


async def test_duplicate_id_is_409(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("dup"))
    response = await app_client.post("/api/flows", json=flow_doc("dup"), headers=admin_headers)
    assert response.status_code == 409
    assert response.json()["error"] == "flow_exists"


async def test_malformed_document_lists_each_problem(app_client, admin_headers):
    document = flow_doc("bad")
    document["format"] = "botflow/v9"
    document["states"][1]["input"]["type"] = "telepathy"
    document["surprise"] = 1
    response = await app_client.post("/api/flows", json=document, headers=admin_headers)
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_document"
    paths = {d["path"] for d in body["details"]}
    assert {"format", "states[1].input.type", "surprise"} <= paths
    assert all(d["message"] for d in body["details"])


async def test_put_needs_if_match_and_current_revision(app_client, admin_headers):
    revision = await create_flow(app_client, admin_headers, flow_doc("edit"))
    changed = flow_doc("edit", title="Changed")

    missing = await app_client.put("/api/flows/edit", json=changed, headers=admin_headers)
    assert missing.status_code == 428
    assert missing.json()["error"] == "if_match_required"
    empty = await app_client.put("/api/flows/edit", json=changed, headers={**admin_headers, "If-Match": " "})
    assert empty.status_code == 428  # names no revision: as good as none

    ok = await app_client.put("/api/flows/edit", json=changed, headers={**admin_headers, "If-Match": f'"{revision}"'})
    assert ok.status_code == 200
    new_revision = ok.json()["revision"]
    assert new_revision != revision and ok.headers["etag"] == f'"{new_revision}"'
    assert ok.json()["id"] == "edit"

    stale = await app_client.put("/api/flows/edit", json=flow_doc("edit", title="Lost"),
                                 headers={**admin_headers, "If-Match": f'"{revision}"'})
    assert stale.status_code == 412
    got = await app_client.get("/api/flows/edit", headers=admin_headers)
    assert got.json()["title"] == "Changed"
    assert got.headers["etag"] == f'"{new_revision}"'


async def test_if_match_tolerates_unquoted_and_weak_forms(app_client, admin_headers):
    revision = await create_flow(app_client, admin_headers, flow_doc("tags"))
    first = await app_client.put("/api/flows/tags", json=flow_doc("tags", title="A"),
                                 headers={**admin_headers, "If-Match": revision})
    assert first.status_code == 200
    second = await app_client.put("/api/flows/tags", json=flow_doc("tags", title="B"),
                                  headers={**admin_headers, "If-Match": f'W/"{first.json()["revision"]}"'})
    assert second.status_code == 200


async def test_put_with_another_id_is_422(app_client, admin_headers):
    revision = await create_flow(app_client, admin_headers, flow_doc("mine"))
    response = await app_client.put("/api/flows/mine", json=flow_doc("theirs"),
                                    headers={**admin_headers, "If-Match": f'"{revision}"'})
    assert response.status_code == 422
    assert response.json()["details"][0]["path"] == "id"


async def test_put_unknown_flow_is_404(app_client, admin_headers):
    response = await app_client.put("/api/flows/ghost", json=flow_doc("ghost"),
                                    headers={**admin_headers, "If-Match": '"r1-x"'})
    assert response.status_code == 404


async def test_validation_reports_issues_of_the_draft(app_client, admin_headers):
    await create_flow(app_client, admin_headers, broken_doc("broken"))
    body = (await app_client.get("/api/flows/broken/validation", headers=admin_headers)).json()
    assert body["ok"] is False
    codes = {issue["code"] for issue in body["issues"]}
    assert "unknown_state" in codes
    for issue in body["issues"]:
        assert set(issue) >= {"code", "severity", "message", "states", "transitions"}
    await create_flow(app_client, admin_headers, flow_doc("fine"))
    assert (await app_client.get("/api/flows/fine/validation", headers=admin_headers)).json()["ok"] is True


async def test_delete(app_client, admin_headers):
    await create_flow(app_client, admin_headers, flow_doc("gone"))
    await freeze(app_client, admin_headers, "gone")
    assert (await app_client.delete("/api/flows/gone", headers=admin_headers)).status_code == 204
    assert (await app_client.get("/api/flows/gone", headers=admin_headers)).status_code == 404
    assert (await app_client.get("/api/flows/gone/versions", headers=admin_headers)).status_code == 404
    assert (await app_client.delete("/api/flows/gone", headers=admin_headers)).status_code == 404
    # The id is free again, with a fresh version history.
    await create_flow(app_client, admin_headers, flow_doc("gone"))
    assert (await freeze(app_client, admin_headers, "gone"))["version"] == 1
