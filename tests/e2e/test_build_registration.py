"""An editor builds the registration dialog from an empty flow with mouse and keyboard, watches validation,
chats with it in the simulator, freezes it, publishes it to a bot; MAX users then get the same replies."""
from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from flows.diff import diff, is_empty
from tests.e2e.canvas import click_transition, document, drag_transition, panel_form, settle, wait_until
from tests.e2e.conftest import MAX_TOKEN, App, shoot
from tests.e2e.test_pages import registration_text

SECRET = "e2e-webhook-secret"
# Where each state goes on the canvas (canvas pixels; the empty canvas starts unzoomed).
PLACES = {"ask_name": (220, 70), "ask_phone": (220, 190), "ask_email": (220, 310), "ask_pdn": (220, 430),
          "confirmed": (110, 580), "refused": (360, 580)}


def field(page: Page, label: str):
    return page.locator("#panel").get_by_label(label, exact=True)


def commit(page: Page, label: str, value: str) -> None:
    """Type into a panel field and leave it (Tab), as a person does; the change is saved on leaving."""
    box = field(page, label)
    box.fill(value)
    box.press("Tab")
    settle(page)


def choose(page: Page, label: str, value: str) -> None:
    field(page, label).select_option(value)
    settle(page)


def add_state(page: Page, sid: str, title: str, text: str) -> None:
    canvas = page.locator("#canvas").bounding_box()
    x, y = PLACES[sid]
    page.mouse.dblclick(canvas["x"] + x, canvas["y"] + y)
    panel_form(page, "form[data-draft-form]")
    settle(page)
    commit(page, "Title", title)
    commit(page, "Id", sid)
    expect(page.locator("#panel h2")).to_have_attribute("data-key", sid)
    commit(page, "Message 1", text)


def set_input(page: Page, kind: str, save_as: str, error: str, **options: str) -> None:
    choose(page, "Waits for", kind)
    commit(page, "Save as", save_as)
    for label, value in options.items():
        commit(page, label, value)
    commit(page, "Error text", error)


def connect(page: Page, source: str, target: str, tid: str) -> None:
    before = {t["id"] for t in document(page)["transitions"]}
    drag_transition(page, source, target)
    settle(page)
    added = [t["id"] for t in document(page)["transitions"] if t["id"] not in before]
    if len(added) != 1:
        shoot(page, f"failed-connect-{source}-{target}")
    assert len(added) == 1, added
    click_transition(page, added[0])
    commit(page, "Id", tid)
    expect(page.locator("#panel h2")).to_have_attribute("data-key", tid)


def assignment(page: Page, key: str, value: str) -> None:
    page.locator("#panel").get_by_role("button", name="+ assignment").click()
    settle(page)
    commit(page, "Set 1 key", key)
    commit(page, "Set 1 value", value)


def command(page: Page, name: str, mode: str, match: str = "", reply: str = "") -> None:
    page.locator(f'#panel [data-command="{name}"] select').select_option(mode)
    settle(page)
    if mode == "custom":
        commit(page, f"{name.capitalize()}: texts (one per line)", match)
        if reply:
            commit(page, f"{name.capitalize()}: reply", reply)


def sim_send(page: Page, text: str) -> None:
    sim = page.locator("#simulator")
    count = sim.locator(".sim-bot, .sim-error").count()
    sim.locator("[data-sim-input]").fill(text)
    sim.locator("[data-sim-input]").press("Enter")
    expect(sim.locator(".sim-bot, .sim-error")).not_to_have_count(count)
    wait_until(page, "!document.getElementById('simulator').classList.contains('busy')")


def bot_texts(page: Page) -> list[str]:
    return page.locator("#simulator .sim-bot .sim-text").all_inner_texts()


def current_state(page: Page) -> list[str]:
    return page.evaluate("window.botflowEditor.cy.nodes('.sim-current').map(n => n.data('sid'))")


