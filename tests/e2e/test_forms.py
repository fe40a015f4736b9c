"""Forms that say what is true and keep what was typed, in Russian at 1280x800."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.canvas import click_state, open_editor, settle, wait_until
from tests.e2e.conftest import PASSWORD, ROOT, App, Watch, login, shoot

EXAMPLE = ROOT / "examples" / "registration.json"


@pytest.fixture
def ru(browser: Browser, app: App, watch: Watch) -> Iterator[Page]:
    """An editor signed in from a Russian browser at 1280x800 (its own account: its language stays its own)."""
    made = app.api("POST", "/api/users", json={"username": "forms_ru", "role": "editor", "password": PASSWORD})
    assert made.status_code in (201, 409), made.text
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU")
    try:
        yield login(ctx, app, "forms_ru", watch)
    finally:
        ctx.close()


def flow_copy(app: App, flow_id: str) -> dict:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["id"] = flow_id
    answer = app.api("POST", "/api/flows", json=doc)
    assert answer.status_code == 201, answer.text
    return doc


def test_the_save_status_follows_the_answer_after_a_refusal(ru: Page, app: App) -> None:
    flow_copy(app, "status_truth")
    open_editor(ru, app.url, "status_truth")
    click_state(ru, "ask_phone")
    field = ru.locator("#panel").get_by_label("Идентификатор", exact=True)
    field.fill("ask_email")  # taken: refused
    field.press("Tab")
    settle(ru)
    expect(ru.locator("#save-status")).to_contain_text("Не сохранено")
    # Back to the stored id: nothing to store, and the draft is what the page shows.
    field = ru.locator("#panel").get_by_label("Идентификатор", exact=True)
    field.fill("ask_phone")
    field.press("Tab")
    settle(ru)
    expect(ru.locator("#save-status")).to_have_text("Всё сохранено")
    shoot(ru, "forms-status-after-refusal-undone")


def open_settings(page: Page) -> None:
    page.locator('[data-action="settings"]').first.evaluate("b => b.click()")  # may sit in the overflow menu
    expect(page.locator('#panel form[hx-post$="/edit/settings"]')).to_be_visible()


def test_a_command_turned_off_and_on_keeps_its_texts_and_times_have_units(ru: Page, app: App) -> None:
    flow_copy(app, "toggle_units")
    open_editor(ru, app.url, "toggle_units")
    open_settings(ru)
    panel = ru.locator("#panel")
    cancel = panel.locator('[data-command="cancel"]')
    texts = cancel.get_by_label("Отмена: тексты (по одному в строке)")
    expect(texts).to_have_value("/cancel\nотмена")
    cancel.locator("select").first.select_option("off")
    settle(ru)
    expect(texts).to_be_hidden()
    assert app.api("GET", "/api/flows/toggle_units").json()["commands"]["cancel"] is None
    panel.locator('[data-command="cancel"] select').first.select_option("custom")
    settle(ru)
    expect(panel.locator('[data-command="cancel"]').get_by_label("Отмена: тексты (по одному в строке)")) \
        .to_have_value("/cancel\nотмена")
    assert app.api("GET", "/api/flows/toggle_units").json()["commands"]["cancel"]["match"] == ["/cancel", "отмена"]

    # The stored 1800 and 900 seconds read as 30 and 15 minutes; two hours are stored as 7200 seconds.
    life = panel.get_by_label("Время жизни диалога (по умолчанию 30 минут)", exact=True)
    expect(life).to_have_value("30")
    expect(panel.get_by_label("Напомнить после молчания", exact=True)).to_have_value("15")
    life.fill("2")
    panel.get_by_label("Единица: Время жизни диалога (по умолчанию 30 минут)").select_option("h")
    settle(ru)
    expect(ru.locator("#save-status")).to_have_text("Всё сохранено")
    assert app.api("GET", "/api/flows/toggle_units").json()["settings"]["session_ttl"] == 7200
    panel.get_by_label("Напомнить после молчания", exact=True).scroll_into_view_if_needed()
    shoot(ru, "forms-settings-units")


def test_a_new_button_row_is_scrolled_into_view_and_focused(ru: Page, app: App) -> None:
    flow_copy(app, "row_scroll")
    open_editor(ru, app.url, "row_scroll")
    click_state(ru, "ask_pdn")
    add = ru.locator("#panel").get_by_role("button", name="+ ряд кнопок").first
    add.scroll_into_view_if_needed()
    add.click()
    settle(ru)
    wait_until(ru, "document.activeElement && (document.activeElement.name || '').includes('buttons[1][0]')", 5000)
    box = ru.evaluate("""() => {
        const r = document.activeElement.getBoundingClientRect(), p = document.getElementById('panel').getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, ptop: p.top, pbottom: p.bottom};
    }""")
    assert box["ptop"] <= box["top"] and box["bottom"] <= box["pbottom"], box
    assert app.api("GET", "/api/flows/row_scroll").json()["states"][3]["say"][0]["buttons"][1]
    shoot(ru, "forms-new-button-row-in-view")


def test_the_new_flow_id_is_suggested_from_the_title(ru: Page, app: App) -> None:
    ru.goto(app.url + "/flows")
    form = ru.locator('form[hx-post="/flows"]')
    form.get_by_label("Название").fill("Запись к врачу — 2-й этаж")
    expect(form.get_by_label("Идентификатор")).to_have_value("zapis_k_vrachu_2_i_etazh")
    form.get_by_label("Название").fill("Щука и ёж")
    expect(form.get_by_label("Идентификатор")).to_have_value("shchuka_i_ezh")
    shoot(ru, "forms-flow-id-from-title")
    # The browser checks a typed id with the loader's own rule (a hyphen allowed, a capital or a leading digit not).
    field = form.get_by_label("Идентификатор")
    for typed, valid in (("clinic-2", True), ("Clinic", False), ("2clinic", False), ("a" * 65, True)):
        field.fill(typed)
        assert field.evaluate("el => el.validity.valid") is valid, typed
    assert len(field.input_value()) == 64  # the field takes no more than an id may hold
    # Typed by hand, the id is the person's: the title no longer changes it.
    form.get_by_label("Идентификатор").fill("clinic")
    form.get_by_label("Название").fill("Запись в клинику")
    expect(form.get_by_label("Идентификатор")).to_have_value("clinic")
    form.get_by_role("button", name="Создать и открыть").click()
    ru.wait_for_url("**/flows/clinic/edit")
    assert app.api("GET", "/api/flows/clinic").json()["title"] == "Запись в клинику"


def test_reminder_buttons_are_rows_in_the_settings_form(ru: Page, app: App) -> None:
    flow_copy(app, "reminder_rows")
    open_editor(ru, app.url, "reminder_rows")
    open_settings(ru)
    reminder = ru.locator("#panel [data-reminder-buttons]")
    reminder.get_by_role("button", name="+ ряд кнопок").click()
    settle(ru)
    reminder = ru.locator("#panel [data-reminder-buttons]")
    reminder.get_by_label("Текст кнопки 1.1").fill("Да")
    reminder.get_by_label("Код кнопки 1.1").fill("yes")
    reminder.get_by_label("Код кнопки 1.1").press("Tab")
    settle(ru)
    reminder.get_by_role("button", name="+ кнопка").click()
    settle(ru)
    reminder = ru.locator("#panel [data-reminder-buttons]")
    reminder.get_by_label("Текст кнопки 1.2").fill("Отмена")
    reminder.get_by_label("Код кнопки 1.2").fill("/cancel")
    reminder.get_by_label("Код кнопки 1.2").press("Tab")
    settle(ru)
    expect(ru.locator("#save-status")).to_have_text("Всё сохранено")
    stored = app.api("GET", "/api/flows/reminder_rows").json()["settings"]["reminder"]
    assert stored["buttons"] == [[{"text": "Да", "payload": "yes"}, {"text": "Отмена", "payload": "/cancel"}]]
    reminder.scroll_into_view_if_needed()
    shoot(ru, "forms-reminder-buttons")
    reminder.get_by_role("button", name="Удалить кнопку 1.1").click()
    settle(ru)
    stored = app.api("GET", "/api/flows/reminder_rows").json()["settings"]["reminder"]
    assert stored["buttons"] == [[{"text": "Отмена", "payload": "/cancel"}]]


def test_the_panel_and_the_problems_list_name_states_by_their_titles(ru: Page, app: App) -> None:
    doc = flow_copy(app, "titles_in_panel")
    doc["transitions"] = [t for t in doc["transitions"] if t["id"] != "pdn_no"]  # «Отказ» becomes unreachable
    draft = app.api("GET", "/api/flows/titles_in_panel")
    answer = app.api("PUT", "/api/flows/titles_in_panel", json=doc, headers={"If-Match": draft.headers["ETag"]})
    assert answer.status_code == 200, answer.text
    open_editor(ru, app.url, "titles_in_panel")
    issue = ru.locator('#issues-list [data-code="unreachable_state"] .issue-message')
    expect(issue).to_contain_text("«Отказ»")
    expect(issue).not_to_contain_text("refused")
    expect(issue).to_have_attribute("title", "refused")  # the id on hover
    click_state(ru, "ask_phone")
    heading = ru.locator("#panel h2")
    expect(heading).to_have_text("Состояние «Телефон»")
    expect(heading.locator("[title]")).to_have_attribute("title", "ask_phone")
    shoot(ru, "forms-titles-in-panel-and-problems")


def test_the_language_switch_goes_with_the_second_language_and_leaves_no_empty_menu(ru: Page, app: App) -> None:
    doc = flow_copy(app, "switch_langs")
    doc["languages"] = ["ru", "en"]
    draft = app.api("GET", "/api/flows/switch_langs")
    answer = app.api("PUT", "/api/flows/switch_langs", json=doc, headers={"If-Match": draft.headers["ETag"]})
    assert answer.status_code == 200, answer.text
    open_editor(ru, app.url, "switch_langs")
    switch = ru.locator("[data-editor-language]")
    assert switch.locator("option").all_inner_texts() == ["Русский (основной)", "Английский"]
    open_settings(ru)
    for written in ("ru", ""):  # one language listed, then none: nothing to switch between
        field = ru.locator("#panel").get_by_label("Языки", exact=True)
        field.fill(written)
        field.press("Tab")
        settle(ru)
        expect(ru.locator("[data-languages]")).to_be_hidden()
        # What the switch had pushed into the "⋯" menu is back on the bar, and no "⋯" opens on nothing.
        expect(ru.locator(".toolbar-more")).to_be_hidden()
        expect(ru.locator('.toolbar > [data-action="settings"]')).to_be_visible()
    shoot(ru, "forms-toolbar-one-language")
