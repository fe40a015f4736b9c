"""The designer's button editor offers the request kinds MAX has: ask for a contact, ask for a location."""
from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from tests.e2e.canvas import click_state, wait_until
from tests.e2e.conftest import App, shoot
from tests.e2e.test_pages import registration_text


def test_a_button_can_ask_for_a_contact_or_a_location(page: Page, app: App) -> None:
    flow = json.loads(registration_text())
    flow["id"] = "buttons-flow"
    assert app.api("POST", "/api/flows", json=flow).status_code == 201
    with_buttons = next(s["id"] for s in flow["states"] if any(m.get("buttons") for m in s.get("say", [])))
    page.goto(app.url + "/flows/buttons-flow/edit")
    wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null")
    click_state(page, with_buttons)
    kind = page.locator("#panel").get_by_label("Button 1.1 kind")
    expect(kind).to_have_value("payload")
    labels = kind.locator("option").all_inner_texts()
    assert labels == ["payload", "link", "contact", "location"]
    kind.scroll_into_view_if_needed()
    shoot(page, "editor-button-kinds")
