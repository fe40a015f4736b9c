"""Accounts under attack: first-run takeover, copied cookies, password guessing, weak passwords, tokens, admins."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from litestar.testing import AsyncTestClient
from sqlalchemy import select, update

from server.db.engine import make_engine
from server.db.models import TokenRow, UserRow
from server.passwords import legacy_scrypt_hash
from server.services.logins import LIMIT
from tests.integration.api_helpers import PASSWORD, bearer, create_user, log_in, session_cookie


async def run_sql(database_url: str, statement: object) -> object:
    """One statement on the test's database through an engine of the test's own (the app's runs elsewhere)."""
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            result = await conn.execute(statement)
            return result.scalar() if result.returns_rows else None
    finally:
        await engine.dispose()


async def test_setup_is_closed_once_any_user_exists_even_without_a_password(make_app):
    async with AsyncTestClient(app=make_app()) as client:
        created = await client.post("/api/users", json={"username": "alice", "role": "admin"},
                                    headers=bearer(make_app().state.settings.bootstrap_token))
        assert created.status_code == 201
    # Restarted without the bootstrap token: no stranger may claim alice (or anyone) through the first-run form.
    async with AsyncTestClient(app=make_app(bootstrap_token=None)) as client:
        page = await client.get("/login")
        assert "Create administrator" not in page.text
        claim = await client.post("/setup", data={"username": "alice", "password": "stranger's password",
                                                  "_csrf_token": client.cookies.get("csrftoken")},
                                  follow_redirects=False)
        assert claim.status_code == 409
        assert (await client.get("/api/users/me")).status_code == 401


async def test_setup_on_an_empty_server_without_a_bootstrap_token(make_app):
    async with AsyncTestClient(app=make_app(bootstrap_token=None)) as client:
        assert "Create administrator" in (await client.get("/login")).text
        done = await client.post("/setup", data={"username": "root", "password": "first admin pw",
                                                 "_csrf_token": client.cookies.get("csrftoken")},
                                 follow_redirects=False)
        assert done.status_code == 303
        assert (await client.get("/api/users/me")).json()["role"] == "admin"


async def test_logout_ends_a_copied_session_cookie(app_client, admin_headers):
    await create_user(app_client, admin_headers, "editor", "carol", password=PASSWORD)
    assert await log_in(app_client, "carol") == 303
    stolen = session_cookie(app_client)
    assert (await app_client.get("/api/users/me", headers=stolen)).status_code == 200
    await app_client.post("/logout", data={"_csrf_token": app_client.cookies.get("csrftoken")})
    assert (await app_client.get("/api/users/me", headers=stolen)).status_code == 401
    assert (await app_client.get("/flows", headers=stolen, follow_redirects=False)).status_code in (302, 303)


async def test_password_change_ends_other_sessions_but_not_the_one_that_changed_it(app_client, admin_headers):
    client = app_client
    carol = await create_user(client, admin_headers, "editor", "carol", password=PASSWORD)
    assert await log_in(client, "carol") == 303
    other = session_cookie(client)
    changed = await client.patch("/api/users/carol", json={"password": "a brand new password",
                                                          "current_password": PASSWORD},
                                 headers={"X-CSRFToken": client.cookies.get("csrftoken")})
    assert changed.status_code == 200
    assert (await client.get("/api/users/me")).status_code == 200
    assert (await client.get("/api/users/me", headers=other)).status_code == 401
    # An admin resetting it by API ends the remaining browser session too; API tokens keep working.
    reset = await client.patch("/api/users/carol", json={"password": "reset by the admin"}, headers=admin_headers)
    assert reset.status_code == 200
    assert (await client.get("/api/users/me")).status_code == 401
    assert (await client.get("/api/users/me", headers=carol["headers"])).status_code == 200


async def test_login_limit_per_username_holds_across_replicas(make_app, admin_headers):
    async with AsyncTestClient(app=make_app()) as client:
        await create_user(client, admin_headers, "viewer", "vera", password=PASSWORD)
        for _ in range(LIMIT):
            assert await log_in(client, "vera", "wrong guess") == 401
        refused = await client.post("/login", data={"username": "VERA", "password": PASSWORD,
                                                    "_csrf_token": client.cookies.get("csrftoken")})
        assert refused.status_code == 429 and "Too many wrong passwords" in refused.text
        assert int(refused.headers["retry-after"]) > 0
    async with AsyncTestClient(app=make_app()) as replica:
        assert await log_in(replica, "vera") == 429


async def test_login_limit_per_client_across_usernames(make_app, admin_headers):
    async with AsyncTestClient(app=make_app()) as client:
        await create_user(client, admin_headers, "viewer", "vera", password=PASSWORD)
        for number in range(LIMIT):
            assert await log_in(client, f"guess{number}", "wrong guess") == 401
        assert await log_in(client, "vera") == 429


async def test_a_right_password_resets_the_username_counter(make_app, admin_headers):
    async with AsyncTestClient(app=make_app()) as client:
        await create_user(client, admin_headers, "viewer", "vera", password=PASSWORD)
        for _ in range(LIMIT - 1):
            assert await log_in(client, "vera", "wrong guess") == 401
        assert await log_in(client, "vera") == 303


class WatchedHasher:
    """argon2's PasswordHasher, noting which hashes it checks and on which thread it hashes."""

    def __init__(self, real: object) -> None:
        self.real, self.checked, self.threads = real, [], []

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)

    def verify(self, stored: str, password: bytes) -> bool:
        self.checked.append(stored)
        return self.real.verify(stored, password)

    def hash(self, password: bytes) -> str:
        self.threads.append(threading.get_ident())
        return self.real.hash(password)


