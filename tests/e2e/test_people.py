"""People, clicked through: an admin adds a colleague, who logs in, changes the password and makes a token."""
from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import App, Watch, login, shoot

COLLEAGUE_PASSWORD = "first day password"
CHANGED_PASSWORD = "a password of her own"


def test_an_admin_adds_a_colleague_who_changes_her_password_and_manages_tokens(
        browser: Browser, app: App, page: Page, watch: Watch) -> None:
    page.get_by_role("link", name="People").click()
    page.wait_for_url("**/users")
    form = page.locator("#new-user form")
    form.get_by_label("Username").fill("nina")
    form.get_by_label("Role").select_option("publisher")
    form.get_by_label("Password").fill("short")
    form.get_by_role("button", name="Add").click()
    expect(page.locator('[data-error-for="password"]')).to_contain_text("at least 10 characters")
    page.locator("#new-user").get_by_label("Password").fill(COLLEAGUE_PASSWORD)
    page.locator("#new-user").get_by_role("button", name="Add").click()
    created = page.get_by_test_id("user-created")
    expect(created).to_contain_text("nina can now log in as publisher")
    expect(page.get_by_test_id("new-token")).to_have_count(0)  # she logs in; no token made on her behalf
    expect(page.locator('[data-user="nina"]')).to_be_visible()  # the list refreshed by itself
    shoot(page, "people-user-added")
    # An account without a password is for the API: its token is shown this once.
    page.locator("#new-user").get_by_label("Username").fill("robot")
    page.locator("#new-user").get_by_label("Role").select_option("viewer")
    page.locator("#new-user").get_by_role("button", name="Add").click()
    expect(page.get_by_test_id("user-created")).to_contain_text("robot is an API-only account")
    robot_token = page.get_by_test_id("new-token").inner_text()
    me = app.api("GET", "/api/users/me", headers={"Authorization": f"Bearer {robot_token}"})
    assert me.json() == {"username": "robot", "role": "viewer"}

    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, locale="ru-RU")
    try:
        nina = login(ctx, app, "nina", watch, COLLEAGUE_PASSWORD)
        assert nina.get_by_role("link", name="Люди").count() == 0  # not an admin
        nina.locator(".who a").click()
        nina.wait_for_url("**/users/nina")
        password = nina.locator("#user-password")
        password.get_by_label("Текущий пароль").fill("not my password")
        password.get_by_label("Новый пароль").fill(CHANGED_PASSWORD)
        password.get_by_role("button", name="Сменить пароль").click()
        expect(nina.locator('[data-error-for="current"]')).to_have_text("Это не ваш текущий пароль.")
        nina.locator("#user-password").get_by_label("Текущий пароль").fill(COLLEAGUE_PASSWORD)
        nina.locator("#user-password").get_by_label("Новый пароль").fill(CHANGED_PASSWORD)
        nina.locator("#user-password").get_by_role("button", name="Сменить пароль").click()
        expect(nina.locator("#user-password .notice.ok")).to_contain_text("Пароль изменён")
        tokens = nina.locator("#new-token")
        tokens.get_by_label("Название").fill("deploy")
        tokens.get_by_label("Действует").select_option("90")
        tokens.get_by_role("button", name="Создать токен").click()
        expect(nina.get_by_test_id("token-issued")).to_be_visible()
        row = nina.locator("#user-tokens tr", has_text="deploy")
        expect(row).to_be_visible()
        shoot(nina, "people-own-page-ru")
        row.get_by_role("button", name="Отозвать").click()  # the watch accepts the confirmation
        expect(nina.locator("#user-tokens tr", has_text="deploy")).to_have_count(0)
        nina.reload()
        expect(nina.locator("h1")).to_contain_text("nina")  # still signed in after her own change
    finally:
        ctx.close()
    token = app.api("POST", "/api/users/nina/tokens").json()["token"]
    page.locator('[data-user="nina"] a').click()
    page.wait_for_url("**/users/nina")
    page.locator("form", has=page.get_by_role("button", name="Save the role")).get_by_label("Role").select_option("editor")
    page.get_by_role("button", name="Save the role").click()
    expect(page.locator("#role-result")).to_have_text("nina is now editor.")
    shoot(page, "people-admin-view")
    page.get_by_role("button", name="Remove nina").click()  # confirmed by the watch
    page.wait_for_url("**/users")
    expect(page.locator('[data-user="nina"]')).to_have_count(0)
    assert app.api("GET", "/api/users/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
