"""The canvas by keyboard: arrows go from state to state (said to screen readers), Enter opens the form,
Delete asks before it deletes, and the focused canvas shows a ring."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.canvas import document, open_editor, settle
from tests.e2e.conftest import Watch, shoot
from tests.e2e.test_canvas import import_example

pytestmark = pytest.mark.e2e

SELECTED = "() => window.botflowEditor.cy.nodes(':selected').map((n) => n.data('sid'))"


def test_arrows_enter_and_delete_on_the_canvas(person: tuple[Page, str], app, watch: Watch) -> None:  # noqa: F811
    page, lang = person
    flow = import_example(app, "registration")
    open_editor(page, app.url, flow)
    page.locator("#canvas").focus()
    page.keyboard.press("ArrowDown")  # nothing selected: the start state
    assert page.evaluate(SELECTED) == ["ask_name"]
    page.keyboard.press("ArrowDown")  # the next card below
    assert page.evaluate(SELECTED) == ["ask_phone"]
    expect(page.locator(".canvas-wrap .visually-hidden[aria-live]")).to_have_text("Телефон")
    assert page.evaluate("document.getElementById('canvas').matches(':focus-visible')")
    assert page.evaluate("getComputedStyle(document.getElementById('canvas')).outlineStyle") == "solid"
    shoot(page, f"keyboard-canvas-focus-{lang}")
    page.keyboard.press("ArrowUp")
    assert page.evaluate(SELECTED) == ["ask_name"]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    title = page.locator("#panel input[name=title]")
    expect(title).to_be_focused()
    expect(title).to_have_value("Телефон")
    # Delete asks; refused, the state stays; agreed, it goes.
    page.locator("#canvas").focus()
    watch.refuse_confirms = 1
    page.keyboard.press("Delete")
    assert len(watch.confirms) == 1 and "Телефон" in watch.confirms[0]
    settle(page)
    assert any(s["id"] == "ask_phone" for s in document(page)["states"])
    page.keyboard.press("Delete")
    settle(page)
    assert len(watch.confirms) == 2
    assert not any(s["id"] == "ask_phone" for s in document(page)["states"])
