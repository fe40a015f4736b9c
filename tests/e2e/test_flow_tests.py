"""The simulator's step back, start anywhere and stale buttons; save as test, run all, generate and
coverage on the graph, in the real editor in Chromium. Screenshots go to tests/artifacts/."""
from __future__ import annotations

import copy
import json

from playwright.sync_api import Browser, Page, expect

from tests.e2e.canvas import node_point, open_editor, wait_until
from tests.e2e.conftest import ROOT, App, Watch, russian_page, shoot


def registration(flow_id: str) -> dict:
    doc = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    doc["id"] = flow_id
    return doc


def create(app: App, flow_id: str) -> None:
    answer = app.api("POST", "/api/flows", json=registration(flow_id))
    assert answer.status_code == 201, answer.text


def say(page: Page, text: str) -> None:
    sim = page.locator("#simulator")
    count = sim.locator(".sim-bot").count()
    sim.locator("[data-sim-input]").fill(text)
    sim.locator("[data-sim-form] button[type=submit]").click()
    expect(sim.locator(".sim-bot")).not_to_have_count(count)


def test_step_back_then_continue_and_stale_buttons(page: Page, app: App) -> None:
    create(app, "e2e_back")
    open_editor(page, app.url, "e2e_back")
    sim = page.locator("#simulator")
    for text in ("/start", "Иван", "+79991234567", "ivan@example.com"):
        say(page, text)
    expect(sim.locator("[data-sim-state]")).to_have_text("ask_pdn")
    expect(sim.locator(".sim-button", has_text="Да")).not_to_have_class("stale")
    # Go back to the step after the name: later messages disappear, the dialog waits for the phone again.
    sim.locator(".sim-user", has_text="Иван").click()
    expect(sim.locator("[data-sim-state]")).to_have_text("ask_phone")
    expect(sim.locator(".sim-user", has_text="ivan@example.com")).to_have_count(0)
    expect(sim.locator("[data-sim-data]")).to_contain_text("name: Иван")
    expect(sim.locator("[data-sim-data]")).not_to_contain_text("phone")
    # Timers are rewound too: the reminder fires, going back forgets it, and it fires again.
    reminder = "Вы хотели завершить регистрацию. Продолжим?"
    sim.locator("[data-sim-idle-seconds]").fill("901")
    sim.locator("[data-sim-idle]").click()
    expect(sim.locator(".sim-bot", has_text=reminder)).to_have_count(1)
    sim.locator(".sim-user", has_text="Иван").click()
    expect(sim.locator(".sim-bot", has_text=reminder)).to_have_count(0)
    sim.locator("[data-sim-idle]").click()
    expect(sim.locator(".sim-bot", has_text=reminder)).to_have_count(1)
    sim.locator(".sim-clock").click()  # the latest step: there is nothing to go back over
    expect(sim.locator(".sim-system", has_text="Back at step")).to_have_count(2)
    expect(sim.locator(".sim-bot", has_text=reminder)).to_have_count(1)
    say(page, "89990001122")
    expect(sim.locator("[data-sim-data]")).to_contain_text("+79990001122")
    say(page, "a@b.ru")
    expect(sim.locator(".sim-button", has_text="Да")).not_to_have_class("stale")
    sim.locator(".sim-button", has_text="Да").click()
    expect(sim.locator(".sim-system", has_text="The dialog ended")).to_be_visible()
    expect(sim.locator(".sim-button", has_text="Да")).to_have_class("sim-button stale")
    shoot(page, "simulator-step-back")


