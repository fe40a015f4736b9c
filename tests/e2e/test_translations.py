"""Translating in the designer, in Russian at 1280x800: the editor's language switch (cards and side panel),
the simulator's language, and the translation table with its missing-only filter and .po files."""
from __future__ import annotations


from playwright.sync_api import Browser, expect

from tests.e2e.canvas import node_point, open_editor, panel_form, settle
from tests.e2e.conftest import PASSWORD, App, Watch, login, shoot

FLOW = {
    "format": "botflow/v1", "id": "shop_langs", "title": "Магазин на трёх языках", "start": "ask_name",
    "languages": ["ru", "en", "tt"],
    "settings": {"fallback": {"ru": "Не понял.", "en": "Sorry, I did not get that."}},
    "states": [
        {"id": "ask_name", "title": "Имя", "say": [{"text": {"ru": "Как вас зовут?", "en": "What is your name?",
                                                             "tt": "Исемегез ничек?"}}],
         "input": {"type": "text", "save_as": "name"}},
        {"id": "ask_colour", "title": "Цвет", "say": [{"text": "Какой цвет, {name}?",
                                                       "buttons": [[{"text": {"ru": "Красный", "en": "Red"},
                                                                     "payload": "red"}]]}]},
        {"id": "done", "title": "Готово", "final": True, "say": [{"text": {"ru": "Спасибо!", "en": "Thank you!"}}]},
    ],
    "transitions": [
        {"id": "named", "from": "ask_name", "to": "ask_colour", "on": "input"},
        {"id": "red", "from": "ask_colour", "to": "done", "on": "button", "payload": "red"},
    ],
    "layout": {"ask_name": {"x": 150, "y": 100}, "ask_colour": {"x": 150, "y": 300}, "done": {"x": 150, "y": 500}},
}


