"""Driving the editor the way a person does: mouse on the canvas, keyboard in the panel."""
from __future__ import annotations

from typing import Any

from playwright.sync_api import Page


def open_editor(page: Page, base: str, flow_id: str) -> None:
    page.goto(f"{base}/flows/{flow_id}/edit")
    page.wait_for_function("window.botflowEditor && window.botflowEditor.ready !== null")


def settle(page: Page) -> None:
    """Wait until every change reached the server and validation answered for it."""
    page.wait_for_function("window.botflowEditor.store.whenIdle().then(() => true)")
    page.wait_for_timeout(150)
    page.wait_for_function("window.botflowEditor.store.whenIdle().then(() => true)")


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


def click_state(page: Page, state_id: str) -> None:
    p = node_point(page, state_id)
    page.mouse.click(p["x"], p["y"])
    page.locator(f'#panel form[hx-post$="/state/{state_id}"]').wait_for()


def click_transition(page: Page, transition_id: str) -> None:
    p = edge_point(page, transition_id)
    page.mouse.click(p["x"], p["y"])
    page.locator(f'#panel form[hx-post$="/transition/{transition_id}"]').wait_for()


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