def test_start_anywhere_with_prefilled_data(page: Page, app: App) -> None:
    create(app, "e2e_anywhere")
    open_editor(page, app.url, "e2e_anywhere")
    sim = page.locator("#simulator")
    box = sim.locator("[data-sim-start]")
    sim.locator("[data-sim-from]").click()  # nothing selected: the form opens on the flow's start state
    expect(box).to_be_visible()
    picker = box.get_by_label("Start the dialog at")
    expect(picker.locator("option:checked")).to_have_text("Имя")
    picker.select_option(label="Согласие на обработку ПДн")  # picked by title: its names come as rows
    expect(box.locator("[data-sim-var-name]")).to_have_count(2)
    assert [box.locator("[data-sim-var-name]").nth(i).input_value() for i in range(2)] == ["name", "phone"]
    box.get_by_label("Value of name").fill("Ann")
    box.get_by_label("Value of phone").fill("+79990000000")
    box.get_by_role("button", name="+ data").click()
    box.get_by_label("Name of data 3").fill("2nd")
    box.get_by_label("Value of data 3").fill("x")
    box.get_by_role("button", name="Start here").click()
    expect(box.locator("[data-sim-start-error]")).to_contain_text("“2nd” cannot be a data name")
    box.get_by_role("button", name="Remove data 3").click()
    shoot(page, "simulator-start-anywhere")
    box.get_by_role("button", name="Start here").click()
    expect(sim.locator("[data-sim-state]")).to_have_text("ask_pdn")
    sim.locator(".sim-button", has_text="Да").click()
    expect(sim.locator(".sim-bot").last).to_have_text("Готово! Имя: Ann, телефон: +79990000000")


def test_start_anywhere_in_russian_at_1280(browser: Browser, app: App, watch: Watch) -> None:
    create(app, "e2e_anywhere_ru")
    with russian_page(browser, app, watch, "anywhere_ru", "editor") as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        open_editor(page, app.url, "e2e_anywhere_ru")
        point = node_point(page, "ask_pdn")
        page.mouse.click(point["x"], point["y"])
        sim = page.locator("#simulator")
        sim.locator("[data-sim-from]").click()
        box = sim.locator("[data-sim-start]")
        expect(box.get_by_label("Начать диалог с состояния").locator("option:checked")).to_have_text("Согласие на обработку ПДн")
        box.get_by_label("Значение name").fill("Анна")
        shoot(page, "ru-simulator-start-anywhere")
        box.get_by_role("button", name="Начать отсюда").click()
        expect(sim.locator("[data-sim-state]")).to_have_text("ask_pdn")
        expect(sim.locator("[data-sim-data]")).to_contain_text("name: Анна")


def test_save_as_test_run_all_and_coverage_on_the_graph(page: Page, app: App) -> None:
    create(app, "e2e_tests")
    open_editor(page, app.url, "e2e_tests")
    for text in ("/start", "Иван", "+79991234567"):
        say(page, text)
    sim = page.locator("#simulator")
    sim.locator("[data-sim-save]").click()
    form = page.locator("[data-tests-save]")
    expect(form).to_be_visible()
    form.locator("[data-tests-save-name]").fill("name and phone")
    # Switch off the replies of the first step: only its state is checked.
    form.locator('fieldset[data-index="0"] input[data-kind="expect-replies"]').uncheck()
    shoot(page, "tests-save-as-test")
    form.get_by_role("button", name="Save test").click()
    expect(page.locator(".test-item", has_text="name and phone")).to_be_visible()
    saved = app.api("GET", "/api/flows/e2e_tests/tests").json()["tests"][0]
    assert "replies" not in saved["steps"][0]["expect"] and saved["steps"][0]["expect"]["state"] == "ask_name"
    assert saved["steps"][2]["expect"]["data"] == {"phone": "+79991234567"}

    page.get_by_role("button", name="Run all").click()
    expect(page.locator("[data-tests-status]")).to_have_text("1 passed, 0 failed on the draft.")
    expect(page.locator("[data-tests-coverage]")).to_contain_text("33.3%")
    covered = page.evaluate("window.botflowEditor.cy.edges('.cov-covered').map(e => e.data('tid') || e.id())")
    assert len(covered) == 2

    # A change to the draft makes it fail, with expected and actual side by side.
    draft = app.api("GET", "/api/flows/e2e_tests")
    changed = copy.deepcopy(draft.json())
    changed["states"][1]["say"][0]["text"] = "Ваш телефон?"
    assert app.api("PUT", "/api/flows/e2e_tests", json=changed,
                   headers={"If-Match": draft.headers["etag"]}).status_code == 200
    page.get_by_role("button", name="Run all").click()
    expect(page.locator("[data-tests-status]")).to_have_text("0 passed, 1 failed on the draft.")
    failure = page.locator(".test-failure")
    expect(failure.locator("td.expected")).to_contain_text("Введите телефон в формате +7XXXXXXXXXX")
    expect(failure.locator("td.actual")).to_contain_text("Ваш телефон?")
    shoot(page, "tests-run-all-failed")

    # The new wording is right: one click makes it what the step expects, and the run that follows passes.
    failure.get_by_role("button", name="Accept the new answer").click()
    expect(page.locator("[data-tests-status]")).to_have_text("1 passed, 0 failed on the draft.")
    expect(page.locator(".test-failure")).to_have_count(0)
    saved = app.api("GET", "/api/flows/e2e_tests/tests").json()["tests"][0]
    assert saved["steps"][1]["expect"]["replies"] == ["Ваш телефон?"]
    assert "replies" not in saved["steps"][0]["expect"], "only the step that differed changed"
    assert saved["steps"][2]["expect"]["data"] == {"phone": "+79991234567"}

    page.get_by_role("button", name="Generate").click()
    generated = page.locator("[data-tests-generated]")
    expect(generated).to_contain_text("fire 6 of 6 transitions")
    expect(page.locator("[data-tests-coverage]")).to_contain_text("100%")
    generated.get_by_role("button", name="Add 9 tests").click()
    expect(page.locator(".test-item")).to_have_count(10)
    page.get_by_role("button", name="Run all").click()
    expect(page.locator("[data-tests-status]")).to_contain_text("on the draft.")
    assert page.evaluate("window.botflowEditor.cy.edges('.cov-uncovered').length") == 0
    assert page.evaluate("window.botflowEditor.cy.edges('.cov-covered').length") == 6
    shoot(page, "tests-coverage-on-graph")