async def test_a_username_no_account_can_have_is_a_plain_wrong_login(app_client):
    for name in ("a\x00b", "x" * 5000, "имя"):
        assert await log_in(app_client, name, "whatever it is") == 401


async def test_unknown_usernames_are_checked_against_a_hash_too(monkeypatch):
    from server import passwords

    dummy = passwords.dummy_hash()
    watched = WatchedHasher(passwords.HASHER)
    monkeypatch.setattr(passwords, "HASHER", watched)
    assert not passwords.verify_password_blocking("anything at all", None).ok
    assert watched.checked == [dummy]


async def test_passwords_hash_in_a_worker_thread(monkeypatch):
    from server import passwords

    watched = WatchedHasher(passwords.HASHER)
    monkeypatch.setattr(passwords, "HASHER", watched)
    stored = await passwords.hash_password("a good long password")
    assert stored.startswith("$argon2id$") and watched.threads and threading.get_ident() not in watched.threads


async def test_minimum_password_length_by_api(app_client, admin_headers):
    short = await app_client.post("/api/users", json={"username": "sam", "role": "viewer", "password": "123456789"},
                                  headers=admin_headers)
    assert short.status_code == 422 and "at least 10 characters" in short.json()["message"]
    assert short.json()["details"][0]["path"] == "password"
    await create_user(app_client, admin_headers, "viewer", "sam", password=PASSWORD)
    change = await app_client.patch("/api/users/sam", json={"password": "x"}, headers=admin_headers)
    assert change.status_code == 422 and "at least 10 characters" in change.json()["message"]


async def test_old_scrypt_hashes_still_log_in_and_are_upgraded(app_client, admin_headers, database_url):
    client = app_client
    await create_user(client, admin_headers, "viewer", "olga", password=PASSWORD)
    await run_sql(database_url, update(UserRow).where(UserRow.username == "olga")
                  .values(password_hash=legacy_scrypt_hash(PASSWORD, b"0123456789abcdef")))
    assert await log_in(client, "olga", "not it at all") == 401
    assert await log_in(client, "olga") == 303
    stored = await run_sql(database_url, select(UserRow.password_hash).where(UserRow.username == "olga"))
    assert stored.startswith("$argon2id$")


async def test_usernames_are_unique_ignoring_case(app_client, admin_headers):
    await create_user(app_client, admin_headers, "viewer", "Bob", password=PASSWORD)
    twin = await app_client.post("/api/users", json={"username": "bob", "role": "admin"}, headers=admin_headers)
    assert twin.status_code == 409 and twin.json()["error"] == "user_exists"
    assert await log_in(app_client, "BOB") == 303


async def test_the_last_admin_stays(app_client, admin_headers):
    alone = await app_client.delete("/api/users/admin", headers=admin_headers)
    assert alone.status_code == 409 and alone.json()["error"] == "last_admin"
    demoted = await app_client.patch("/api/users/admin", json={"role": "viewer"}, headers=admin_headers)
    assert demoted.status_code == 409 and "only admin" in demoted.json()["message"]
    await create_user(app_client, admin_headers, "admin", "second")
    assert (await app_client.patch("/api/users/admin", json={"role": "viewer"},
                                   headers=admin_headers)).status_code == 200


