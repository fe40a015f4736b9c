"""The bot page's experiment panel in Russian at 1280x800: start from the form, live figures from real
webhooks, the chart, promoting a version. Screenshots go to tests/artifacts/."""
from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from server.runtime.arms import Arms
from tests.e2e.canvas import open_editor
from tests.e2e.conftest import MAX_TOKEN, PASSWORD, ROOT, App, Watch, login, shoot
from tests.integration.runtime_app import msg, press

FLOW = "ab_reg"
BOT = "ab-bot"
SECRET = "ab_secret"


def deliver(app: App, update: dict) -> None:
    answer = httpx.post(f"{app.url}/webhooks/max/{BOT}", json=update, headers={"X-Max-Bot-Api-Secret": SECRET},
                        timeout=15)
    assert answer.status_code == 200, answer.text


def seed(app: App) -> None:
    """Two versions of the registration (the second with a shorter greeting) and a bot serving the first."""
    doc = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    doc["id"] = FLOW
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    assert app.api("POST", f"/api/flows/{FLOW}/versions", json={"note": "как было"}).status_code == 201
    draft = app.api("GET", f"/api/flows/{FLOW}")
    doc = draft.json()
    doc["title"] = "Регистрация, короткое приветствие"
    assert app.api("PUT", f"/api/flows/{FLOW}", json=doc, headers={"If-Match": draft.headers["ETag"]}).status_code == 200
    assert app.api("POST", f"/api/flows/{FLOW}/versions", json={"note": "короче"}).status_code == 201
    assert app.api("POST", "/api/bots", json={"id": BOT, "title": "Регистрация", "token": MAX_TOKEN,
                                              "webhook_secret": SECRET}).status_code == 201
    assert app.api("POST", f"/api/bots/{BOT}/publish", json={"flow": FLOW, "version": 1}).status_code == 200


@pytest.fixture
def russian(browser: Browser, app: App, watch: Watch) -> Iterator[Page]:
    made = app.api("POST", "/api/users", json={"username": "olga", "role": "publisher", "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU")
    try:
        yield login(ctx, app, "olga", watch)
    finally:
        ctx.close()


def test_experiment_panel_in_russian(russian: Page, app: App) -> None:
    page = russian
    seed(app)
    page.goto(f"{app.url}/bots/{BOT}")
    panel = page.locator("#experiment-panel")
    expect(panel).to_contain_text("В этом боте ещё не было экспериментов")
    form = panel.locator("form").first
    form.locator("select[name=version_1]").select_option("1")
    form.locator("select[name=version_2]").select_option("2")
    form.locator("input[name=weight_2]").fill("0")
    form.locator("select[name=goal]").select_option("confirmed")
    form.get_by_role("button", name="Начать эксперимент").click()
    expect(panel.locator(".notice.error")).to_contain_text("Вес версии 2 — целое число от 1")
    panel.locator("input[name=weight_2]").fill("1")
    panel.get_by_label("Публиковать победителя автоматически").check()
    panel.locator("input[name=min_dialogs]").fill("500")
    shoot(page, "experiment-panel-start-ru")
    panel.get_by_role("button", name="Начать эксперимент").click()
    expect(panel).to_contain_text("Эксперимент начат")
    expect(panel.locator(".tag.ok")).to_have_text("идёт")

    record = app.api("GET", f"/api/bots/{BOT}/experiment").json()
    arms = Arms.of(record["id"], FLOW, record["arms"], "confirmed")
    per_arm = {1: [0, 0], 2: [0, 0]}
    for user in range(5000, 5040):
        deliver(app, msg(user, "hi"))
        version = arms.version_for(BOT, str(user))
        per_arm[version][0] += 1
        if (version == 2 and user % 3) or (version == 1 and user % 5 == 0):  # version 2 converts more
            for text in ("Иван", "+79001234567", "ivan@example.ru"):
                deliver(app, msg(user, text))
            deliver(app, press(user, "yes"))
            per_arm[version][1] += 1
    page.reload()
    panel = page.locator("#experiment-panel")
    rows = panel.locator("[data-testid=experiment-arms] tbody tr")
    expect(rows).to_have_count(2)
    for row, version in zip((rows.nth(0), rows.nth(1)), (1, 2)):
        expect(row.locator("td").nth(2)).to_have_text(str(per_arm[version][0]))
        expect(row.locator("td").nth(3)).to_have_text(str(per_arm[version][1]))
    expect(rows.nth(0)).to_contain_text("50%")
    expect(panel).to_contain_text("бета-биномиальная модель, равномерное априорное распределение")
    expect(panel).to_contain_text("Цель: диалог доходит до шага «Готово»")
    expect(panel.locator("[data-testid=experiment-chart] polyline")).to_have_count(2)
    panel.scroll_into_view_if_needed()
    shoot(page, "experiment-panel-running-ru")

    # the editor's funnel compares the arms on the graph, as it compares two versions
    open_editor(page, app.url, FLOW)
    page.locator("[data-action=funnel]").click()
    funnel = page.locator("#funnel")
    expect(funnel.locator("[data-funnel-bot]")).to_have_value(BOT)
    expect(funnel.locator("[data-funnel-version]")).to_have_value("2")
    expect(funnel.locator("[data-funnel-compare]")).to_have_value("1")
    summary = funnel.locator("[data-funnel-summary]")
    expect(summary).to_contain_text("Эксперимент бота сравнивает версии 1 и 2.")
    expect(summary.locator(".funnel-line")).to_have_count(2)
    shoot(page, "experiment-funnel-arms-ru")

    page.goto(f"{app.url}/bots/{BOT}")
    panel = page.locator("#experiment-panel")
    rows = panel.locator("[data-testid=experiment-arms] tbody tr")
    rows.nth(1).get_by_role("button", name="Опубликовать версию 2").click()
    expect(panel).to_contain_text("Опубликована только версия 2")
    expect(panel.locator(".tag.muted")).to_have_text("завершён")
    expect(panel).to_contain_text("Версия 2 победила")
    expect(page.locator("[data-testid=publications] tbody tr").first).to_contain_text("версия 2")
    shoot(page, "experiment-panel-promoted-ru")
    history = app.api("GET", f"/api/bots/{BOT}/publications").json()
    assert history[0]["version"] == 2 and history[0]["published_by"] == "olga"
