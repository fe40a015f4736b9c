"""What a person reads: the Russian UI, refused edits, pages that stay current, an expired session, no API words."""
from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from flows.validate.issue import SEVERITIES
from tests.e2e.canvas import click_state, click_transition, node_point, open_editor, settle, wait_until
from tests.e2e.conftest import MAX_TOKEN, ROOT, App, Watch, login, russian_page, shoot

EXAMPLE = ROOT / "examples" / "registration.json"


def flow_copy(app: App, flow_id: str, **changes: object) -> dict:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.update(id=flow_id, **changes)
    answer = app.api("POST", "/api/flows", json=doc)
    assert answer.status_code == 201, answer.text
    return doc


def test_russian_ui_from_the_browser_language_and_the_switch(browser: Browser, app: App, watch: Watch) -> None:
    flow_copy(app, "ru_ui")
    # Her own account: the switch is kept on the user, and must not change the language of other tests.
    with russian_page(browser, app, watch, "lyudmila", "editor") as page:
        assert page.locator("html").get_attribute("lang") == "ru"
        expect(page.locator("h1")).to_have_text("Сценарии")
        expect(page.get_by_role("button", name="Создать и открыть")).to_be_visible()
        shoot(page, "ru-flows-list")

        open_editor(page, app.url, "ru_ui")
        # The scripts' texts come from the catalogue the page carries: the save status is Russian too.
        expect(page.locator("#save-status")).to_have_text("Всё сохранено")
        expect(page.locator("#issues-summary")).to_have_text("Проблем нет")
        expect(page.locator("[data-sim-input]")).to_have_attribute("placeholder", "Напишите сообщение")
        # The Russian toolbar fits one line on a 1440-pixel screen (its words are longer than the English).
        tops = page.eval_on_selector_all(".toolbar > button, .toolbar > a.button",
                                         "els => els.map(e => Math.round(e.getBoundingClientRect().top))")
        assert len(tops) > 10 and max(tops) - min(tops) <= 4, tops
        click_state(page, "ask_phone")
        expect(page.locator("#panel h2")).to_contain_text("Состояние")
        expect(page.locator("#panel")).to_contain_text("Конечное состояние")
        shoot(page, "ru-editor-state-panel")
        # What a step did is said in Russian; the engine's English sentence is the line's tooltip.
        fired = page.locator("[data-sim-fired]")
        for text, said in (("привет", "Начался диалог, состояние «Имя»."), ("Мария", "Переход name_ok; диалог в состоянии «Телефон».")):
            page.locator("[data-sim-input]").fill(text)
            page.locator("[data-sim-input]").press("Enter")
            expect(fired).to_contain_text(said)
        expect(fired).to_have_attribute("title", re.compile(r"transition \S+ fired"))
        shoot(page, "ru-simulator-fired")

        # The switch: English from now on (a cookie), whatever the browser says; and back.
        page.locator('[data-language="en"]').click()
        page.wait_for_url("**/flows/ru_ui/edit")
        wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null")
        assert page.locator("html").get_attribute("lang") == "en"
        expect(page.locator("#save-status")).to_have_text("All changes saved")
        page.goto(app.url + "/flows")
        expect(page.locator("h1")).to_have_text("Flows")
        shoot(page, "language-switched-to-english")
        page.locator('[data-language="ru"]').click()
        expect(page.locator("h1")).to_have_text("Сценарии")
    # Another browser, in English: the choice came with her account.
    other = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US")
    try:
        page = login(other, app, "lyudmila", watch)
        assert page.locator("html").get_attribute("lang") == "ru"
        expect(page.locator("h1")).to_have_text("Сценарии")
    finally:
        other.close()


def test_rejected_edit_is_marked_and_not_called_saved(page: Page, app: App) -> None:
    flow_copy(app, "refused_edit")
    open_editor(page, app.url, "refused_edit")
    expect(page.locator("#save-status")).to_have_text("All changes saved")

    # An empty payload for a button transition: refused, the field marked, the status says not saved.
    click_transition(page, "pdn_yes_button")
    payload = page.locator("#panel").get_by_label("Button payload", exact=True)
    payload.fill("")
    payload.press("Tab")
    settle(page)
    expect(page.locator("#save-status")).to_contain_text("Not saved")
    expect(page.locator("#save-status")).not_to_contain_text("All changes saved")
    marked = page.locator("#panel").get_by_label("Button payload", exact=True)
    expect(marked).to_have_attribute("aria-invalid", "true")
    expect(page.locator('#panel [data-error-for="payload"]')).to_be_visible()
    expect(page.locator("#panel h2")).to_have_attribute("data-key", "pdn_yes_button")
    assert app.api("GET", "/api/flows/refused_edit").json()["transitions"][3]["payload"] == "yes"
    shoot(page, "editor-rejected-payload-marked")

    # A rename onto a taken id: refused, and the panel still names the state being edited.
    click_state(page, "ask_phone")
    field = page.locator("#panel").get_by_label("Id", exact=True)
    field.fill("ask_email")
    field.press("Tab")
    settle(page)
    expect(page.locator("#save-status")).to_contain_text("Not saved")
    expect(page.locator("#panel h2")).to_have_attribute("data-key", "ask_phone")
    expect(page.locator("#panel").get_by_label("Id", exact=True)).to_have_attribute("aria-invalid", "true")
    shoot(page, "editor-rejected-rename-marked")

    # Fixing it saves, and the status says so again.
    field = page.locator("#panel").get_by_label("Id", exact=True)
    field.fill("ask_phone_number")
    field.press("Tab")
    settle(page)
    expect(page.locator("#save-status")).to_have_text("All changes saved")
    assert "ask_phone_number" in [s["id"] for s in app.api("GET", "/api/flows/refused_edit").json()["states"]]


