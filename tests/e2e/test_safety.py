"""Nothing is silently overwritten, user text is never markup, and posts without the CSRF token fail."""
from __future__ import annotations

import json

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.canvas import click_state, click_transition, node_point, open_editor, settle, wait_until
from tests.e2e.conftest import App, login, shoot
from tests.e2e.test_pages import registration_text

SCRIPT = "<script>alert(1)</script>"


def create(app: App, flow_id: str, **changes: object) -> None:
    doc = json.loads(registration_text())
    doc.update({"id": flow_id, **changes})
    answer = app.api("POST", "/api/flows", json=doc)
    assert answer.status_code == 201, answer.text


def test_second_save_is_refused_with_a_visible_message(browser, app: App, watch) -> None:
    create(app, "shared")
    first_ctx = browser.new_context(viewport={"width": 1500, "height": 900})
    second_ctx = browser.new_context(viewport={"width": 1500, "height": 900})
    first = login(first_ctx, app, "alice", watch)
    second = login(second_ctx, app, "bob", watch)
    open_editor(first, app.url, "shared")
    open_editor(second, app.url, "shared")

    first.locator("[data-action=addState]").click()
    settle(first)
    expect(first.locator("#save-status")).to_have_text("All changes saved")

    # bob's editor still holds the old revision: his canvas edit is refused, and he is told.
    second.locator("[data-action=addState]").click()
    settle(second)
    expect(second.locator("#conflict-banner")).to_be_visible()
    expect(second.locator("#conflict-banner")).to_contain_text("Someone else saved this flow")
    expect(second.locator("#save-status")).to_contain_text("Not saved")
    shoot(second, "editor-conflict")
    stored = app.api("GET", "/api/flows/shared").json()
    assert [s["id"] for s in stored["states"]][-1] == "state_7"  # alice's state, and only hers
    assert len(stored["states"]) == 7

    # A side-panel form opened on the old revision is refused too.
    third_ctx = browser.new_context(viewport={"width": 1500, "height": 900})
    third = login(third_ctx, app, "alice", watch)
    open_editor(third, app.url, "shared")
    click_state(third, "ask_name")
    first.locator("[data-action=addState]").click()
    settle(first)
    title = third.locator("#panel").get_by_label("Title", exact=True)
    title.fill("Changed meanwhile")
    title.press("Tab")
    expect(third.locator("#conflict-banner")).to_be_visible()
    # The form the person typed in stays, read-only: the refused text can still be copied.
    expect(third.locator("#panel [data-frozen]")).to_contain_text("Your text is still here")
    expect(title).to_have_value("Changed meanwhile")
    expect(title).not_to_be_editable()
    shoot(third, "editor-conflict-panel")
    assert app.api("GET", "/api/flows/shared").json()["states"][0]["title"] == "Имя"

    # Reloading shows the latest draft and editing works again.
    second.get_by_role("button", name="Reload the latest draft").click()
    wait_until(second, "window.botflowEditor && window.botflowEditor.ready !== null")
    expect(second.locator("#conflict-banner")).to_be_hidden()
    assert second.evaluate("window.botflowEditor.store.doc.states.length") == 8
    for ctx in (first_ctx, second_ctx, third_ctx):
        ctx.close()


def test_script_in_titles_and_texts_is_shown_as_text(page: Page, app: App) -> None:
    doc = json.loads(registration_text())
    doc["states"][0]["title"] = SCRIPT
    doc["states"][0]["say"][0]["text"] = f"Hi {SCRIPT} <b>bold</b>"
    doc["states"][3]["say"][0]["buttons"][0][0]["text"] = "<img src=x onerror=alert(2)>"
    create(app, "xss", title=SCRIPT, states=doc["states"])

    page.reload()
    expect(page.locator('tr[data-flow="xss"] strong')).to_have_text(SCRIPT)
    open_editor(page, app.url, "xss")
    assert page.evaluate("window.botflowEditor.cy.getElementById('s:ask_name').data('label')") == SCRIPT
    expect(page.locator(".toolbar .title")).to_have_text(SCRIPT)
    click_state(page, "ask_name")
    expect(page.locator("#panel").get_by_label("Title", exact=True)).to_have_value(SCRIPT)
    expect(page.locator("#panel").get_by_label("Message 1", exact=True)).to_have_value(f"Hi {SCRIPT} <b>bold</b>")

    sim = page.locator("#simulator")
    sim.locator("[data-sim-input]").fill(SCRIPT)
    sim.locator("[data-sim-input]").press("Enter")
    expect(sim.locator(".sim-bot .sim-text").first).to_have_text(f"Hi {SCRIPT} <b>bold</b>")
    expect(sim.locator(".sim-user").first).to_have_text(SCRIPT)
    assert page.locator("#simulator b, #panel b, #simulator img, #panel script").count() == 0
    shoot(page, "editor-escaping")

    page.goto(app.url + "/flows/xss/versions")
    expect(page.locator("h1")).to_have_text(f"Versions of {SCRIPT}")
    assert page.locator("main script:not([src])").count() == 0


