"""The funnel on the editor's graph: real webhooks counted, the period picker, numbers on hover, CSV, and
two versions compared on one graph. Screenshots go to tests/artifacts/ and /tmp/shots/funnel/."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.canvas import node_point, edge_point, open_editor, wait_until
from tests.e2e.conftest import MAX_TOKEN, ROOT, App, shoot
from tests.integration.runtime_app import msg, press

FLOW = "funnel_reg"
BOT = "funnel-bot"
SECRET = "funnel_secret"
SHOTS = Path("/tmp/shots/funnel")


def keep(path: Path) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SHOTS / path.name)


def deliver(app: App, update: dict) -> None:
    answer = httpx.post(f"{app.url}/webhooks/max/{BOT}", json=update, headers={"X-Max-Bot-Api-Secret": SECRET},
                        timeout=15)
    assert answer.status_code == 200, answer.text


def walk(app: App, user: int, texts: list[str], pressed: str | None = None) -> None:
    for text in texts:
        deliver(app, msg(user, text))
    if pressed:
        deliver(app, press(user, pressed))


def publish(app: App, version: int) -> None:
    answer = app.api("POST", f"/api/bots/{BOT}/publish", json={"flow": FLOW, "version": version})
    assert answer.status_code == 200, answer.text


def seed(app: App) -> None:
    """Version 1 of the registration, 10 dialogs; version 2 adds a way to skip the email, 10 more."""
    doc = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    doc["id"] = FLOW
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    assert app.api("POST", f"/api/flows/{FLOW}/versions").status_code == 201
    assert app.api("POST", "/api/bots", json={"id": BOT, "title": "Регистрация", "token": MAX_TOKEN,
                                              "webhook_secret": SECRET}).status_code == 201
    publish(app, 1)
    name, phone, email = "Иван", "+79001234567", "ivan@example.ru"
    for user in range(1, 11):
        steps = [["hi"], ["hi", name], ["hi", name, phone], ["hi", name, phone, email]][min(3, (user + 1) // 3)]
        walk(app, 1000 + user, steps, "yes" if user >= 9 else None)
    walk(app, 1099, ["hi", "/cancel"])
    draft = app.api("GET", f"/api/flows/{FLOW}")
    doc = draft.json()
    doc["transitions"].append({"id": "skip_email", "from": "ask_email", "to": "ask_pdn", "on": "text",
                               "match": ["пропустить"]})
    answer = app.api("PUT", f"/api/flows/{FLOW}", json=doc, headers={"If-Match": draft.headers["ETag"]})
    assert answer.status_code == 200, answer.text
    assert app.api("POST", f"/api/flows/{FLOW}/versions").status_code == 201
    publish(app, 2)
    for user in range(1, 11):
        third = email if user % 2 else "пропустить"
        steps = ["hi", name, phone, third] if user > 1 else ["hi"]
        walk(app, 2000 + user, steps, "yes" if user > 2 else None)


def test_funnel_on_the_graph_and_two_versions_compared(page: Page, app: App) -> None:
    seed(app)
    open_editor(page, app.url, FLOW)
    page.get_by_role("button", name="Funnel").click()
    panel = page.locator("#funnel")
    expect(panel).to_be_visible()
    expect(panel.locator("[data-funnel-bot]")).to_have_value(BOT)
    expect(panel.locator("[data-funnel-version]")).to_have_value("2")
    expect(panel.locator("[data-funnel-status]")).to_contain_text("Counted from")
    summary = panel.locator("[data-funnel-summary]")
    expect(summary).to_contain_text("Version 2: 10 started, 8 completed (80%), 0 cancelled, 0 expired.")
    badge = page.locator('.funnel-badge[data-state="ask_name"]')
    expect(badge).to_have_text("10 in · 90% on")
    # heat by the share that stopped (ask_name: 1 of 10; ask_phone: none), edge width by fires
    heat = page.evaluate("""() => {
        const cy = window.botflowEditor.cy;
        return {name: cy.getElementById('s:ask_name').hasClass('fn-heat-1')
                      && !cy.getElementById('s:ask_phone').is('.fn-heat-1, .fn-heat-2, .fn-heat-3, .fn-heat-4'),
                wide: cy.getElementById('t:name_ok').data('fnW'), thin: cy.getElementById('t:pdn_no').data('fnW'),
                skip: cy.getElementById('t:skip_email').data('fnL')};
    }""")
    assert heat["name"] and heat["wide"] > heat["thin"] and heat["skip"] == "5 · 56%"
    point = node_point(page, "ask_email")
    page.mouse.move(point["x"], point["y"])
    tip = page.locator(".funnel-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("entered: 9")
    expect(tip).to_contain_text("left by skip_email: 5")
    keep(shoot(page, "funnel-v2"))

    # the CSV the link offers is the same funnel
    with page.expect_download() as download:
        panel.locator("[data-funnel-csv]").click()
    rows = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("version,kind,id") and any(r.startswith("2,transition,skip_email,ask_email,ask_pdn,,5,") for r in rows)

    # version 1 alone: half of those asked for an email stopped there, the hottest state
    panel.locator("[data-funnel-version]").select_option("1")
    panel.get_by_role("button", name="Show").click()
    expect(summary).not_to_contain_text("Version 2")
    expect(summary).to_contain_text("Version 1: 11 started")
    assert page.evaluate("window.botflowEditor.cy.getElementById('s:ask_email').hasClass('fn-heat-3')")
    page.mouse.move(5, 5)
    keep(shoot(page, "funnel-v1"))

    # compared with version 1: the skip is new, the steps after the name convert better
    panel.locator("[data-funnel-version]").select_option("2")
    panel.locator("[data-funnel-compare]").select_option("1")
    panel.get_by_role("button", name="Show").click()
    expect(summary.locator(".funnel-line")).to_have_count(2)  # both sides arrived
    expect(summary.locator('[data-version="1"]')).to_contain_text("11 started, 2 completed (18%), 1 cancelled")
    marks = page.evaluate("""() => {
        const cy = window.botflowEditor.cy;
        const cls = (id) => ['diff-added', 'diff-removed', 'diff-changed'].filter((c) => cy.getElementById(id).hasClass(c));
        return {skip: cls('t:skip_email'), email: cls('s:ask_email'), name: cls('s:ask_name'),
                label: cy.getElementById('t:phone_ok').data('fnL')};
    }""")
    assert marks["skip"] == ["diff-added"] and marks["email"] == ["diff-changed"]
    assert marks["label"] == "67% → 100%"
    expect(page.locator('.funnel-badge[data-state="ask_email"]')).to_have_text("v1 6 · 50% → v2 9 · 100% (+50)")
    page.mouse.move(5, 5)
    expect(tip).to_be_hidden()  # the pointer left the canvas: no figures linger
    keep(shoot(page, "funnel-compare-graph"))
    mid = edge_point(page, "phone_ok")
    page.mouse.move(mid["x"], mid["y"])
    expect(tip).to_contain_text("Version 1")
    expect(tip).to_contain_text("Version 2")
    keep(shoot(page, "funnel-compare"))

    # a period with no dialogs counts nothing; closing takes the funnel off the graph
    panel.locator("[data-funnel-from]").fill("2020-01-01")
    panel.locator("[data-funnel-to]").fill("2020-01-31")
    panel.get_by_role("button", name="Show").click()
    expect(summary).to_contain_text("Version 2: 0 started")
    page.get_by_role("button", name="Funnel").click()
    expect(panel).to_be_hidden()
    assert wait_until(page, "window.botflowEditor.cy.$('.fn-on').length === 0 || null") is True


def test_funnel_panel_in_russian(page: Page, app: App) -> None:
    page.goto(app.url + "/flows")
    page.context.add_cookies([{"name": "botflow_lang", "value": "ru", "url": app.url}])
    open_editor(page, app.url, FLOW)
    page.locator("[data-action=funnel]").click()
    panel = page.locator("#funnel")
    expect(panel.locator("[data-funnel-status]")).to_contain_text("Подсчитано")
    expect(panel).to_contain_text("Сравнить с")
    keep(shoot(page, "funnel-ru"))
    status = panel.locator("[data-funnel-status]")
    panel.locator("[data-funnel-from]").fill("2026-03-10")
    panel.locator("[data-funnel-to]").fill("2026-03-01")
    panel.get_by_role("button", name="Показать").click()
    expect(status).to_have_text("Первый день идёт после последнего: поменяйте их местами.")
    panel.locator("[data-funnel-from]").fill("2024-01-01")
    panel.get_by_role("button", name="Показать").click()
    expect(status).to_have_text("Выберите не больше 400 дней.")


def test_a_viewer_sees_the_funnel(context, app: App, watch) -> None:
    from tests.e2e.conftest import login

    page = login(context, app, "vera", watch)
    open_editor(page, app.url, FLOW)
    page.get_by_role("button", name="Funnel").click()
    expect(page.locator("#funnel [data-funnel-summary]")).to_contain_text("Version 2: 10 started")
    expect(page.locator(".funnel-badge").first).to_be_visible()


def test_the_funnel_opens_on_the_version_the_bot_serves(page: Page, app: App) -> None:
    flow, bot = "funnel_served", "funnel-served-bot"
    doc = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    doc["id"] = flow
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    assert app.api("POST", f"/api/flows/{flow}/versions").status_code == 201
    draft = app.api("GET", f"/api/flows/{flow}")
    changed = app.api("PUT", f"/api/flows/{flow}", json={**draft.json(), "title": "Регистрация 2"},
                      headers={"If-Match": draft.headers["ETag"]})
    assert changed.status_code == 200, changed.text
    assert app.api("POST", f"/api/flows/{flow}/versions").status_code == 201
    assert app.api("POST", "/api/bots", json={"id": bot, "title": "Served", "token": MAX_TOKEN,
                                              "webhook_secret": SECRET}).status_code == 201
    served = app.api("POST", f"/api/bots/{bot}/publish", json={"flow": flow, "version": 1})
    assert served.status_code == 200, served.text
    open_editor(page, app.url, flow)
    funnel = page.locator("[data-action=funnel]")
    funnel.evaluate("b => b.click()")  # may sit in the overflow menu
    panel = page.locator("#funnel")
    expect(panel.locator("[data-funnel-bot]")).to_have_value(bot)
    expect(panel.locator("[data-funnel-version]")).to_have_value("1")  # not the newest, 2, which has no traffic
    # Published meanwhile: the panel, opened again, follows the bot to version 2.
    served = app.api("POST", f"/api/bots/{bot}/publish", json={"flow": flow, "version": 2})
    assert served.status_code == 200, served.text
    funnel.evaluate("b => b.click()")
    expect(panel).to_be_hidden()
    funnel.evaluate("b => b.click()")
    expect(panel.locator("[data-funnel-version]")).to_have_value("2")