def test_uncovered_transitions_are_drawn_on_the_graph(page: Page, app: App) -> None:
    doc = registration("e2e_uncovered")
    doc["states"].append({"id": "island", "say": [{"text": "Nobody comes here"}]})
    doc["transitions"].append({"id": "from_island", "from": "island", "to": "refused", "on": "text", "match": ["x"]})
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    open_editor(page, app.url, "e2e_uncovered")
    page.get_by_role("tab", name="Tests").click()
    page.get_by_role("button", name="Generate").click()
    missing = page.locator("[data-tests-missing] li", has_text="Transition “island” → “Отказ”")
    expect(missing).to_contain_text("no dialog reaches island from the start")
    expect(page.locator("[data-tests-coverage]")).to_contain_text("85.7%")
    assert page.evaluate("window.botflowEditor.cy.edges('.cov-uncovered').map(e => e.id())") == ["t:from_island"]
    shoot(page, "tests-uncovered-on-graph")
    # Zooming out far enough swaps the whole stylesheet for dots and back: the marks' colours come back with it.
    red = "window.botflowEditor.cy.getElementById('t:from_island').style('line-color')"
    marked = page.evaluate(red)
    look = "document.getElementById('canvas').dataset.look"
    for zoom, want in ((0.03, "dots"), (1.0, "")):
        # The braces matter: cy.zoom(z) returns the whole Cytoscape core, which Playwright would copy back.
        page.evaluate("(z) => { window.botflowEditor.cy.zoom(z); }", zoom)
        wait_until(page, f"({look} || '') === '{want}'")
    assert page.evaluate(red) == marked != page.evaluate(
        "window.botflowEditor.cy.getElementById('t:name_ok').style('line-color')")


def test_publish_form_shows_the_failing_tests_of_a_bot_that_requires_them(page: Page, app: App) -> None:
    create(app, "e2e_gate")
    assert app.api("POST", "/api/flows/e2e_gate/versions", json={"note": "first"}).status_code == 201
    assert app.api("POST", "/api/bots", json={"id": "gatebot", "title": "Gate bot"}).status_code == 201
    page.goto(app.url + "/bots/gatebot")
    page.get_by_label("Publish only versions that pass the flow's saved tests").check()
    page.locator("#bot-settings").get_by_role("button", name="Save").click()
    expect(page.locator("#bot-settings .notice.ok")).to_be_visible()
    assert app.api("GET", "/api/bots/gatebot").json()["require_tests"] is True
    wrong = {"name": "greets in English", "steps": [{"update": {"text": "/start"}, "expect": {"replies": ["Hello!"]}}]}
    assert app.api("PUT", "/api/flows/e2e_gate/tests", json={"tests": [wrong]},
                   headers={"If-Match": '"t0"'}).status_code == 200
    page.goto(app.url + "/flows/e2e_gate/versions")
    page.locator("select[name=bot]").select_option("gatebot")
    page.get_by_role("button", name="Publish").click()
    result = page.locator("#publish-result")
    expect(result).to_contain_text("fails 1 of 1 saved tests")
    expect(result).to_contain_text("greets in English")
    expect(result).to_contain_text("replies: expected «Hello!», got «Привет! Как вас зовут?»")
    shoot(page, "publish-blocked-by-tests")
    assert app.api("GET", "/api/bots/gatebot").json()["flow"] is None
    right = {"name": "greets", "steps": [{"update": {"text": "/start"}, "expect": {"replies": ["Привет! Как вас зовут?"]}}]}
    revision = app.api("GET", "/api/flows/e2e_gate/tests").json()["revision"]
    assert app.api("PUT", "/api/flows/e2e_gate/tests", json={"tests": [right]},
                   headers={"If-Match": f'"{revision}"'}).status_code == 200
    page.get_by_role("button", name="Publish").click()
    expect(result).to_contain_text("All 1 saved tests passed on this version.")


