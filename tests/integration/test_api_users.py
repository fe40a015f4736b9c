"""Users and tokens over HTTP: the bootstrap token, creation, self-service tokens, 401 versus 403."""
from __future__ import annotations

from tests.integration.api_helpers import bearer, create_user


async def test_bootstrap_token_is_an_admin(app_client, admin_headers):
    me = await app_client.get("/api/users/me", headers=admin_headers)
    assert me.status_code == 200 and me.json()["role"] == "admin"


async def test_bootstrap_token_is_refreshed_on_restart(make_app):
    from litestar.testing import AsyncTestClient

    async with AsyncTestClient(app=make_app(bootstrap_token="first-token-value")) as client:
        assert (await client.get("/api/flows", headers=bearer("first-token-value"))).status_code == 200
    async with AsyncTestClient(app=make_app(bootstrap_token="second-token-value")) as client:
        assert (await client.get("/api/flows", headers=bearer("second-token-value"))).status_code == 200
        assert (await client.get("/api/flows", headers=bearer("first-token-value"))).status_code == 401


async def test_create_user_shows_token_once(app_client, admin_headers):
    created = await create_user(app_client, admin_headers, "editor", "alice")
    assert created["username"] == "alice" and created["role"] == "editor" and created["token"]
    users = (await app_client.get("/api/users", headers=admin_headers)).json()
    alice = next(u for u in users if u["username"] == "alice")
    assert alice["role"] == "editor" and "token" not in alice and "password" not in str(alice)
    me = await app_client.get("/api/users/me", headers=created["headers"])
    assert me.json() == {"username": "alice", "role": "editor"}
    again = await app_client.post("/api/users", json={"username": "alice", "role": "viewer", "password": "long enough pw"},
                                  headers=admin_headers)
    assert again.status_code == 409


async def test_user_body_is_checked(app_client, admin_headers):
    cases = [
        {"username": "bob", "role": "overlord", "password": "pw"},
        {"username": "bad name/..", "role": "viewer", "password": "pw"},
        {"username": 5, "role": "viewer"},
        {"role": "viewer"},
        {"username": "bob", "role": "viewer", "extra": True},
    ]
    for body in cases:
        response = await app_client.post("/api/users", json=body, headers=admin_headers)
        assert response.status_code == 422, body
        assert response.json()["details"], body


async def test_tokens_for_self_or_by_admin(app_client, admin_headers):
    alice = await create_user(app_client, admin_headers, "viewer", "alice")
    bob = await create_user(app_client, admin_headers, "editor", "bob")
    own = await app_client.post("/api/users/alice/tokens", headers=alice["headers"])
    assert own.status_code == 201
    new_headers = bearer(own.json()["token"])
    assert (await app_client.get("/api/users/me", headers=new_headers)).json()["username"] == "alice"
    # The old token keeps working: tokens are added, not rotated.
    assert (await app_client.get("/api/users/me", headers=alice["headers"])).status_code == 200
    assert (await app_client.post("/api/users/alice/tokens", headers=bob["headers"])).status_code == 403
    by_admin = await app_client.post("/api/users/bob/tokens", headers=admin_headers)
    assert by_admin.status_code == 201
    assert (await app_client.post("/api/users/nobody/tokens", headers=admin_headers)).status_code == 404


async def test_401_for_missing_or_bad_tokens(app_client):
    for headers in ({}, bearer("nope"), {"Authorization": "Basic YWRtaW46YWRtaW4="}, {"Authorization": "Bearer"}):
        response = await app_client.get("/api/flows", headers=headers)
        assert response.status_code == 401, headers
        body = response.json()
        assert body["error"] == "unauthorized" and body["message"]


async def test_change_and_remove_users(app_client, admin_headers):
    alice = await create_user(app_client, admin_headers, "viewer", "alice")
    promoted = await app_client.patch("/api/users/alice", json={"role": "publisher"}, headers=admin_headers)
    assert promoted.status_code == 200 and promoted.json()["role"] == "publisher"
    assert (await app_client.get("/api/users/me", headers=alice["headers"])).json()["role"] == "publisher"
    own = await app_client.patch("/api/users/alice", json={"password": "new password"}, headers=alice["headers"])
    assert own.status_code == 403 and own.json()["error"] == "token_scope"
    self_promotion = await app_client.patch("/api/users/alice", json={"role": "admin"}, headers=alice["headers"])
    assert self_promotion.status_code == 403
    assert (await app_client.patch("/api/users/alice", json={"role": "root"}, headers=admin_headers)).status_code == 422
    assert (await app_client.delete("/api/users/alice", headers=admin_headers)).status_code == 204
    assert (await app_client.get("/api/users/me", headers=alice["headers"])).status_code == 401
    assert (await app_client.delete("/api/users/alice", headers=admin_headers)).status_code == 404


async def test_audit_log_names_who_did_what(app_client, admin_headers):
    from tests.integration.api_helpers import create_flow, flow_doc

    editor = await create_user(app_client, admin_headers, "editor", "ed")
    revision = await create_flow(app_client, editor["headers"], flow_doc("audited"))
    await app_client.put("/api/flows/audited", json=flow_doc("audited", title="T"),
                         headers={**editor["headers"], "If-Match": f'"{revision}"'})
    entries = (await app_client.get("/api/audit?target=flow:audited", headers=admin_headers)).json()
    assert [(e["actor"], e["action"]) for e in entries] == [("ed", "flow.save"), ("ed", "flow.create")]
    assert all(e["at"] for e in entries)
    assert (await app_client.get("/api/audit", headers=editor["headers"])).status_code == 403
    assert (await app_client.get("/api/audit?limit=0", headers=admin_headers)).status_code == 400