def test_posts_without_the_csrf_token_fail(page: Page, app: App) -> None:
    create(app, "guarded")
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    assert "botflow_session" in cookies and "csrftoken" in cookies
    with httpx.Client(base_url=app.url, cookies=cookies, timeout=10) as client:
        form = {"id": "sneaky", "title": "Sneaky"}
        assert client.post("/flows", data=form).status_code == 403
        assert client.post("/flows/guarded/delete").status_code == 403
        assert client.post("/logout").status_code == 403
        draft = client.get("/api/flows/guarded")
        etag = draft.headers["ETag"]
        put = client.put("/api/flows/guarded", json=draft.json(), headers={"If-Match": etag})
        assert put.status_code == 403
        post = client.post("/flows/guarded/edit/state/ask_name", data={"id": "ask_name"}, headers={"If-Match": etag})
        assert post.status_code == 403
        # The same requests with the token go through.
        token = cookies["csrftoken"]
        assert client.post("/flows", data={**form, "_csrf_token": token}).status_code in (200, 303)
        put = client.put("/api/flows/guarded", json=draft.json(), headers={"If-Match": etag, "X-CSRFToken": token})
        assert put.status_code == 200
    assert app.api("GET", "/api/flows/sneaky").status_code == 200
    assert app.api("GET", "/api/flows/guarded").status_code == 200


def test_canvas_keys_copy_paste_undo_redo_and_rename(page: Page, app: App) -> None:
    create(app, "keys")
    open_editor(page, app.url, "keys")
    states = lambda: page.evaluate("window.botflowEditor.store.doc.states.map(s => s.id)")  # noqa: E731
    click_state(page, "ask_email")
    page.locator("#canvas").focus()
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    settle(page)
    assert states()[-1] == "ask_email_copy"
    page.keyboard.press("Delete")
    settle(page)
    assert "ask_email_copy" not in states()
    page.keyboard.press("Control+z")
    settle(page)
    assert states()[-1] == "ask_email_copy"
    page.keyboard.press("Control+Shift+z")
    settle(page)
    assert "ask_email_copy" not in states()
    p = node_point(page, "ask_phone")
    page.mouse.dblclick(p["x"], p["y"])
    page.locator(".rename-box").fill("Номер телефона")
    page.locator(".rename-box").press("Enter")
    settle(page)
    assert app.api("GET", "/api/flows/keys").json()["states"][1]["title"] == "Номер телефона"
    # A moved state keeps its place in the document's layout.
    page.mouse.move(p["x"], p["y"])
    page.mouse.down()
    page.mouse.move(p["x"] + 120, p["y"] + 30, steps=8)
    page.mouse.up()
    settle(page)
    layout = app.api("GET", "/api/flows/keys").json()["layout"]["ask_phone"]
    assert layout != {"x": 0, "y": 198}
    click_transition(page, "pdn_no")
    expect(page.locator("#panel h2")).to_have_attribute("data-key", "pdn_no")


def test_a_panel_edit_typed_and_left_by_a_link_is_saved_first(page: Page, app: App) -> None:
    create(app, "typed")
    open_editor(page, app.url, "typed")
    click_state(page, "ask_name")
    title = page.locator("#panel").get_by_label("Title", exact=True)
    title.click()
    title.press("End")
    page.keyboard.type(" (typed)")
    # Typed, not yet saved: the toolbar must not say it is.
    expect(page.locator("#save-status")).to_have_text("Unsaved changes")
    # Straight to another page by the top bar, the field never left by hand.
    page.locator("header nav a", has_text="Bots").first.click()
    page.wait_for_url("**/bots")
    assert app.api("GET", "/api/flows/typed").json()["states"][0]["title"] == "Имя (typed)"


def test_simulator_command_chips_follow_the_flows_commands(page: Page, app: App) -> None:
    create(app, "chips", commands={"cancel": None, "restart": {"match": ["/заново"]},
                                   "back": {"match": ["назад"], "reply": "Вернулись"}})
    open_editor(page, app.url, "chips")
    chips = page.locator("#simulator .sim-chips")
    expect(chips.locator("[data-sim-command=cancel]")).to_be_hidden()  # the flow has no cancel
    expect(chips.locator("[data-sim-command=help]")).to_be_hidden()  # off by default
    expect(chips.locator("[data-sim-command=restart]")).to_have_text("/заново")
    sim = page.locator("#simulator")
    sim.locator("[data-sim-input]").fill("привет")
    sim.locator("[data-sim-input]").press("Enter")
    expect(sim.locator(".sim-bot")).not_to_have_count(0)
    chips.locator("[data-sim-command=back]").click()
    expect(sim.locator(".sim-user").last).to_have_text("назад")  # the flow's own word, not "back"
    expect(sim.locator(".sim-bot .sim-text", has_text="Вернулись")).to_have_count(1)  # the command's reply