def test_replay_of_real_dialogs_and_one_click_to_a_saved_test(page: Page, app: App) -> None:
    from tests.e2e.conftest import MAX_TOKEN
    from tests.integration.runtime_app import msg

    create(app, "e2e_replay")
    assert app.api("POST", "/api/flows/e2e_replay/versions", json={"note": "live"}).status_code == 201
    secret = "e2e-replay-secret"
    assert app.api("POST", "/api/bots", json={"id": "replaybot", "title": "Replay bot", "token": MAX_TOKEN,
                                              "webhook_secret": secret}).status_code == 201
    assert app.api("POST", "/api/bots/replaybot/publish", json={"flow": "e2e_replay", "version": 1}).status_code == 200
    for user, words in ((8801, ["/start", "Иван", "+79991234567"]), (8802, ["/start", "Анна"])):
        for word in words:
            answer = app.api("POST", "/webhooks/max/replaybot", json=msg(user, word),
                             headers={"X-Max-Bot-Api-Secret": secret})
            assert answer.status_code == 200, answer.text
    draft = app.api("GET", "/api/flows/e2e_replay")
    changed = copy.deepcopy(draft.json())
    changed["states"][2]["say"][0]["text"] = "Ваш email?"
    assert app.api("PUT", "/api/flows/e2e_replay", json=changed,
                   headers={"If-Match": draft.headers["etag"]}).status_code == 200
    open_editor(page, app.url, "e2e_replay")
    page.get_by_role("tab", name="Tests").click()
    replay = page.locator("[data-tests-replay]")
    expect(replay).to_be_visible()
    replay.get_by_role("button", name="Replay").click()
    result = replay.locator("[data-replay-result]")
    expect(result).to_contain_text("1 of 2 dialogs would now go differently.")
    expect(result.locator("td.expected")).to_contain_text("Введите email")
    expect(result.locator("td.actual")).to_contain_text("Ваш email?")
    shoot(page, "tests-replay")
    result.get_by_role("button", name="Save as test").click()
    expect(page.locator(".test-item", has_text="replay of user 8801")).to_be_visible()
    page.get_by_role("button", name="Run all").click()
    expect(page.locator("[data-tests-status]")).to_have_text("0 passed, 1 failed on the draft.")


def test_a_viewer_runs_the_tests_but_cannot_change_them(browser, app: App, watch) -> None:
    from tests.e2e.conftest import login

    create(app, "e2e_viewer")
    test = {"name": "opens", "steps": [{"update": {"text": "/start"}, "expect": {"state": "ask_name"}}]}
    assert app.api("PUT", "/api/flows/e2e_viewer/tests", json={"tests": [test]},
                   headers={"If-Match": '"t0"'}).status_code == 200
    ctx = browser.new_context(viewport={"width": 1500, "height": 900})
    page = login(ctx, app, "vera", watch)
    open_editor(page, app.url, "e2e_viewer")
    expect(page.locator("[data-sim-save]")).to_have_count(0)
    page.get_by_role("tab", name="Tests").click()
    page.get_by_role("button", name="Run all").click()
    expect(page.locator("[data-tests-status]")).to_have_text("1 passed, 0 failed on the draft.")
    expect(page.locator(".test-item .link-button")).to_have_count(0)
    ctx.close()


