"""First run: with no account that can log in, the login page creates the first administrator."""
from __future__ import annotations

from tests.integration.api_helpers import create_user


async def csrf(client) -> str:
    page = await client.get("/login")
    assert page.status_code == 200
    return client.cookies.get("csrftoken")


async def test_first_admin_needs_the_bootstrap_token_then_the_form_is_gone(app_client, bootstrap_token):
    page = await app_client.get("/login")
    assert "Create administrator" in page.text and "Bootstrap token" in page.text
    token = await csrf(app_client)
    form = {"username": "root", "password": "long enough pw", "_csrf_token": token}

    wrong = await app_client.post("/setup", data={**form, "bootstrap_token": "guess"}, follow_redirects=False)
    assert wrong.status_code == 422 and "bootstrap token is not the one" in wrong.text
    short = await app_client.post("/setup", data={**form, "password": "short", "bootstrap_token": bootstrap_token},
                                  follow_redirects=False)
    assert short.status_code == 422 and "at least 10 characters" in short.text
    named = await app_client.post("/setup", data={**form, "username": "root user!", "bootstrap_token": bootstrap_token},
                                  follow_redirects=False)
    assert named.status_code == 422 and "username must be 1-64 characters" in named.text  # the rule, not "check"

    done = await app_client.post("/setup", data={**form, "bootstrap_token": bootstrap_token}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/flows"
    me = await app_client.get("/api/users/me")
    assert me.json() == {**me.json(), "username": "root", "role": "admin"}

    await app_client.post("/logout", data={"_csrf_token": app_client.cookies.get("csrftoken")})
    again = await app_client.get("/login")
    assert "Create administrator" not in again.text and "Log in" in again.text
    refused = await app_client.post("/setup", data={**form, "username": "intruder", "bootstrap_token": bootstrap_token,
                                                    "_csrf_token": app_client.cookies.get("csrftoken")},
                                    follow_redirects=False)
    assert refused.status_code == 409


async def test_no_setup_form_once_a_user_has_a_password(app_client, admin_headers):
    await create_user(app_client, admin_headers, "viewer", "vera", password="vera's password")
    page = await app_client.get("/login")
    assert "Create administrator" not in page.text