def test_a_refused_edit_is_not_dropped_by_selecting_another_state(page: Page, app: App, watch: Watch) -> None:
    flow_copy(app, "kept_edit")
    open_editor(page, app.url, "kept_edit")
    click_state(page, "ask_name")
    panel = page.locator("#panel")
    panel.get_by_label("Title", exact=True).fill("Имя клиента")
    panel.get_by_label("Waits for").select_option("choice")  # needs its choices: the whole edit is refused
    settle(page)
    expect(page.locator("#save-status")).to_contain_text("Not saved")

    watch.refuse_confirms = 1
    p = node_point(page, "ask_phone")
    page.mouse.click(p["x"], p["y"])
    wait_until(page, "document.querySelector('#panel form') !== null")
    page.wait_for_timeout(300)
    assert watch.confirms and "not saved" in watch.confirms[-1]
    expect(panel.locator("h2")).to_have_attribute("data-key", "ask_name")  # the person chose to stay
    expect(panel.get_by_label("Title", exact=True)).to_have_value("Имя клиента")
    panel.get_by_label("Choices (one per line)").fill("Анна\nБорис")
    panel.get_by_label("Choices (one per line)").press("Tab")
    settle(page)
    expect(page.locator("#save-status")).to_have_text("All changes saved")
    stored = app.api("GET", "/api/flows/kept_edit").json()["states"][0]
    assert stored["title"] == "Имя клиента" and stored["input"]["type"] == "choice"
    shoot(page, "editor-refused-edit-kept")


def test_a_field_edit_is_one_request(page: Page, app: App) -> None:
    flow_copy(app, "one_trip")
    open_editor(page, app.url, "one_trip")
    click_state(page, "ask_phone")
    settle(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.method} {r.url}"))
    title = page.locator("#panel").get_by_label("Title", exact=True)
    title.fill("Телефон клиента")
    title.press("Tab")
    settle(page)
    expect(page.locator("#save-status")).to_have_text("All changes saved")
    assert page.evaluate("window.botflowEditor.store.doc.states[1].title") == "Телефон клиента"
    assert page.evaluate("window.botflowEditor.cy.getElementById('s:ask_phone').data('title')") == "Телефон клиента"
    assert app.api("GET", "/api/flows/one_trip").json()["states"][1]["title"] == "Телефон клиента"
    assert [r for r in requests if "/api/" in r or "/edit" in r] == \
        [f"POST {app.url}/flows/one_trip/edit/state/ask_phone"], requests

    # The answer also brought the issues: a dead end made in the panel shows without another request.
    requests.clear()
    page.locator("#panel").get_by_label("Final state").check()
    settle(page)
    expect(page.locator('#issues-list [data-code="final_has_exit"]')).to_have_count(1)
    wait_until(page, "window.botflowEditor.cy.getElementById('s:ask_phone').hasClass('issue-warning')")
    assert len([r for r in requests if "/api/" in r or "/edit" in r]) == 1, requests


