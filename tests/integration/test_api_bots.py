"""Bots and publishing over HTTP: secrets never returned, publish and rollback history, flows in use."""
from __future__ import annotations

from tests.integration.api_helpers import create_flow, flow_doc, freeze, two_versions

BOT = {"id": "shop", "title": "Shop bot", "token": "max-token-SECRET-value", "webhook_secret": "hook_Secret-42"}


async def test_create_and_read_bot_without_secrets(app_client, admin_headers):
    created = await app_client.post("/api/bots", json=BOT, headers=admin_headers)
    assert created.status_code == 201
    for response in (created, await app_client.get("/api/bots/shop", headers=admin_headers),
                     await app_client.get("/api/bots", headers=admin_headers)):
        assert "max-token-SECRET-value" not in response.text
        assert "hook_Secret-42" not in response.text
    bot = (await app_client.get("/api/bots/shop", headers=admin_headers)).json()
    assert bot["id"] == "shop" and bot["title"] == "Shop bot"
    assert bot["token_set"] is True and bot["webhook_secret_set"] is True
    assert bot["flow"] is None and bot["version"] is None
    again = await app_client.post("/api/bots", json=BOT, headers=admin_headers)
    assert again.status_code == 409


async def test_bot_fields_are_checked(app_client, admin_headers):
    cases = [
        ({**BOT, "webhook_secret": "abc"}, "webhook_secret"),
        ({**BOT, "webhook_secret": "has space here"}, "webhook_secret"),
        ({**BOT, "webhook_secret": "x" * 257}, "webhook_secret"),
        ({**BOT, "id": "Bad/Id"}, "id"),
        ({**BOT, "id": "../etc"}, "id"),
        ({**BOT, "title": 7}, "title"),
        ({**BOT, "colour": "red"}, "colour"),
        ({"title": "no id"}, "id"),
    ]
    for body, path in cases:
        response = await app_client.post("/api/bots", json=body, headers=admin_headers)
        assert response.status_code == 422, body
        assert path in {d["path"] for d in response.json()["details"]}, body
    assert (await app_client.get("/api/bots", headers=admin_headers)).json() == []


async def test_change_bot(app_client, admin_headers):
    await app_client.post("/api/bots", json=BOT, headers=admin_headers)
    changed = await app_client.patch("/api/bots/shop", json={"title": "Renamed", "webhook_secret": "new_secret_1"},
                                     headers=admin_headers)
    assert changed.status_code == 200 and changed.json()["title"] == "Renamed"
    assert "new_secret_1" not in changed.text
    put = await app_client.put("/api/bots/shop", json={"token": "other-token"}, headers=admin_headers)
    assert put.status_code == 200 and put.json()["title"] == "Renamed"
    assert (await app_client.patch("/api/bots/shop", json={"webhook_secret": "no"}, headers=admin_headers)).status_code == 422
    assert (await app_client.patch("/api/bots/shop", json={"id": "other"}, headers=admin_headers)).status_code == 422
    assert (await app_client.patch("/api/bots/ghost", json={"title": "x"}, headers=admin_headers)).status_code == 404


async def test_publish_rollback_and_history(app_client, admin_headers):
    await app_client.post("/api/bots", json=BOT, headers=admin_headers)
    await two_versions(app_client, admin_headers, "reg")

    first = await app_client.post("/api/bots/shop/publish", json={"flow": "reg", "version": 1}, headers=admin_headers)
    assert first.status_code == 200
    record = first.json()
    assert set(record) >= {"id", "bot", "flow", "version", "sessions", "published_by", "published_at"}
    assert (record["bot"], record["flow"], record["version"], record["sessions"], record["published_by"]) == \
        ("shop", "reg", 1, "keep", "admin")
    second = await app_client.post("/api/bots/shop/publish", json={"flow": "reg", "version": 2, "sessions": "migrate"},
                                   headers=admin_headers)
    assert second.json()["sessions"] == "migrate"
    rollback = await app_client.post("/api/bots/shop/publish", json={"flow": "reg", "version": 1, "sessions": "reset"},
                                     headers=admin_headers)
    assert rollback.status_code == 200

    history = (await app_client.get("/api/bots/shop/publications", headers=admin_headers)).json()
    assert [(p["version"], p["sessions"]) for p in history] == [(1, "reset"), (2, "migrate"), (1, "keep")]
    bot = (await app_client.get("/api/bots/shop", headers=admin_headers)).json()
    assert (bot["flow"], bot["version"]) == ("reg", 1)
    listing = (await app_client.get("/api/flows", headers=admin_headers)).json()
    assert listing[0]["published_to"] == ["shop"]


async def test_publish_refuses_what_does_not_exist(app_client, admin_headers):
    await app_client.post("/api/bots", json=BOT, headers=admin_headers)
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    no_versions = await app_client.post("/api/bots/shop/publish", json={"flow": "reg"}, headers=admin_headers)
    assert no_versions.status_code == 422
    await freeze(app_client, admin_headers, "reg")
    cases = [
        ("/api/bots/shop/publish", {"flow": "reg", "version": 5}, 404),
        ("/api/bots/shop/publish", {"flow": "ghost", "version": 1}, 404),
        ("/api/bots/ghost/publish", {"flow": "reg", "version": 1}, 404),
        ("/api/bots/shop/publish", {"flow": "reg", "version": 1, "sessions": "forget"}, 422),
        ("/api/bots/shop/publish", {"flow": "reg", "version": "1"}, 422),
        ("/api/bots/shop/publish", {"flow": "reg", "version": 0}, 422),
        ("/api/bots/shop/publish", {"flow": "reg", "version": 10**30}, 422),
        ("/api/bots/shop/publish", {"version": 1}, 422),
    ]
    for path, body, status in cases:
        response = await app_client.post(path, json=body, headers=admin_headers)
        assert response.status_code == status, (body, response.text)
        assert response.json()["message"]
    assert (await app_client.get("/api/bots/shop/publications", headers=admin_headers)).json() == []
    assert (await app_client.get("/api/bots/ghost/publications", headers=admin_headers)).status_code == 404
    latest = await app_client.post("/api/bots/shop/publish", json={"flow": "reg"}, headers=admin_headers)
    assert latest.status_code == 200 and latest.json()["version"] == 1


async def test_served_flow_cannot_be_deleted(app_client, admin_headers):
    await app_client.post("/api/bots", json=BOT, headers=admin_headers)
    await create_flow(app_client, admin_headers, flow_doc("reg"))
    await create_flow(app_client, admin_headers, flow_doc("other"))
    await freeze(app_client, admin_headers, "reg")
    await freeze(app_client, admin_headers, "other")
    await app_client.post("/api/bots/shop/publish", json={"flow": "reg", "version": 1}, headers=admin_headers)
    refused = await app_client.delete("/api/flows/reg", headers=admin_headers)
    assert refused.status_code == 409 and "shop" in refused.json()["message"]
    assert refused.json()["details"] == [{"bot": "shop", "message": "the bot shop serves this flow"}]
    await app_client.post("/api/bots/shop/publish", json={"flow": "other", "version": 1}, headers=admin_headers)
    assert (await app_client.delete("/api/flows/reg", headers=admin_headers)).status_code == 204
    # History keeps naming the deleted flow.
    history = (await app_client.get("/api/bots/shop/publications", headers=admin_headers)).json()
    assert [p["flow"] for p in history] == ["other", "reg"]