def test_build_chat_freeze_publish_and_serve_over_max(page: Page, app: App) -> None:
    example = json.loads(registration_text())

    # ---- a new, empty flow ----
    page.get_by_label("Id", exact=True).fill("registration")
    page.get_by_label("Title", exact=True).fill("Регистрация")
    page.get_by_role("button", name="Create and open").click()
    page.wait_for_url("**/flows/registration/edit")
    wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null")
    expect(page.locator("#issues-summary")).to_have_text("1 error, 0 warnings")  # no_start
    shoot(page, "editor-empty")

    # ---- the first state, and the problems validation sees in it ----
    add_state(page, "ask_name", "Имя", "Привет! Как вас зовут?")
    set_input(page, "text", "name", "Имя 2-80 символов. Повторите.", **{"Min length": "2", "Max length": "80"})
    expect(page.locator('#issues-list [data-code="dead_end"]')).to_have_count(1)
    assert page.evaluate("window.botflowEditor.cy.getElementById('s:ask_name').hasClass('issue-error')")
    shoot(page, "editor-dead-end")

    # Without /cancel a waiting state cannot be left early: missing_cancel, gone once cancel is back.
    page.get_by_role("button", name="Flow settings").click()
    panel_form(page, 'form[hx-post$="/edit/settings"]')
    command(page, "cancel", "off")
    expect(page.locator('#issues-list [data-code="missing_cancel"]')).to_have_count(1)
    shoot(page, "editor-missing-cancel")
    command(page, "cancel", "custom", "/cancel\nотмена", "Регистрация отменена.")
    expect(page.locator('#issues-list [data-code="missing_cancel"]')).to_have_count(0)
    command(page, "restart", "custom", "/start")
    command(page, "back", "custom", "/back\nназад\nback")
    command(page, "help", "custom", "/help", "Отвечайте на вопросы по одному. /cancel — отменить, назад — вернуться на шаг.")
    commit(page, "Session lifetime (default 30 minutes)", "30")  # minutes, the unit shown when blank
    commit(page, "Fallback reply", "Не понял. Повторите, пожалуйста.")
    page.locator("#panel").get_by_label("Remind an idle user once").check()
    settle(page)
    commit(page, "Remind after idle", "15")
    commit(page, "Reminder text", "Вы хотели завершить регистрацию. Продолжим?")

    # ---- the other states ----
    add_state(page, "ask_phone", "Телефон", "Введите телефон в формате +7XXXXXXXXXX")
    set_input(page, "phone", "phone", "Невалидный телефон. Повторите.")
    add_state(page, "ask_email", "Email", "Введите email")
    set_input(page, "email", "email", "Невалидный email. Повторите.")
    add_state(page, "ask_pdn", "Согласие на обработку ПДн", "Согласны на обработку персональных данных? (да/нет)")
    page.locator("#panel").get_by_role("button", name="+ button row").click()
    settle(page)
    commit(page, "Button 1.1 text", "Да")
    commit(page, "Button 1.1 payload", "yes")
    page.locator("#panel").get_by_role("button", name="+ button", exact=True).click()
    settle(page)
    commit(page, "Button 1.2 text", "Нет")
    commit(page, "Button 1.2 payload", "no")
    for sid, title, text in (("confirmed", "Готово", "Готово! Имя: {name}, телефон: {phone}"),
                             ("refused", "Отказ", "Без согласия не можем продолжить.")):
        add_state(page, sid, title, text)
        field(page, "Final state").check()
        settle(page)

    # ---- transitions, dragged from state to state ----
    connect(page, "ask_name", "ask_phone", "name_ok")
    # dead_end of ask_name is gone; the next state is the dead end now.
    wait_until(page, """() => {
        const issues = window.botflowEditor.issues.issues.filter(i => i.code === 'dead_end');
        return issues.every(i => !i.states.includes('ask_name')) && issues.some(i => i.states.includes('ask_phone'));
    }""")
    connect(page, "ask_phone", "ask_email", "phone_ok")
    connect(page, "ask_email", "ask_pdn", "email_ok")
    connect(page, "ask_pdn", "confirmed", "pdn_yes_button")
    choose(page, "When", "button")
    commit(page, "Button payload", "yes")
    assignment(page, "pdn_accepted", "yes")
    connect(page, "ask_pdn", "confirmed", "pdn_yes_text")
    choose(page, "When", "text")
    commit(page, "Texts (one per line, any case)", "да\nyes")
    assignment(page, "pdn_accepted", "yes")
    connect(page, "ask_pdn", "refused", "pdn_no")
    expect(page.locator("#issues-summary")).to_have_text("No issues")
    assert not page.evaluate("window.botflowEditor.cy.elements('.issue-error, .issue-warning').length")
    # Two parallel transitions ask_pdn -> confirmed are drawn apart: the text one labelled with its trigger, the
    # press unlabelled, as it leaves from the row of its button «Да».
    labels = page.evaluate("window.botflowEditor.cy.edges('[source = \"s:ask_pdn\"][target = \"s:confirmed\"]')"
                           ".map(e => [e.data('label'), e.data('port') || null])")
    assert sorted(labels, key=str) == [["", "button:yes"], ["text: да, yes", None]]
    shoot(page, "editor-built")

    # Deleting a transition (click it, Delete key) strands a state; its issue selects and centres it;
    # undo brings the transition back and the issue goes away.
    click_transition(page, "pdn_no")
    page.keyboard.press("Delete")
    settle(page)
    issue = page.locator("#issues-list .issue", has_text="«Отказ»").first
    expect(issue).to_be_visible()
    issue.click()
    assert page.evaluate("window.botflowEditor.cy.elements(':selected').map(e => e.id())") == ["s:refused"]
    assert page.evaluate("window.botflowEditor.cy.getElementById('s:refused').hasClass('issue-error')")
    shoot(page, "editor-issue-selected")
    page.locator("#canvas").focus()
    page.keyboard.press("Control+z")
    settle(page)
    expect(page.locator("#issues-summary")).to_have_text("No issues")
    assert not page.evaluate("window.botflowEditor.cy.getElementById('s:refused').hasClass('issue-error')")

    built = document(page)
    stored = app.api("GET", "/api/flows/registration").json()
    assert stored == built
    assert is_empty(diff(example, built)), json.dumps(diff(example, built), ensure_ascii=False, indent=1)

    # ---- the simulator, on the same engine ----
    sim_send(page, "Привет")
    assert current_state(page) == ["ask_name"]
    sim_send(page, "Иван")
    assert current_state(page) == ["ask_phone"]
    expect(page.locator("[data-sim-fired]")).to_contain_text("name_ok")
    assert page.evaluate("window.botflowEditor.cy.getElementById('t:name_ok').hasClass('sim-fired')")
    sim_send(page, "123")
    assert current_state(page) == ["ask_phone"]
    sim_send(page, "+7 999 123-45-67")
    sim_send(page, "ivan@example.com")
    expect(page.locator("[data-sim-data]")).to_contain_text("phone: +79991234567")
    page.locator("#simulator .sim-button", has_text="Да").last.click()
    expect(page.locator("#simulator .sim-system").last).to_have_text("The dialog ended.")
    simulated = bot_texts(page)
    assert simulated == [
        "Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX", "Невалидный телефон. Повторите.",
        "Введите email", "Согласны на обработку персональных данных? (да/нет)",
        "Готово! Имя: Иван, телефон: +79991234567"]
    shoot(page, "editor-simulator")

    # ---- freeze, a bot, publish ----
    page.get_by_role("link", name="Versions").click()
    page.get_by_label("Note").fill("Registration, built in the editor")
    page.get_by_role("button", name="Freeze a version").click()
    expect(page.locator("#freeze-result")).to_contain_text("Version 1 frozen")
    expect(page.locator('[data-testid="versions"] tr[data-version="1"]')).to_be_visible()
    page.goto(app.url + "/bots")
    page.get_by_label("Id", exact=True).fill("regbot")
    page.get_by_label("Title", exact=True).fill("Registration bot")
    page.get_by_label("Token", exact=True).fill(MAX_TOKEN)
    page.get_by_label("Webhook secret", exact=True).fill(SECRET)
    page.get_by_role("button", name="Create").click()
    page.wait_for_url("**/bots/regbot")
    expect(page.locator("#bot-settings")).to_contain_text("Token: set")
    assert MAX_TOKEN not in page.content() and SECRET not in page.content()
    page.goto(app.url + "/flows/registration/versions")
    page.locator("select[name=bot]").select_option("regbot")
    page.locator("#publish-version").select_option("1")
    page.get_by_role("radio", name="keep", exact=False).check()
    page.get_by_role("button", name="Publish").click()
    bot_title = app.api("GET", "/api/bots/regbot").json()["title"] or "regbot"
    flow_title = app.api("GET", "/api/flows/registration").json()["title"]
    expect(page.locator("#publish-result")).to_contain_text(f"{bot_title} now serves {flow_title} version 1")
    shoot(page, "versions")
    page.goto(app.url + "/bots/regbot")
    expect(page.locator('[data-testid="publications"]')).to_contain_text("version 1")
    shoot(page, "bot")

    # ---- the same dialog as MAX webhooks gets the same replies ----
    from tests.integration.runtime_app import msg, press, texts

    user = 7701
    for update in (msg(user, "Привет"), msg(user, "Иван"), msg(user, "123"), msg(user, "+7 999 123-45-67"),
                   msg(user, "ivan@example.com"), press(user, "yes")):
        answer = app.api("POST", "/webhooks/max/regbot", json=update, headers={"X-Max-Bot-Api-Secret": SECRET})
        assert answer.status_code == 200, answer.text
    page.wait_for_timeout(200)
    deadline = 50
    while texts(app.fake_max, user) != simulated and deadline:
        page.wait_for_timeout(100)
        deadline -= 1
    assert texts(app.fake_max, user) == simulated
