"""The API from the browser: the session cookie authenticates, unsafe calls also need the CSRF header."""
from __future__ import annotations

from tests.integration.api_helpers import create_user, flow_doc


async def login(client, username: str, password: str) -> str:
    page = await client.get("/login")
    assert page.status_code == 200
    token = client.cookies.get("csrftoken")
    assert token
    response = await client.post("/login", data={"username": username, "password": password, "_csrf_token": token},
                                 follow_redirects=False)
    assert response.status_code == 303, response.text
    return token


async def test_session_cookie_and_csrf_on_the_api(app_client, admin_headers):
    await create_user(app_client, admin_headers, "editor", "carol", password="carol's password")
    csrf = await login(app_client, "carol", "carol's password")

    me = await app_client.get("/api/users/me")
    assert me.status_code == 200 and me.json()["username"] == "carol"

    refused = await app_client.post("/api/flows", json=flow_doc("from_browser"))
    assert refused.status_code == 403 and refused.json()["error"] == "csrf_failed"
    wrong = await app_client.post("/api/flows", json=flow_doc("from_browser"), headers={"X-CSRFToken": "forged"})
    assert wrong.status_code == 403
    created = await app_client.post("/api/flows", json=flow_doc("from_browser"), headers={"X-CSRFToken": csrf})
    assert created.status_code == 201

    # A bearer token is not a browser: no CSRF header needed, and the cookie does not leak its role into it.
    viewer = await create_user(app_client, admin_headers, "viewer", "victor")
    as_viewer = await app_client.post("/api/flows", json=flow_doc("by_token"), headers=viewer["headers"])
    assert as_viewer.status_code == 403 and as_viewer.json()["error"] == "forbidden"


async def test_wrong_password_gives_no_session(app_client, admin_headers):
    await create_user(app_client, admin_headers, "editor", "dave", password="the right one")
    page = await app_client.get("/login")
    token = app_client.cookies.get("csrftoken")
    response = await app_client.post("/login", data={"username": "dave", "password": "wrong", "_csrf_token": token},
                                     follow_redirects=False)
    assert response.status_code == 401
    assert (await app_client.get("/api/users/me")).status_code == 401
    assert page.status_code == 200


async def test_an_invented_csrf_pair_is_refused(app_client, admin_headers):
    """Double submit alone trusts whoever can plant a cookie; the server checks its own signature too."""
    await create_user(app_client, admin_headers, "editor", "ivan", password="ivan's password")
    real = await login(app_client, "ivan", "ivan's password")
    app_client.cookies.set("csrftoken", "invented-by-someone-else")
    forged = await app_client.post("/api/flows", json=flow_doc("forged"), headers={"X-CSRFToken": "invented-by-someone-else"})
    assert forged.status_code == 403 and forged.json()["error"] == "csrf_failed"
    unsigned = real[:64] + "0" * (len(real) - 64)
    app_client.cookies.set("csrftoken", unsigned)
    assert (await app_client.post("/api/flows", json=flow_doc("forged"),
                                  headers={"X-CSRFToken": unsigned})).status_code == 403
    app_client.cookies.set("csrftoken", real)
    assert (await app_client.post("/api/flows", json=flow_doc("signed"), headers={"X-CSRFToken": real})).status_code == 201
