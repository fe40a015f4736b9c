"""The bot page's personal data forms: odd and hostile input gets a sentence next to the field, never a 500."""
from __future__ import annotations

import pytest

from tests.integration.api_helpers import create_user

PASSWORD = "correct horse battery"
HUGE = "9" * 5000


async def signed_in(client, admin_headers, role: str) -> dict[str, str]:
    name = f"{role}_privacy"
    await create_user(client, admin_headers, role, name, password=PASSWORD)
    await client.get("/login")
    token = client.cookies.get("csrftoken")
    done = await client.post("/login", data={"username": name, "password": PASSWORD, "_csrf_token": token},
                             follow_redirects=False)
    assert done.status_code == 303
    return {"X-CSRFToken": token, "HX-Request": "true"}


@pytest.fixture
async def admin_form(app_client, admin_headers) -> dict[str, str]:
    assert (await app_client.post("/api/bots", json={"id": "formbot"}, headers=admin_headers)).status_code == 201
    return await signed_in(app_client, admin_headers, "admin")


@pytest.mark.parametrize("fields, field", [
    ({"retention_days": HUGE}, "retention_days"), ({"retention_days": "0"}, "retention_days"),
    ({"retention_days": "٣٠"}, "retention_days"), ({"retention_days": "-5"}, "retention_days"),
    ({"retention_days": "30", "mask_keys": "phone, 9lives"}, "mask_keys"),
    ({"retention_days": "30", "mask_keys": "x" * 5000}, "mask_keys"),
    ({"retention_days": "30", "mask_keys": " ".join(f"k{n}" for n in range(500))}, "mask_keys"),
])
async def test_bad_privacy_settings_are_named_next_to_the_field(app_client, admin_headers, admin_form, fields, field):
    answer = await app_client.post("/bots/formbot/privacy", data=fields, headers=admin_form)
    assert answer.status_code == 422
    assert f'data-error-for="{field}"' in answer.text
    bot = (await app_client.get("/api/bots/formbot", headers=admin_headers)).json()
    assert (bot["retention_days"], bot["mask_keys"]) == (30, []), "nothing was saved"


async def test_privacy_settings_are_saved_from_the_form(app_client, admin_headers, admin_form):
    answer = await app_client.post("/bots/formbot/privacy", headers=admin_form, data={
        "retention_days": " 90 ", "mask_keys": "name,city;  name", "mask_email": "on", "mask_fax": "on"})
    assert answer.status_code == 200 and "90" in answer.text
    bot = (await app_client.get("/api/bots/formbot", headers=admin_headers)).json()
    assert (bot["retention_days"], bot["mask_keys"], bot["mask_inputs"]) == (90, ["city", "name"], ["email"])


@pytest.mark.parametrize("user_id", ["", "abc", "0", "007", HUGE, "1e9", "١٢٣", "<script>"])
async def test_an_odd_user_id_is_refused_in_words(app_client, admin_form, user_id):
    answer = await app_client.post("/bots/formbot/erase-user", data={"user_id": user_id}, headers=admin_form)
    assert answer.status_code == 422 and 'data-error-for="user_id"' in answer.text
    assert "<script>" not in answer.text


async def test_unknown_bots_and_lower_roles_are_refused(app_client, admin_headers, admin_form):
    missing = await app_client.post("/bots/nobot/erase-user", data={"user_id": "5"}, headers=admin_form)
    assert missing.status_code == 404
    app_client.cookies.clear()
    editor = await signed_in(app_client, admin_headers, "editor")
    for path, data in (("/bots/formbot/erase-user", {"user_id": "5"}), ("/bots/formbot/privacy", {"retention_days": "1"})):
        refused = await app_client.post(path, data=data, headers=editor)
        assert refused.status_code == 403
    assert (await app_client.get("/api/bots/formbot", headers=admin_headers)).json()["retention_days"] == 30
