"""Driving the editor the way a person does: mouse on the canvas, keyboard in the panel."""
from __future__ import annotations

from typing import Any

from playwright.sync_api import Page


def wait_until(page: Page, expression: str, timeout: float = 30_000) -> Any:
    """Poll a JavaScript expression (or function source) until it is truthy. Playwright's wait_for_function
    compiles its predicate with eval inside the page, which the pages' Content-Security-Policy refuses;
    page.evaluate is not subject to it."""
    waited = 0.0
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if waited >= timeout:
            raise AssertionError(f"still false after {timeout / 1000:g} s: {expression}")
        page.wait_for_timeout(50)
        waited += 50


def open_editor(page: Page, base: str, flow_id: str) -> None:
    page.goto(f"{base}/flows/{flow_id}/edit")
    wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null")


def settle(page: Page) -> None:
    """Wait until every change reached the server and validation answered for it."""
    wait_until(page, "window.botflowEditor.store.whenIdle().then(() => true)")
    page.wait_for_timeout(150)
    wait_until(page, "window.botflowEditor.store.whenIdle().then(() => true)")


def node_point(page: Page, state_id: str, dx: float = 0, dy: float = 0) -> dict[str, float]:
    """Where state `state_id` is drawn, in page pixels."""
    point = page.evaluate(
        """([sid, dx, dy]) => {
            const node = window.botflowEditor.cy.getElementById('s:' + sid);
            if (node.empty()) return null;
            const p = node.renderedPosition();
            const r = document.getElementById('canvas').getBoundingClientRect();
            return {x: r.left + p.x + dx, y: r.top + p.y + dy};
        }""", [state_id, dx, dy])
    assert point is not None, f"state {state_id} is not on the canvas"
    return point


def edge_point(page: Page, transition_id: str) -> dict[str, float]:
    point = page.evaluate(
        """(tid) => {
            const edge = window.botflowEditor.cy.getElementById('t:' + tid);
            if (edge.empty()) return null;
            const p = edge.renderedMidpoint();
            const r = document.getElementById('canvas').getBoundingClientRect();
            return {x: r.left + p.x, y: r.top + p.y};
        }""", transition_id)
    assert point is not None, f"transition {transition_id} is not on the canvas"
    return point


def panel_form(page: Page, selector: str) -> None:
    """Wait until the side panel shows the form and htmx has wired it.

    htmx inserts a swapped form at once but attaches its triggers only after the settle delay (20 ms), with
    the class htmx-added until then; a change made in that window posts nothing and is lost.
    """
    page.locator(f"#panel {selector}").wait_for()
    wait_until(page, "!document.querySelector('#panel .htmx-added, #panel.htmx-settling')")


def click_state(page: Page, state_id: str) -> None:
    p = node_point(page, state_id)
    page.mouse.click(p["x"], p["y"])
    panel_form(page, f'form[hx-post$="/state/{state_id}"]')


def click_transition(page: Page, transition_id: str) -> None:
    p = edge_point(page, transition_id)
    page.mouse.click(p["x"], p["y"])
    panel_form(page, f'form[hx-post$="/transition/{transition_id}"]')


def drag_transition(page: Page, source: str, target: str) -> None:
    """Hover the source state, grab its handle and drop it on the target state."""
    s = node_point(page, source)
    page.mouse.move(s["x"], s["y"])
    handle = page.locator(".edge-handle")
    handle.wait_for(state="visible")
    box = handle.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    t = node_point(page, target) if target != source else node_point(page, source, -40, -40)
    page.mouse.move(t["x"], t["y"], steps=12)
    if target == source:
        back = node_point(page, source, -10, 0)
        page.mouse.move(back["x"], back["y"], steps=6)
    page.wait_for_timeout(150)
    page.mouse.up()


def document(page: Page) -> dict[str, Any]:
    return page.evaluate("window.botflowEditor.store.doc")


def issue_codes(page: Page) -> list[str]:
    return [str(code) for code in page.eval_on_selector_all("#issues-list .issue", "els => els.map(e => e.dataset.code)")]