def russian_1280(browser: Browser, app: App, watch: Watch, username: str):
    made = app.api("POST", "/api/users", json={"username": username, "role": "editor", "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU", accept_downloads=True)
    return ctx, login(ctx, app, username, watch)


def card_text(page, state_id: str) -> dict:
    return page.evaluate("""(sid) => {
        const card = window.botflowEditor.cy.getElementById('s:' + sid).data('card');
        return {message: card.message, fallback: card.fallback, buttons: card.rows.filter(r => r.kind === 'button')
                .map(r => [r.text, !!r.fallback])};
    }""", state_id)


def reach_picker(page) -> None:  # noqa: ANN001
    """At 1280 px in Russian the toolbar's language switch waits in the "⋯" menu: open it when it is there."""
    more = page.locator(".toolbar-more > button")
    if page.locator("#toolbar-overflow [data-editor-language]").count() and more.get_attribute("aria-expanded") != "true":
        more.click()


def test_the_language_switch_shows_and_translates_the_flow(browser: Browser, app: App, watch: Watch) -> None:
    answer = app.api("POST", "/api/flows", json=FLOW)
    assert answer.status_code == 201, answer.text
    ctx, page = russian_1280(browser, app, watch, "tanya")
    try:
        open_editor(page, app.url, "shop_langs")
        picker = page.locator("[data-editor-language]")
        reach_picker(page)
        expect(picker).to_be_visible()
        expect(picker.locator("option")).to_have_text(["Русский (основной)", "Английский", "Татарский"])
        assert card_text(page, "ask_name")["message"] == "Как вас зовут?"

        reach_picker(page)
        picker.select_option("en")
        assert card_text(page, "ask_name") == {"message": "What is your name?", "fallback": False, "buttons": []}
        colour = card_text(page, "ask_colour")
        assert colour["fallback"] is True and colour["message"] == "Какой цвет, {name}?"  # the default, as a hint
        assert colour["buttons"] == [["Red", False]]
        expect(page.locator(".card-msg.untranslated")).to_have_count(1)

        # The side panel shows the state's texts in English, the Russian source under an empty field.
        p = node_point(page, "ask_colour", 0, -20)
        page.mouse.click(p["x"], p["y"])
        panel_form(page, 'form[data-translate="en"]')
        panel = page.locator("#panel")
        expect(panel.locator("h2")).to_contain_text("Английский")
        field = panel.locator("textarea").first
        expect(field).to_have_value("")
        expect(field).to_have_attribute("placeholder", "Какой цвет, {name}?")
        expect(panel).to_contain_text("Нет перевода; отправится так:")
        shoot(page, "ru-editor-language-en")
        field.fill("Which colour, {name}?")
        field.press("Tab")
        settle(page)
        assert card_text(page, "ask_colour")["message"] == "Which colour, {name}?"
        expect(panel.locator(".when-empty").first).to_be_hidden()
        expect(panel.locator(".when-filled").first).to_have_text("Русский: Какой цвет, {name}?")
        expect(page.locator(".card-msg.untranslated")).to_have_count(0)
        saved = app.api("GET", "/api/flows/shop_langs").json()
        assert saved["states"][1]["say"][0]["text"] == {"ru": "Какой цвет, {name}?", "en": "Which colour, {name}?"}
        shoot(page, "ru-editor-language-en-translated")

        # Back in the default language the side panel is the ordinary form again.
        reach_picker(page)
        picker.select_option("ru")
        panel_form(page, 'form[hx-post$="/state/ask_colour"]')
        expect(page.locator("#panel textarea[name='say[0].text']")).to_have_value("Какой цвет, {name}?")

        # The simulated user writes from an English MAX app: the dialog opens in English.
        sim_language = page.locator("[data-sim-language]")
        expect(sim_language).to_be_visible()
        sim_language.select_option("en")
        page.locator("[data-sim-input]").fill("hi")
        page.locator("[data-sim-input]").press("Enter")
        expect(page.locator(".sim-bot").last).to_contain_text("What is your name?")
        page.locator("[data-sim-input]").fill("Ann")
        page.locator("[data-sim-input]").press("Enter")
        expect(page.locator(".sim-bot").last).to_contain_text("Which colour, Ann?")
        shoot(page, "ru-simulator-english-user")
    finally:
        ctx.close()


def test_the_translation_table_marks_filters_and_saves(browser: Browser, app: App, watch: Watch) -> None:
    flow = {**FLOW, "id": "table_langs"}
    answer = app.api("POST", "/api/flows", json=flow)
    assert answer.status_code == 201, answer.text
    ctx, page = russian_1280(browser, app, watch, "timur")
    try:
        page.goto(f"{app.url}/flows/table_langs/translations")
        expect(page.locator("h1")).to_contain_text("Переводы")
        table = page.locator("[data-translations]")
        expect(table.locator("thead th")).to_have_text(["Текст", "Русский (основной)", "Английский", "Татарский"])
        expect(table.locator("tbody tr")).to_have_count(5)
        expect(table.locator("td.missing").first).to_be_visible()
        shoot(page, "ru-translation-table")

        page.locator("[data-missing-only]").click()
        page.wait_for_url("**missing=1")
        expect(table.locator("tbody tr")).to_have_count(4)  # the name question is in all three languages

        row = table.locator('tr[data-path="states[2].say[0].text"]')
        cell = row.locator("td[lang=tt] textarea")
        cell.fill("Рәхмәт!")
        cell.press("Tab")
        expect(row.locator("td[lang=tt] .saved-mark")).to_have_text("Сохранено")
        expect(row.locator("td[lang=tt]")).not_to_have_class("missing")
        saved = app.api("GET", "/api/flows/table_langs").json()
        assert saved["states"][2]["say"][0]["text"]["tt"] == "Рәхмәт!"
        shoot(page, "ru-translation-table-missing-only")

        with page.expect_download() as download:
            page.get_by_role("link", name="Скачать: Английский").click()
        text = open(download.value.path(), encoding="utf-8").read()
        assert 'msgid ""\n"states[0].say[0].text\\n"\n"Как вас зовут?"' in text
        assert 'msgstr "What is your name?"' in text
    finally:
        ctx.close()
