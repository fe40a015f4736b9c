"""Room to work at 1280x800: the side column is at least 360 px of form, resizes by its edge (mouse or
arrow keys) and remembers it, folds away for the canvas, the simulator can take the column's full height,
and the toolbar fits one line, in Russian and in English."""
from __future__ import annotations


import pytest
from playwright.sync_api import Page, expect

from tests.e2e.canvas import open_editor
from tests.e2e.conftest import App, shoot
from tests.e2e.test_canvas import import_example

pytestmark = pytest.mark.e2e


def width(page: Page, selector: str) -> float:
    return page.evaluate("(s) => document.querySelector(s).getBoundingClientRect().width", selector)


def test_the_side_column_resizes_folds_and_remembers(person: tuple[Page, str], app: App) -> None:
    page, lang = person
    flow = import_example(app, "registration")
    open_editor(page, app.url, flow)
    # One toolbar line, the title in it; the form at least 360 px wide.
    tops = page.evaluate("""() => [...document.querySelectorAll('.toolbar > :not([hidden])')]
        .filter((e) => e.offsetWidth).map((e) => Math.round(e.getBoundingClientRect().top + e.offsetHeight / 2))""")
    shoot(page, f"panels-toolbar-{lang}")
    assert max(tops) - min(tops) <= 4, tops
    assert width(page, "#panel") >= 360
    page.evaluate("() => window.botflowEditor.cy.getElementById('s:ask_phone').select()")
    expect(page.locator("#panel input[name=title]")).to_be_visible()
    shoot(page, f"panels-default-{lang}")

    # Dragging the column's edge 120 px to the left widens it by as much; the canvas follows.
    side = width(page, ".side")
    canvas = width(page, "#canvas")
    edge = page.locator("[data-side-resizer]").bounding_box()
    assert edge is not None
    page.mouse.move(edge["x"] + edge["width"] / 2, edge["y"] + 200)
    page.mouse.down()
    page.mouse.move(edge["x"] + edge["width"] / 2 - 120, edge["y"] + 200, steps=6)
    page.mouse.up()
    assert abs(width(page, ".side") - (side + 120)) <= 2
    page.wait_for_timeout(100)
    assert page.evaluate("window.botflowEditor.cy.width()") == pytest.approx(canvas - 120, abs=3)
    # The arrow keys on the focused edge: right narrows by 20 px.
    page.locator("[data-side-resizer]").focus()
    page.keyboard.press("ArrowRight")
    assert abs(width(page, ".side") - (side + 100)) <= 2
    open_editor(page, app.url, flow)
    assert abs(width(page, ".side") - (side + 100)) <= 2  # remembered
    shoot(page, f"panels-wider-{lang}")

    # Folded, the canvas takes the width; remembered too; unfolded again by the same button.
    fold = page.locator("[data-side-fold]")
    fold.click()
    expect(page.locator(".side")).to_be_hidden()
    expect(page.locator("#simulator")).to_be_hidden()
    page.wait_for_timeout(100)
    assert page.evaluate("window.botflowEditor.cy.width()") >= 1270
    expect(fold).to_have_attribute("aria-pressed", "true")
    open_editor(page, app.url, flow)
    expect(page.locator(".side")).to_be_hidden()
    shoot(page, f"panels-folded-{lang}")
    page.locator("[data-side-fold]").click()
    expect(page.locator(".side")).to_be_visible()


def test_the_simulator_can_take_the_full_height(person: tuple[Page, str], app: App) -> None:
    page, lang = person
    flow = import_example(app, "registration")
    open_editor(page, app.url, flow)
    log = page.locator("[data-sim-log]")
    before = log.bounding_box()
    assert before is not None
    page.locator("[data-sim-tall]").click()
    expect(page.locator(".side")).to_be_hidden()
    after = log.bounding_box()
    assert after is not None and after["height"] > before["height"] + 200
    column = page.locator("#simulator").bounding_box()
    canvas = page.locator(".canvas-wrap").bounding_box()
    assert column is not None and canvas is not None
    assert abs(column["height"] - canvas["height"]) <= 2  # the column's full height
    page.locator("[data-sim-input]").fill("/start")
    page.locator("[data-sim-input]").press("Enter")
    expect(log.locator("li").first).to_be_visible()
    shoot(page, f"panels-simulator-tall-{lang}")
    page.locator("[data-sim-tall]").click()
    expect(page.locator(".side")).to_be_visible()


def test_a_narrow_toolbar_keeps_one_line_with_a_more_menu(person: tuple[Page, str], app: App) -> None:
    page, lang = person
    page.set_viewport_size({"width": 1000, "height": 800})
    flow = import_example(app, "registration")
    open_editor(page, app.url, flow)
    tops = page.evaluate("""() => [...document.querySelectorAll('.toolbar > *')].filter((e) => e.offsetParent && e.offsetHeight > 4)
        .map((e) => e.offsetTop)""")
    assert max(tops) - min(tops) < 18, tops
    more = page.locator(".toolbar-more > button")
    expect(more).to_be_visible()
    more.click()
    menu = page.locator(".toolbar-overflow")
    expect(menu).to_be_visible()
    shoot(page, f"panels-toolbar-more-{lang}")
    # A tool from the menu works as it does on the bar: the flow settings (the last tool, the first to move).
    menu.locator("[data-action=settings]").click()
    expect(menu).to_be_hidden()
    expect(page.locator('#panel form[hx-post$="/edit/settings"]')).to_be_visible()