def test_a_failing_test_and_its_accept_button_speak_russian(browser: Browser, app: App, watch: Watch) -> None:
    create(app, "e2e_ru_accept")
    test = {"name": "приветствие", "steps": [{"update": {"text": "/start"}, "expect": {"replies": ["Здравствуйте!"]}}]}
    tests = app.api("GET", "/api/flows/e2e_ru_accept/tests")
    assert app.api("PUT", "/api/flows/e2e_ru_accept/tests", json={"tests": [test]},
                   headers={"If-Match": tests.headers["etag"]}).status_code == 200
    with russian_page(browser, app, watch, "irina", "editor") as page:
        open_editor(page, app.url, "e2e_ru_accept")
        page.locator("[data-tab-show=tests]").click()
        page.locator("[data-tests-run]").click()
        expect(page.locator("[data-tests-status]")).to_have_text("На черновике: пройдено 0, не пройдено 1.")
        accept = page.get_by_role("button", name="Принять новый ответ")
        expect(accept).to_be_visible()
        shoot(page, "ru-tests-accept")
        accept.click()
        expect(page.locator("[data-tests-status]")).to_have_text("На черновике: пройдено 1, не пройдено 0.")
    saved = app.api("GET", "/api/flows/e2e_ru_accept/tests").json()["tests"][0]
    assert saved["steps"][0]["expect"]["replies"] == ["Привет! Как вас зовут?"]


def test_the_coverage_panel_lists_in_russian_what_no_test_touches(browser: Browser, app: App, watch: Watch) -> None:
    create(app, "e2e_ru_missing")
    test = {"name": "имя и телефон", "steps": [{"update": {"text": "/start"}}, {"update": {"text": "Иван"}},
                                               {"update": {"text": "+79991234567"}}]}
    tests = app.api("GET", "/api/flows/e2e_ru_missing/tests")
    assert app.api("PUT", "/api/flows/e2e_ru_missing/tests", json={"tests": [test]},
                   headers={"If-Match": tests.headers["etag"]}).status_code == 200
    with russian_page(browser, app, watch, "zoya_coverage", "editor") as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        open_editor(page, app.url, "e2e_ru_missing")
        page.locator("[data-tab-show=tests]").click()
        page.locator("[data-tests-run]").click()
        missing = page.locator("[data-tests-missing]")
        expect(missing).to_contain_text("Сценарий покрыт на")
        items = missing.locator("li")
        for words in ("Неверный ввод в «Имя»", "Кнопка «Да» в «Согласие на обработку ПДн»", "Напоминание",
                      "Команда /help", "Переход «Email» → «Согласие на обработку ПДн»"):
            expect(items.filter(has_text=words)).to_have_count(1)
        # What the test did is not listed: the name's and the phone's transitions, the restart command.
        expect(items.filter(has_text="Переход «Имя» → «Телефон»")).to_have_count(0)
        expect(items.filter(has_text="Команда /start")).to_have_count(0)
        # The id is there on hover.
        assert items.filter(has_text="Неверный ввод в «Имя»").locator(".point-words").get_attribute("title") == "ask_name"
        missing.scroll_into_view_if_needed()
        shoot(page, "ru-tests-coverage-missing")


def test_a_failing_press_is_named_by_its_button_text(browser: Browser, app: App, watch: Watch) -> None:
    create(app, "e2e_ru_press")
    test = {"name": "согласие", "steps": [
        {"update": {"text": "/start"}}, {"update": {"text": "Иван"}}, {"update": {"text": "+79991234567"}},
        {"update": {"text": "ivan@example.com"}}, {"update": {"payload": "yes"}, "expect": {"state": "ask_name"}}]}
    tests = app.api("GET", "/api/flows/e2e_ru_press/tests")
    assert app.api("PUT", "/api/flows/e2e_ru_press/tests", json={"tests": [test]},
                   headers={"If-Match": tests.headers["etag"]}).status_code == 200
    with russian_page(browser, app, watch, "pavel", "editor") as page:
        open_editor(page, app.url, "e2e_ru_press")
        page.locator("[data-tab-show=tests]").click()
        page.locator("[data-tests-run]").click()
        failure = page.locator(".test-failure")
        expect(failure).to_contain_text("(кнопка «Да»)")
        expect(failure).not_to_contain_text("[yes]")
