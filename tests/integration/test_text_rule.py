"""One rule for stored text: a NUL (or an unpaired surrogate) is refused in bot titles, flow titles and messages."""
from __future__ import annotations

import pytest

from tests.integration.api_helpers import flow_doc


def with_nul(where: str) -> dict:
    doc = flow_doc("nul")
    if where == "title":
        doc["title"] = "Регистрация\x00"
    elif where == "message":
        doc["states"][0]["say"][0]["text"] = "Привет\x00"
    else:
        doc["transitions"][0]["id"] = "go\x00"
    return doc


@pytest.mark.parametrize("where, path", [("title", "title"), ("message", "states[0].say[0].text"),
                                         ("transition", "transitions[0].id")])
async def test_a_nul_in_a_document_is_refused_with_its_path(app_client, admin_headers, where, path):
    refused = await app_client.post("/api/flows", json=with_nul(where), headers=admin_headers)
    assert refused.status_code == 422, refused.text
    assert [d["path"] for d in refused.json()["details"]][:1] == [path]
    assert "NUL" in refused.json()["details"][0]["message"]
    assert (await app_client.get("/api/flows/nul", headers=admin_headers)).status_code == 404
    created = await app_client.post("/api/flows", json=flow_doc("nul"), headers=admin_headers)
    saved = await app_client.put("/api/flows/nul", json=with_nul(where),
                                 headers={**admin_headers, "If-Match": created.headers["etag"]})
    assert saved.status_code == 422 and saved.json()["details"][0]["path"] == path


async def test_bot_titles_follow_the_same_rule(app_client, admin_headers):
    refused = await app_client.post("/api/bots", json={"id": "b1", "title": "a\x00b", "token": "t"},
                                    headers=admin_headers)
    assert refused.status_code == 422 and "NUL" in refused.json()["details"][0]["message"]
