"""A moved card's transitions are routed again at right angles around the other cards, leaving from their
button's or input's port (the issue: phone -> email ran through "Имя" after a move)."""
from __future__ import annotations


import pytest
from playwright.sync_api import Page

from tests.e2e.canvas import node_point, open_editor, settle, wait_until
from tests.e2e.conftest import App, shoot
from tests.e2e.test_canvas import GEOMETRY, import_example, segment_hits_box

pytestmark = pytest.mark.e2e

PORTS = """(sid) => window.botflowEditor.cy.getElementById('s:' + sid).connectedEdges().filter((e) => !e.isLoop())
    .map((e) => ({id: e.id(), port: e.data('port') || null, se: e.data('se') || null, source: e.source().id(),
                  start: e.sourceEndpoint(), centre: e.source().position()}))"""


def test_a_moved_card_has_its_edges_routed_around_the_others(person: tuple[Page, str], app: App) -> None:
    page, lang = person
    flow = import_example(app, "registration")
    open_editor(page, app.url, flow)
    page.locator("[data-action=layout]").click()
    wait_until(page, "document.querySelector('[data-action=layout]').disabled === false"
                     " && window.botflowEditor.cy.edges('[sw]').length > 0")
    settle(page)
    # The phone question goes to the right of the consent question, level with the name question: its way
    # back to the email question (left, below) now has the consent card in between.
    page.evaluate("() => { const cy = window.botflowEditor.cy; cy.zoom(0.55); cy.center(cy.getElementById('s:ask_pdn')); }")
    page.wait_for_timeout(300)
    name = node_point(page, "ask_name")
    phone = node_point(page, "ask_phone")
    pdn = node_point(page, "ask_pdn")
    page.mouse.move(phone["x"], phone["y"] - 8)
    page.mouse.down()
    page.mouse.move(pdn["x"] + 190, name["y"], steps=12)
    page.mouse.up()
    wait_until(page, "window.botflowEditor.rerouted !== undefined")
    settle(page)
    geo = page.evaluate(GEOMETRY)
    moved = [e for e in geo["edges"] if "s:ask_phone" in (e["source"], e["target"]) and not e["loop"]]
    assert moved and all(e["style"] == "segments" for e in moved), [(e["id"], e["style"]) for e in moved]
    for e in moved:
        for n in geo["nodes"]:
            if n["id"] in (e["source"], e["target"]):
                continue
            for p, q in zip(e["points"], e["points"][1:]):
                assert not segment_hits_box(p, q, n["box"]), f"{e['id']} runs through {n['id']}"
        for p, q in zip(e["points"], e["points"][1:]):  # at right angles
            assert abs(p["x"] - q["x"]) < 1.5 or abs(p["y"] - q["y"]) < 1.5, (e["id"], p, q)
    # Each edge leaves from its port: the input's row for phone -> email, on the card's right side.
    for edge in page.evaluate(PORTS, "ask_phone"):
        if edge["source"] != "s:ask_phone":
            continue
        assert edge["port"] == "input", edge
        dx, dy = (float(v.removesuffix("px")) for v in edge["se"].split())
        assert abs(edge["start"]["x"] - (edge["centre"]["x"] + dx)) < 2, edge
        assert abs(edge["start"]["y"] - (edge["centre"]["y"] + dy)) < 2, edge
    shoot(page, f"canvas-moved-card-rerouted-{lang}")


def test_auto_layout_shows_every_route_inside_the_canvas(person: tuple[Page, str], app: App) -> None:
    """Routes between wrapped rows run down the left margin: the fitted view keeps them off the canvas's edge."""
    page, lang = person
    flow = import_example(app, "registration")
    open_editor(page, app.url, flow)
    page.locator("[data-action=layout]").click()
    wait_until(page, "document.querySelector('[data-action=layout]').disabled === false"
                     " && window.botflowEditor.cy.edges('[sw]').length > 0")
    settle(page)
    page.wait_for_timeout(300)
    outside = page.evaluate("""() => {
        const cy = window.botflowEditor.cy;
        return cy.edges().filter((e) => {
            const b = e.renderedBoundingBox({includeLabels: false});
            return b.x1 < 8 || b.y1 < 8 || b.x2 > cy.width() - 8 || b.y2 > cy.height() - 8;
        }).map((e) => e.id());
    }""")
    assert outside == []
    shoot(page, f"canvas-routes-inside-{lang}")
