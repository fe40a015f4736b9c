"""The people pages: an admin adds users and sets roles; everyone changes their own password and tokens."""
from __future__ import annotations

import re

from litestar.testing import AsyncTestClient

from tests.integration.api_helpers import PASSWORD, bearer, create_user, log_in, session_cookie

NEW_PASSWORD = "a much longer passphrase"


def htmx(client: AsyncTestClient, language: str = "en") -> dict[str, str]:
    return {"HX-Request": "true", "X-CSRFToken": client.cookies.get("csrftoken", ""), "Accept-Language": language}


def shown_token(html: str) -> str:
    found = re.search(r'data-testid="new-token">([^<]+)<', html)
    assert found, html
    return found.group(1)


async def signed_in(client: AsyncTestClient, admin_headers: dict[str, str], role: str) -> str:
    """A new user with a password, logged in on `client`; their name."""
    name = (await create_user(client, admin_headers, role))["username"]
    assert await log_in(client, name) == 303
    return name


async def test_an_admin_adds_a_user_who_logs_in_and_an_api_account_with_the_token_shown_once(
        make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        admin = await signed_in(client, admin_headers, "admin")
        page = await client.get("/users")
        assert page.status_code == 200 and "New user" in page.text and f'data-user="{admin}"' in page.text
        assert page.headers["content-type"].startswith("text/html")
        added = await client.post("/users", data={"username": "maria", "role": "editor", "password": PASSWORD},
                                  headers=htmx(client))
        assert added.status_code == 200, added.text
        assert added.headers["hx-trigger"] == "users-changed" and added.headers["cache-control"] == "no-store"
        assert "maria can now log in as editor" in added.text and PASSWORD not in added.text
        assert 'data-testid="new-token"' not in added.text  # she logs in; no token is made on her behalf
        robot = await client.post("/users", data={"username": "robot", "role": "viewer", "password": ""},
                                  headers=htmx(client))
        assert "robot is an API-only account" in robot.text
        token = shown_token(robot.text)
        assert (await client.get("/api/users/me", headers=bearer(token))).json() == {"username": "robot",
                                                                                       "role": "viewer"}
        table = await client.get("/users", headers={"HX-Request": "true"})
        assert 'data-user="robot"' in table.text and token not in table.text
        tokens = await client.get("/users/robot", headers={"HX-Request": "true"})
        assert "made with the account" in tokens.text and token not in tokens.text  # by name, never by value
    async with AsyncTestClient(app=make_app()) as other:
        assert await log_in(other, "maria") == 303


async def test_a_bad_new_user_is_refused_next_to_its_fields_in_the_readers_language(make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        admin = await signed_in(client, admin_headers, "admin")
        taken = await client.post("/users", data={"username": admin.upper(), "role": "viewer", "password": PASSWORD},
                                  headers=htmx(client, "ru"))
        assert taken.status_code == 422
        assert f"Пользователь {admin.upper()} уже есть" in taken.text and 'data-error-for="username"' in taken.text
        spaced = await client.post("/users", data={"username": "two words", "role": "viewer"},
                                   headers=htmx(client, "ru"))
        assert spaced.status_code == 422 and "Имя пользователя — от 1 до 64 латинских букв" in spaced.text
        weak = await client.post("/users", data={"username": "ok_name", "role": "owner", "password": "short"},
                                 headers=htmx(client))
        assert weak.status_code == 422
        assert 'data-error-for="role"' in weak.text and 'data-error-for="password"' in weak.text
        assert "at least 10 characters" in weak.text and 'value="short"' not in weak.text
        assert 'value="ok_name"' in weak.text  # what was right stays typed in
        listed = await client.get("/api/users", headers=admin_headers)
        assert "ok_name" not in {u["username"] for u in listed.json()}


async def test_someone_who_is_not_an_admin_sees_only_their_own_page(make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        other = (await create_user(client, admin_headers, "viewer"))["username"]
        me = await signed_in(client, admin_headers, "editor")
        people = await client.get("/users", follow_redirects=False)
        assert people.status_code == 303 and people.headers["location"] == f"/users/{me}"
        mine = await client.get(f"/users/{me}")
        assert mine.status_code == 200 and "Change the password" in mine.text and "Save the role" not in mine.text
        assert 'href="/users"' not in mine.text  # no People link in the header either
        assert (await client.get(f"/users/{other}")).status_code == 403
        refused = await client.post(f"/users/{other}/password", data={"password": NEW_PASSWORD}, headers=htmx(client))
        assert refused.status_code == 403
        promoted = await client.post(f"/users/{me}/role", data={"role": "admin"}, headers=htmx(client))
        assert promoted.status_code == 403
        assert {u["username"]: u["role"] for u in (await client.get("/api/users", headers=admin_headers)).json()}[me] \
            == "editor"


async def test_changing_ones_own_password_needs_the_current_one_and_ends_the_other_sessions(
        make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        me = await signed_in(client, admin_headers, "viewer")
        wrong = await client.post(f"/users/{me}/password", data={"current": "not it at all", "password": NEW_PASSWORD},
                                  headers=htmx(client))
        assert wrong.status_code == 422 and 'data-error-for="current"' in wrong.text
        before = session_cookie(client)
        changed = await client.post(f"/users/{me}/password", data={"current": PASSWORD, "password": NEW_PASSWORD},
                                    headers=htmx(client))
        assert changed.status_code == 200 and "other browser sessions have ended" in changed.text
        assert (await client.get("/flows", follow_redirects=False)).status_code == 200  # this browser stays in
    async with AsyncTestClient(app=make_app()) as other:
        copied = await other.get("/flows", headers=before, follow_redirects=False)
        assert copied.status_code == 303 and copied.headers["location"].startswith("/login")  # a copy is out
        assert await log_in(other, me) == 401
        assert await log_in(other, me, NEW_PASSWORD) == 303


async def test_tokens_are_made_with_an_expiry_shown_once_and_revoked(make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        me = await signed_in(client, admin_headers, "publisher")
        made = await client.post(f"/users/{me}/tokens", data={"label": "deploy", "lifetime": "30"},
                                 headers=htmx(client))
        assert made.status_code == 200 and made.headers["hx-trigger"] == "tokens-changed"
        token = shown_token(made.text)
        assert (await client.get("/api/users/me", headers=bearer(token))).status_code == 200
        listed = (await client.get(f"/api/users/{me}/tokens", headers=bearer(token))).json()
        deploy = next(t for t in listed if t["label"] == "deploy")
        assert deploy["expires_at"] is not None
        table = await client.get(f"/users/{me}", headers={"HX-Request": "true"})
        assert f'data-token="{deploy["id"]}"' in table.text and token not in table.text
        bad = await client.post(f"/users/{me}/tokens", data={"label": "x" * 65, "lifetime": "forever"},
                                headers=htmx(client))
        assert bad.status_code == 422
        assert 'data-error-for="label"' in bad.text and 'data-error-for="lifetime"' in bad.text
        revoked = await client.post(f"/users/{me}/tokens/{deploy['id']}/revoke", headers=htmx(client))
        assert revoked.status_code == 200 and f'data-token="{deploy["id"]}"' not in revoked.text
        assert (await client.get("/api/users/me", headers=bearer(token))).status_code == 401
        for odd in (deploy["id"], 0, 2**70):  # gone already, never valid, past any database integer
            again = await client.post(f"/users/{me}/tokens/{odd}/revoke", headers=htmx(client))
            assert again.status_code == 404 and again.headers["content-type"].startswith("text/html")
            assert f"has no token {odd}" in again.text


async def test_an_admin_changes_roles_but_never_leaves_the_server_without_an_admin(make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        me = await signed_in(client, admin_headers, "admin")
        other = (await create_user(client, admin_headers, "viewer"))["username"]
        raised = await client.post(f"/users/{other}/role", data={"role": "publisher"}, headers=htmx(client, "ru"))
        assert raised.status_code == 200 and f"{other} теперь выпускающий" in raised.text
        assert raised.headers["content-type"].startswith("text/html")
        gone = await client.post(f"/users/{other}/remove", headers=htmx(client))
        assert gone.status_code == 200 and gone.headers.get("hx-redirect") == "/users"
        assert other not in {u["username"] for u in (await client.get("/api/users", headers=admin_headers)).json()}
        # The bootstrap admin is the other admin; once it is a viewer, this one is the last.
        lowered = await client.post("/users/admin/role", data={"role": "viewer"}, headers=htmx(client))
        assert lowered.status_code == 200
        kept = await client.post(f"/users/{me}/role", data={"role": "editor"}, headers=htmx(client, "ru"))
        assert kept.status_code == 409 and f"{me} — единственный администратор" in kept.text
        assert (await client.post(f"/users/{me}/remove", headers=htmx(client))).status_code == 409
        assert (await client.get("/users")).status_code == 200  # still an admin


async def test_refusals_of_pages_that_answer_in_more_than_one_way_are_html(make_app, admin_headers) -> None:
    """A handler that may redirect, download or refuse still labels its refusal as a page."""
    async with AsyncTestClient(app=make_app()) as client:
        await signed_in(client, admin_headers, "admin")
        taken = await client.post("/bots", data={"id": "bad id!"}, headers=htmx(client))
        assert taken.status_code == 422 and taken.headers["content-type"].startswith("text/html")
        unknown = await client.get("/flows/nothing/export/zip")
        assert unknown.status_code == 404 and unknown.headers["content-type"].startswith("text/html")
        gone = await client.post("/flows/nothing/delete", headers=htmx(client))
        assert gone.status_code == 404 and gone.headers["content-type"].startswith("text/html")


async def test_an_address_with_no_page_keeps_the_visitors_navigation(make_app, admin_headers) -> None:
    """The router refuses it before the session is read; the 404 page still names who is signed in."""
    async with AsyncTestClient(app=make_app()) as client:
        me = await signed_in(client, admin_headers, "editor")
        lost = await client.get("/no/such/page", headers={"Accept": "text/html"})
        assert lost.status_code == 404 and "Page not found" in lost.text
        assert f'href="/users/{me}"' in lost.text and 'href="/bots"' in lost.text
        assert 'href="/users"' not in lost.text  # an editor's bar: no people section
        token = client.cookies.get("csrftoken")
        assert token and f'name="_csrf_token" value="{token}"' in lost.text
        out = await client.post("/logout", data={"_csrf_token": token}, follow_redirects=False)
        assert out.status_code == 303  # its "Log out" works
        assert f'href="/users/{me}"' not in (await client.get("/no/such/page", headers={"Accept": "text/html"})).text
        await log_in(client, me)
        client.cookies.set("botflow_session", "forged")  # beside a good CSRF cookie
        forged_session = await client.get("/no/such/page", headers={"Accept": "text/html"})
        assert forged_session.status_code == 404 and f'href="/users/{me}"' not in forged_session.text
        client.cookies.clear()
        stranger = await client.get("/no/such/page", headers={"Accept": "text/html"})
        assert stranger.status_code == 404 and f'href="/users/{me}"' not in stranger.text
        forged = await client.get("/no/such/page", headers={"Accept": "text/html",
                                                            "Cookie": "botflow_session=forged"})
        assert forged.status_code == 404 and "Page not found" in forged.text


async def test_a_form_past_the_body_limit_is_refused_in_the_page_not_as_json(make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app(max_body=4096)) as client:
        me = await signed_in(client, admin_headers, "viewer")
        huge = {"current": PASSWORD, "password": "x" * 10_000}
        in_page = await client.post(f"/users/{me}/password", data=huge, headers=htmx(client, "ru"))
        assert in_page.status_code == 413 and in_page.headers["content-type"].startswith("text/html")
        assert "больше 4 кБ" in in_page.text and 'role="alert"' in in_page.text and "<html" not in in_page.text
        form = {**huge, "_csrf_token": client.cookies.get("csrftoken")}
        plain = await client.post(f"/users/{me}/password", data=form, headers={"Accept": "text/html"})
        assert plain.status_code == 413 and "<html" in plain.text and "more than the 4 kB a form may send" in plain.text
        api = await client.post("/api/users", content=b"{" + b" " * 10_000 + b"}", headers={
            **admin_headers, "Content-Type": "application/json"})
        assert api.status_code == 413 and api.json()["error"] == "body_too_large"


async def test_someone_elses_page_is_refused_with_a_reason_that_names_people(make_app, admin_headers) -> None:
    async with AsyncTestClient(app=make_app()) as client:
        other = (await create_user(client, admin_headers, "viewer"))["username"]
        await signed_in(client, admin_headers, "publisher")
        refused = await client.get(f"/users/{other}", headers={"HX-Request": "true", "Accept-Language": "ru"})
        assert refused.status_code == 403 and "управлять ботами и людьми" in refused.text