def test_versions_page_updates_after_freeze_and_publish(page: Page, app: App) -> None:
    flow_copy(app, "fresh_versions")
    assert app.api("POST", "/api/bots", json={"id": "fresh_bot", "title": "Fresh", "token": MAX_TOKEN}).status_code == 201
    page.goto(app.url + "/flows/fresh_versions/versions")
    expect(page.locator('[data-testid="versions"]')).to_contain_text("No versions yet")
    page.get_by_label("Note").fill("first cut")
    page.get_by_role("button", name="Freeze a version").dblclick()  # an impatient double click freezes once
    expect(page.locator("#freeze-result")).to_contain_text("Version 1 frozen")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#freeze-result")).to_contain_text("Version 1 frozen")
    # Without a reload: the table, the version to publish and the compare lists know version 1.
    expect(page.locator('[data-testid="versions"] tr[data-version="1"]')).to_contain_text("first cut")
    expect(page.locator("#publish-version option")).to_have_text(["Version 1 — first cut"])
    expect(page.locator('select[name="a"] option')).to_have_text(["Draft", "Version 1"])
    frozen = page.locator('[data-testid="versions"] tr[data-version="1"] td').nth(3).inner_text()
    assert not re.search(r"\d{4}-\d{2}-\d{2}T|\.\d{6}", frozen), frozen
    shoot(page, "versions-after-freeze")

    page.locator("select[name=bot]").select_option("fresh_bot")
    page.get_by_role("button", name="Publish").click()
    bot_title = app.api("GET", "/api/bots/fresh_bot").json()["title"] or "fresh_bot"
    flow_title = app.api("GET", "/api/flows/fresh_versions").json()["title"]
    expect(page.locator("#publish-result")).to_contain_text(f"{bot_title} now serves {flow_title} version 1")
    expect(page.locator("#serving")).to_contain_text("served by fresh_bot · version 1")
    expect(page.locator("#publish-bot option[value=fresh_bot]")).to_contain_text("serves fresh_versions version 1")
    shoot(page, "versions-after-publish")


def test_expired_session_says_so_with_a_login_link(browser: Browser, app: App, watch: Watch) -> None:
    flow_copy(app, "expiring")
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US")
    try:
        page = login(ctx, app, "alice", watch)
        open_editor(page, app.url, "expiring")
        click_state(page, "ask_phone")
        ctx.clear_cookies()  # the session ends (logged out elsewhere, or the server's key changed)
        title = page.locator("#panel").get_by_label("Title", exact=True)
        title.fill("Телефон клиента")
        title.press("Tab")
        status = page.locator("#save-status")
        expect(status).to_contain_text("Your session has expired")
        expect(page.locator("#panel [data-session-expired]").get_by_role("link", name="Log in again")) \
            .to_have_attribute("href", "/login?next=%2Fflows%2Fexpiring%2Fedit")
        assert page.url.endswith("/flows/expiring/edit")  # still here: nothing the person did is thrown away
        page.evaluate("window.botflowEditor.addState({x: 40, y: 40})")
        expect(status).to_contain_text("Your session has expired")
        expect(status).not_to_contain_text("Bearer")
        expect(status.get_by_role("link", name="Log in again")).to_have_attribute("href", "/login?next=%2Fflows%2Fexpiring%2Fedit")
        settle(page)
        page.locator("[data-sim-input]").fill("Анна")
        page.locator("[data-sim-input]").press("Enter")
        expect(page.locator("[data-sim-log] .sim-user")).to_have_text("Анна")
        note = page.locator("[data-sim-log] .sim-error")
        expect(note).to_contain_text("Your session has expired", timeout=10_000)
        expect(note.get_by_role("link", name="Log in again")).to_be_visible()
        assert "Bearer" not in page.locator("[data-sim-log]").inner_text()
        assert page.locator("[data-sim-log] .sim-bot").count() == 0
        shoot(page, "editor-session-expired")
    finally:
        ctx.close()


def test_a_viewer_is_told_in_russian_why_the_simulator_does_not_answer(browser: Browser, app: App,
                                                                      watch: Watch) -> None:
    flow_copy(app, "viewed")
    with russian_page(browser, app, watch, "vlad", "viewer") as page:
        open_editor(page, app.url, "viewed")
        settle(page)
        page.locator("[data-sim-idle-seconds]").fill("-5")
        page.locator("[data-sim-idle]").click()
        expect(page.locator("[data-sim-log] .sim-error")).to_have_text("Укажите, сколько секунд проходит: число больше 0.")
        page.locator("[data-sim-input]").fill("Анна")
        page.locator("[data-sim-input]").press("Enter")
        note = page.locator("[data-sim-log] .sim-error").last
        expect(note).to_have_text("Чтобы проверить сценарий в симуляторе, нужна роль редактора или выше.")
        assert page.locator("[data-sim-log] .sim-bot").count() == 0
        shoot(page, "editor-viewer-simulator-ru")


def test_duplicate_import_offers_to_replace_the_draft(page: Page, app: App, tmp_path: Path) -> None:
    doc = flow_copy(app, "twice")
    doc["title"] = "Второй заход"
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    page.set_input_files("input[name=document]", str(path))
    page.get_by_role("button", name="Import", exact=True).click()
    result = page.locator("#import-result")
    expect(result).to_contain_text("A flow with the id twice already exists.")
    expect(result).not_to_contain_text("/api/")
    shoot(page, "import-duplicate-replace-offered")
    result.get_by_role("button", name="Replace the draft").click()
    expect(result).to_contain_text("Replaced the draft of Второй заход")
    assert app.api("GET", "/api/flows/twice").json()["title"] == "Второй заход"


