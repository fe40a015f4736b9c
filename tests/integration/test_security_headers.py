"""A security header scan of every page: CSP with nonces, no framing, no sniffing, a referrer policy, HSTS on https."""
from __future__ import annotations

import re

import pytest
from litestar.testing import AsyncTestClient

from tests.integration.api_helpers import create_flow, create_user, flow_doc, freeze

PASSWORD = "correct horse battery"


async def signed_in_pages(client: AsyncTestClient, admin_headers: dict[str, str]) -> list[str]:
    """Log an admin in and make one of everything, so each kind of page has something to show."""
    await create_user(client, admin_headers, "admin", "scanner", password=PASSWORD)
    await create_flow(client, admin_headers, flow_doc("scanned"))
    await freeze(client, admin_headers, "scanned")
    bot = await client.post("/api/bots", json={"id": "scan_bot", "title": "Scan", "token": "t", "webhook_secret": "scan-secret"},
                            headers=admin_headers)
    assert bot.status_code == 201, bot.text
    await client.get("/login")
    login = await client.post("/login", data={"username": "scanner", "password": PASSWORD,
                                              "_csrf_token": client.cookies.get("csrftoken")}, follow_redirects=False)
    assert login.status_code == 303
    return ["/flows", "/flows/scanned/edit", "/flows/scanned/versions", "/bots", "/bots/scan_bot",
            "/flows/scanned/edit/settings", "/flows/nothing_here/edit", "/bots/nothing_here", "/no/such/page"]


def assert_page_headers(response, *, https: bool) -> None:
    where = response.request.url.path
    headers = response.headers
    policy = headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy, where
    assert headers.get("x-frame-options") == "DENY", where
    assert headers.get("x-content-type-options") == "nosniff", where
    assert headers.get("referrer-policy") == "same-origin", where
    assert ("strict-transport-security" in headers) is https, where
    if headers.get("content-type", "").startswith("text/html"):
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if " " in part.strip())
        assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy, where
        nonce = re.search(r"'nonce-([^']+)'", directives["script-src"]).group(1)
        # Every inline script carries this answer's nonce; scripts from files come from our own origin.
        for tag in re.findall(r"<script\b[^>]*>", response.text):
            if "src=" in tag:
                assert re.search(r'src="/static/', tag), (where, tag)
            else:
                assert f'nonce="{nonce}"' in tag, (where, tag)
        assert "<style" not in response.text and ' style="' not in response.text, where
        assert "cdn." not in response.text and "unpkg" not in response.text, where


async def test_every_page_has_the_security_headers(app_client, admin_headers):
    anonymous = ["/login", "/flows", "/schema", "/schema/redoc", "/schema/openapi.json",
                 "/healthz", "/static/css/app.css", "/static/" + "x" * 300]
    for path in anonymous:
        assert_page_headers(await app_client.get(path, follow_redirects=False), https=False)
    for path in await signed_in_pages(app_client, admin_headers):
        response = await app_client.get(path)
        assert response.status_code in (200, 404), (path, response.status_code)
        assert_page_headers(response, https=False)
    api = await app_client.get("/api/flows", headers=admin_headers)
    assert_page_headers(api, https=False)


async def test_nonces_differ_per_answer(app_client, admin_headers):
    await signed_in_pages(app_client, admin_headers)
    policies = {(await app_client.get("/flows/scanned/edit")).headers["content-security-policy"] for _ in range(3)}
    assert len(policies) == 3


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_hsts_behind_https(make_app):
    async with AsyncTestClient(app=make_app(public_url="https://bots.example.com")) as client:
        assert_page_headers(await client.get("/login"), https=True)
        assert_page_headers(await client.get("/healthz"), https=True)


async def test_a_scripts_not_modified_answer_keeps_the_policy_a_worker_needs(app_client):
    """The browser puts a 304's headers on its kept copy: the layout worker started again from that copy must
    still be allowed to load its scripts (the no-script policy of other files once stopped it)."""
    first = await app_client.get("/static/js/editor/layout-worker.js")
    assert first.status_code == 200
    again = await app_client.get("/static/js/editor/layout-worker.js", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.headers["content-security-policy"] == first.headers["content-security-policy"]
    assert "script-src 'self'" in again.headers["content-security-policy"]
    css = await app_client.get("/static/css/app.css")
    kept = await app_client.get("/static/css/app.css", headers={"If-None-Match": css.headers["etag"]})
    assert kept.status_code == 304 and "sandbox" in kept.headers["content-security-policy"]
