"""What an API token may not do, and the one rule for changing a password on every path."""
from __future__ import annotations

from datetime import datetime

from tests.integration.api_helpers import PASSWORD, bearer, create_user, log_in


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def short_token(client, headers) -> tuple[dict[str, str], str]:
    made = await client.post("/api/users/tess/tokens", json={"expires_in": 3600}, headers=headers)
    assert made.status_code == 201, made.text
    return bearer(made.json()["token"]), made.json()["expires_at"]


async def test_a_token_creates_only_tokens_that_end_no_later_than_itself(app_client, admin_headers):
    tess = await create_user(app_client, admin_headers, "editor", "tess")
    short, ends = await short_token(app_client, tess["headers"])
    forever = await app_client.post("/api/users/tess/tokens", json={}, headers=short)
    assert forever.status_code == 201 and forever.json()["expires_at"] is not None
    assert moment(forever.json()["expires_at"]) <= moment(ends)
    longer = await app_client.post("/api/users/tess/tokens", json={"expires_in": 86400}, headers=short)
    assert longer.status_code == 403 and longer.json()["error"] == "token_scope"
    assert ends[:19] in longer.json()["message"]
    sooner = await app_client.post("/api/users/tess/tokens", json={"expires_in": 1800}, headers=short)
    assert sooner.status_code == 201
    # A token that never ends (or a browser session) is not limited by this rule.
    assert (await app_client.post("/api/users/tess/tokens", json={"expires_in": 86400},
                                  headers=tess["headers"])).status_code == 201


async def test_a_token_cannot_change_its_own_accounts_password(app_client, admin_headers):
    tess = await create_user(app_client, admin_headers, "admin", "tess")
    short, _ = await short_token(app_client, tess["headers"])
    for headers in (short, tess["headers"]):
        for body in ({"password": "taken over now"}, {"password": "taken over now", "current_password": PASSWORD}):
            answer = await app_client.patch("/api/users/tess", json=body, headers=headers)
            assert answer.status_code == 403 and answer.json()["error"] == "token_scope", answer.text
    assert await log_in(app_client, "tess", PASSWORD) == 303


async def test_own_password_by_api_in_a_browser_needs_the_current_one(app_client, admin_headers):
    await create_user(app_client, admin_headers, "viewer", "nina", password=PASSWORD)
    assert await log_in(app_client, "nina") == 303
    csrf = {"X-CSRFToken": app_client.cookies.get("csrftoken")}
    for body in ({"password": "a new password!"}, {"password": "a new password!", "current_password": "guess guess"}):
        refused = await app_client.patch("/api/users/nina", json=body, headers=csrf)
        assert refused.status_code == 422 and refused.json()["error"] == "wrong_password", refused.text
        assert refused.json()["details"][0]["path"] == "current_password"
    changed = await app_client.patch("/api/users/nina", json={"password": "a new password!",
                                                              "current_password": PASSWORD}, headers=csrf)
    assert changed.status_code == 200, changed.text
    assert await log_in(app_client, "nina", "a new password!") == 303


async def test_an_admin_in_a_browser_resets_someone_elses_password_without_theirs(app_client, admin_headers):
    await create_user(app_client, admin_headers, "admin", "root", password=PASSWORD)
    await create_user(app_client, admin_headers, "viewer", "olly", password=PASSWORD)
    assert await log_in(app_client, "root") == 303
    reset = await app_client.patch("/api/users/olly", json={"password": "reset by root"},
                                   headers={"X-CSRFToken": app_client.cookies.get("csrftoken")})
    assert reset.status_code == 200, reset.text