async def test_tokens_are_listed_without_values_and_revoked_one_by_one(app_client, admin_headers):
    alice = await create_user(app_client, admin_headers, "viewer", "alice")
    extra = await app_client.post("/api/users/alice/tokens", json={"label": "ci"}, headers=alice["headers"])
    assert extra.status_code == 201 and extra.json()["label"] == "ci" and extra.json()["expires_at"] is None
    listed = await app_client.get("/api/users/alice/tokens", headers=alice["headers"])
    assert listed.status_code == 200 and [t["label"] for t in listed.json()] == ["created", "ci"]
    assert alice["token"] not in listed.text and extra.json()["token"] not in listed.text
    gone = await app_client.delete(f"/api/users/alice/tokens/{extra.json()['id']}", headers=alice["headers"])
    assert gone.status_code == 204
    assert (await app_client.get("/api/users/me", headers=bearer(extra.json()["token"]))).status_code == 401
    assert (await app_client.get("/api/users/me", headers=alice["headers"])).status_code == 200
    again = await app_client.delete(f"/api/users/alice/tokens/{extra.json()['id']}", headers=alice["headers"])
    assert again.status_code == 404
    bob = await create_user(app_client, admin_headers, "viewer", "bob")
    assert (await app_client.get("/api/users/alice/tokens", headers=bob["headers"])).status_code == 403
    first = listed.json()[0]["id"]
    assert (await app_client.delete(f"/api/users/bob/tokens/{first}", headers=admin_headers)).status_code == 404
    assert (await app_client.delete("/api/users/alice/tokens/99999999999999", headers=admin_headers)).status_code == 404


async def test_tokens_can_expire(make_app, admin_headers, database_url):
    async with AsyncTestClient(app=make_app()) as client:
        await create_user(client, admin_headers, "viewer", "alice")
        made = await client.post("/api/users/alice/tokens", json={"expires_in": 3600}, headers=admin_headers)
        assert made.status_code == 201
        expires = datetime.fromisoformat(made.json()["expires_at"].replace("Z", "+00:00"))
        assert timedelta(minutes=59) < expires - datetime.now(timezone.utc) <= timedelta(hours=1)
        headers = bearer(made.json()["token"])
        assert (await client.get("/api/users/me", headers=headers)).status_code == 200
        await run_sql(database_url, update(TokenRow).where(TokenRow.id == made.json()["id"])
                      .values(expires_at=datetime.now(timezone.utc) - timedelta(seconds=1)))
        assert (await client.get("/api/users/me", headers=headers)).status_code == 401
        listed = (await client.get("/api/users/alice/tokens", headers=admin_headers)).json()
        assert [t["expired"] for t in listed] == [False, True]
        at = (datetime.now(timezone.utc) + timedelta(days=2)).isoformat()
        assert (await client.post("/api/users/alice/tokens", json={"expires_at": at},
                                  headers=admin_headers)).status_code == 201
        for body in ({"expires_in": 5}, {"expires_in": "soon"}, {"expires_at": "2001-01-01T00:00:00Z"},
                     {"expires_at": "tomorrow"}, {"expires_in": 3600, "expires_at": at}, {"label": "bootstrap"}):
            bad = await client.post("/api/users/alice/tokens", json=body, headers=admin_headers)
            assert bad.status_code == 422 and bad.json()["message"], body


async def test_a_stale_csrf_cookie_never_blocks_logging_in(make_app, admin_headers):
    async with AsyncTestClient(app=make_app()) as client:
        await create_user(client, admin_headers, "viewer", "vera", password=PASSWORD)
        await client.get("/login")
        old = client.cookies.get("csrftoken")
        jar = list(client.cookies.jar)
    # Restarted with a new secret key: the browser still holds the old cookie and the old form.
    async with AsyncTestClient(app=make_app(secret_key="another-secret-after-restart")) as client:
        for cookie in jar:
            client.cookies.jar.set_cookie(cookie)
        stale_form = await client.post("/login", data={"username": "vera", "password": PASSWORD, "_csrf_token": old},
                                       follow_redirects=False)
        assert stale_form.status_code == 303 and stale_form.headers["location"].startswith("/login?notice=expired")
        page = await client.get(stale_form.headers["location"])
        assert "out of date" in page.text
        fresh = client.cookies.get("csrftoken")
        assert fresh and fresh != old
        assert await log_in(client, "vera") == 303
        assert (await client.get("/api/users/me")).json()["username"] == "vera"


async def test_a_deleted_users_cookie_never_fits_a_new_user(app_client, admin_headers):
    await create_user(app_client, admin_headers, "viewer", "gone", password=PASSWORD)
    assert await log_in(app_client, "gone") == 303
    cookie = session_cookie(app_client)
    assert (await app_client.delete("/api/users/gone", headers=admin_headers)).status_code == 204
    for number in range(3):  # SQLite may hand the freed id to the next user
        await create_user(app_client, admin_headers, "admin", f"newcomer{number}", password=PASSWORD)
    assert (await app_client.get("/api/users/me", headers=cookie)).status_code == 401
