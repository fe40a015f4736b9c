"""axe-core on every page a person uses, in Russian at 1280x800 and in English: no serious or critical
violation. axe runs through page.evaluate (the pages' CSP would refuse an injected script tag)."""
from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.canvas import open_editor
from tests.e2e.conftest import MAX_TOKEN, PASSWORD, ROOT, App, Watch, shoot
from tests.e2e.test_canvas import import_example

pytestmark = pytest.mark.e2e

AXE = (Path(__file__).resolve().parents[2] / "static" / "vendor" / "axe-core" / "4.14.1" / "axe.min.js").read_text()
RUN = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations']});
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}));
}"""


def violations(page: Page) -> list[dict]:
    page.evaluate(AXE)
    return page.evaluate(RUN)


def test_no_serious_or_critical_violation_on_any_page(person: tuple[Page, str], app: App) -> None:  # noqa: F811
    page, lang = person
    flow = import_example(app, "registration")
    bot = f"axe_{secrets.token_hex(3)}"
    made = app.api("POST", "/api/bots", json={"id": bot, "title": "Регистрация", "token": MAX_TOKEN,
                                              "webhook_secret": secrets.token_hex(8)})
    assert made.status_code == 201, made.text
    found: dict[str, list[dict]] = {}
    for path in ["/flows", f"/flows/{flow}/versions", "/bots", f"/bots/{bot}"]:
        answer = page.goto(app.url + path)
        assert answer is not None and answer.ok, path
        page.wait_for_load_state("networkidle")
        found[path] = violations(page)
    open_editor(page, app.url, flow)
    page.wait_for_timeout(500)
    found["editor"] = violations(page)
    shoot(page, f"axe-editor-{lang}")
    assert all(not v for v in found.values()), {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_no_serious_or_critical_violation_on_login_users_and_translations(lang: str, browser: Browser, app: App,
                                                                          watch: Watch) -> None:
    doc = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    doc["id"] = f"axe_tr_{secrets.token_hex(3)}"
    doc["languages"] = ["ru", "en"]
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    name = f"axeadmin{lang}{secrets.token_hex(3)}"
    made = app.api("POST", "/api/users", json={"username": name, "role": "admin", "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU" if lang == "ru" else "en-US")
    try:
        page = ctx.new_page()
        watch.attach(page)
        found: dict[str, list[dict]] = {}
        page.goto(app.url + "/login")
        found["/login"] = violations(page)
        shoot(page, f"axe-login-{lang}")
        page.locator("input[name=username]").fill(name)
        page.locator("input[name=password]").fill(PASSWORD)
        page.locator("form button[type=submit]").click()
        page.wait_for_url("**/flows")
        for path in ["/users", f"/users/{name}", f"/flows/{doc['id']}/translations"]:
            answer = page.goto(app.url + path)
            assert answer is not None and answer.ok, path
            page.wait_for_load_state("networkidle")
            found[path] = violations(page)
            shoot(page, f"axe-{path.strip('/').split('/')[0]}-{path.rsplit('/', 1)[-1]}-{lang}")
        assert all(not v for v in found.values()), {k: v for k, v in found.items() if v}
    finally:
        ctx.close()