def test_bot_form_says_what_is_wrong_under_the_field_it_refuses(page: Page, app: App) -> None:
    assert app.api("POST", "/api/bots", json={"id": "form_taken", "title": "Taken"}).status_code == 201
    page.goto(page.url.replace("/flows", "/bots"))
    form = page.locator("#new-bot")
    form.get_by_label("Id", exact=True).fill("Not A Valid Id")
    form.get_by_label("Title", exact=True).fill("Поддержка")
    form.get_by_label("Token", exact=True).fill("secret-token-1")
    form.get_by_role("button", name="Create").click()
    expect(form.locator('[data-error-for="id"]')).to_contain_text("a lowercase Latin letter first")
    expect(form.get_by_label("Id", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_label("Id", exact=True)).to_have_value("Not A Valid Id")  # kept to correct
    expect(form.get_by_label("Title", exact=True)).to_have_value("Поддержка")
    expect(form.get_by_label("Token", exact=True)).to_have_value("")  # a secret is never sent back
    expect(form.get_by_label("Token", exact=True)).not_to_have_attribute("aria-invalid", "true")
    assert form.locator("[data-error-for]").count() == 1
    shoot(page, "bot-form-field-marked")
    form.get_by_label("Id", exact=True).fill("form_taken")
    form.get_by_role("button", name="Create").click()
    expect(form.locator('[data-error-for="id"]')).to_have_text("A bot with the id form_taken already exists.")
    form.get_by_label("Id", exact=True).fill("made_in_form")
    form.get_by_role("button", name="Create").click()
    expect(page).to_have_url(re.compile(r"/bots/made_in_form$"))


API_WORDS = [
    re.compile(r"\b(GET|PUT|POST|PATCH|DELETE)\b"),
    re.compile(r"/api/"),
    re.compile(r"\b(" + "|".join(SEVERITIES) + r")\b"),
    re.compile(r'"final"\s*:'),
    re.compile(r"\bsay\[\d+\]"),
    re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"),
    re.compile(r"\brev r?[0-9a-f]{2,}"),
    re.compile(r"Authorization|Bearer|If-Match"),
]


def words_on(page: Page) -> list[str]:
    text = page.locator("body").inner_text()
    return [m.group(0) for pattern in API_WORDS for m in pattern.finditer(text)]


def test_no_api_words_on_pages(browser: Browser, app: App, watch: Watch) -> None:
    # A flow with every kind of issue the examples provoke: no final state, so three states are traps.
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    for state in doc["states"]:
        state.pop("final", None)
    doc["id"] = "wordy"
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    flow_copy(app, "wordy_ok")
    assert app.api("POST", "/api/flows/wordy_ok/versions", json={"note": "one"}).status_code == 201
    assert app.api("POST", "/api/bots", json={"id": "wordy_bot", "token": MAX_TOKEN}).status_code == 201
    assert app.api("POST", "/api/bots/wordy_bot/publish", json={"flow": "wordy_ok", "version": 1}).status_code in (200, 201)
    for locale in ("en-US", "ru-RU"):
        ctx = browser.new_context(viewport={"width": 1440, "height": 900}, locale=locale)
        try:
            page = login(ctx, app, "alice", watch)
            seen: dict[str, list[str]] = {}
            for path in ("/flows", "/flows/wordy_ok/versions", "/bots", "/bots/wordy_bot", "/no/such/page",
                         "/flows/no_such_flow/versions"):
                page.goto(app.url + path)
                seen[path] = words_on(page)
            open_editor(page, app.url, "wordy")
            expect(page.locator("#issues-list .issue").first).to_be_visible()
            # One missing final state is one line, not one per trapped state.
            codes = page.eval_on_selector_all("#issues-list .issue", "els => els.map(e => e.dataset.code)")
            assert codes.count("no_path_to_final") <= 1 and codes.count("dead_end") <= 1, codes
            seen["editor"] = words_on(page)
            shoot(page, f"editor-issues-in-words-{locale[:2]}")
            page.goto(app.url + "/flows/wordy_ok/versions")
            page.locator("select[name=a]").select_option("1")
            page.locator("select[name=b]").select_option("draft")
            page.locator("#diff-result").wait_for(state="attached")
            page.locator("form[hx-get$='/diff'] button").click()
            page.locator("[data-testid=diff]").wait_for()
            seen["diff"] = words_on(page)
            page.goto(app.url + "/flows/wordy/versions")
            page.locator("#freeze-result + button, form[hx-post$='/versions'] button.primary").first.click()
            page.locator("#freeze-result .notice").wait_for()
            seen["refused freeze"] = words_on(page)
            shoot(page, f"freeze-refused-in-words-{locale[:2]}")
            assert not any(seen.values()), {k: v for k, v in seen.items() if v}
        finally:
            ctx.close()
