"""The canvas as a person meets it: cards with ports, self-loops, the layered layout, search, the minimap."""
from __future__ import annotations

import json
import secrets
from pathlib import Path
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.canvas import click_state, document, drag_transition, node_point, open_editor, settle, wait_until
from tests.e2e.conftest import App, Watch, login, shoot

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ["booking", "order", "registration", "support"]

# Geometry read from the canvas after a layout: label boxes, state boxes and each routed edge's polyline.
GEOMETRY = """() => {
    const cy = window.botflowEditor.cy;
    const box = (b) => ({x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2});
    const nodes = cy.nodes().map((n) => ({id: n.id(), box: box(n.boundingBox({includeLabels: false, includeOverlays: false}))}));
    const labels = cy.edges('[label]').filter((e) => e.data('label')).map((e) => ({id: e.id(),
        box: box(e.boundingBox({includeNodes: false, includeEdges: false, includeLabels: true,
                                includeSourceLabels: false, includeTargetLabels: false}))}));
    const edges = cy.edges().map((e) => ({id: e.id(), source: e.source().id(), target: e.target().id(),
        loop: e.isLoop(), style: e.style('curve-style'),
        points: [e.sourceEndpoint(), ...(e.segmentPoints() || []), e.targetEndpoint()],
        box: box(e.boundingBox({includeLabels: false}))}));
    return {nodes, labels, edges};
}"""


def import_example(app: App, name: str) -> str:
    """Store an example under a fresh id (the app is shared by the package's tests); returns the id."""
    doc = json.loads((EXAMPLES / f"{name}.json").read_text())
    doc["id"] = f"{name}-{secrets.token_hex(3)}"
    answer = app.api("POST", "/api/flows", content=json.dumps(doc), headers={"Content-Type": "application/json"})
    assert answer.status_code == 201, answer.text
    return doc["id"]


def overlap(a: dict[str, float], b: dict[str, float], slack: float = 1.0) -> bool:
    return a["x1"] + slack < b["x2"] and b["x1"] + slack < a["x2"] and a["y1"] + slack < b["y2"] and b["y1"] + slack < a["y2"]


def segment_hits_box(p: dict[str, float], q: dict[str, float], b: dict[str, float]) -> bool:
    """Whether the axis-parallel (or any) segment p-q passes through the inside of box b (2 px inside)."""
    x1, y1, x2, y2 = b["x1"] + 2, b["y1"] + 2, b["x2"] - 2, b["y2"] - 2
    steps = 40
    for i in range(steps + 1):
        x = p["x"] + (q["x"] - p["x"]) * i / steps
        y = p["y"] + (q["y"] - p["y"]) * i / steps
        if x1 < x < x2 and y1 < y < y2:
            return True
    return False


def auto_layout(page: Page) -> None:
    page.get_by_role("button", name="Auto-layout").click()
    wait_until(page, "document.querySelector('[data-action=layout]').disabled === false"
                           " && window.botflowEditor.cy.edges('[sw]').length > 0")
    settle(page)


def zoom_to(page: Page, state: str, zoom: float = 0.9) -> None:
    page.evaluate("([sid, z]) => { const cy = window.botflowEditor.cy; cy.zoom(z); cy.center(cy.getElementById('s:' + sid)); }",
                  [state, zoom])
    page.wait_for_timeout(250)  # cards come once the view settles


@pytest.mark.parametrize("name", NAMES)
def test_layout_keeps_labels_apart_and_edges_off_states(page: Page, app: App, name: str) -> None:
    flow = import_example(app, name)
    open_editor(page, app.url, flow)
    auto_layout(page)
    shoot(page, f"canvas-layout-{name}-fitted")
    geo = page.evaluate(GEOMETRY)
    routed = [e for e in geo["edges"] if not e["loop"]]
    assert routed and all(e["style"] == "segments" for e in routed), [e["id"] for e in routed if e["style"] != "segments"]
    labels = geo["labels"]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not overlap(a["box"], b["box"]), f"labels of {a['id']} and {b['id']} overlap"
        for n in geo["nodes"]:
            assert not overlap(a["box"], n["box"]), f"label of {a['id']} covers {n['id']}"
    for e in routed:
        for n in geo["nodes"]:
            if n["id"] in (e["source"], e["target"]):
                continue
            for p, q in zip(e["points"], e["points"][1:]):
                assert not segment_hits_box(p, q, n["box"]), f"{e['id']} runs through {n['id']}"
    for e in geo["edges"]:
        if e["loop"]:
            for n in geo["nodes"]:
                if n["id"] != e["source"]:
                    assert not overlap(e["box"], n["box"]), f"loop {e['id']} covers {n['id']}"
    # The whole flow is on screen, wider than tall like the screen, not one long column.
    first = min(geo["nodes"], key=lambda n: n["box"]["x1"])
    zoom_to(page, first["id"][2:], 0.8)
    shoot(page, f"canvas-layout-{name}-cards")


def test_ports_draw_button_and_input_transitions(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    auto_layout(page)
    zoom_to(page, "choose_category", 0.9)
    port = page.locator('.card[data-node="s:choose_category"] .port[data-port="button:login"]')
    expect(port).to_be_visible()
    box = port.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    target = node_point(page, "choose_category", -60, 0)
    page.mouse.move(target["x"], target["y"], steps=10)
    page.wait_for_timeout(150)
    page.mouse.up()
    settle(page)
    added = [t for t in document(page)["transitions"] if t["from"] == "choose_category" and t["to"] == "choose_category"]
    assert [(t["on"], t.get("payload")) for t in added] == [("button", "login")]

    zoom_to(page, "ask_description", 0.9)
    port = page.locator('.card[data-node="s:ask_description"] .port[data-port="input"]')
    expect(port).to_be_visible()
    box = port.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    target = node_point(page, "ask_description", -60, 0)
    page.mouse.move(target["x"], target["y"], steps=10)
    page.wait_for_timeout(150)
    page.mouse.up()
    settle(page)
    loops = [t for t in document(page)["transitions"] if t["from"] == t["to"] == "ask_description"]
    assert [t["on"] for t in loops] == ["input"]
    shoot(page, "canvas-ports-input-loop-added")


def test_self_loop_is_drawn_and_clickable(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    auto_layout(page)
    zoom_to(page, "waiting_operator", 1.0)
    edge = page.evaluate("""() => {
        const e = window.botflowEditor.cy.getElementById('t:followup_added');
        const b = e.renderedBoundingBox({includeLabels: false});
        const n = e.source().renderedBoundingBox({includeLabels: false});
        const m = e.renderedMidpoint();
        const r = document.getElementById('canvas').getBoundingClientRect();
        return {visible: e.visible(), w: b.w, h: b.h, outside: b.x2 - n.x2, x: r.left + m.x, y: r.top + m.y};
    }""")
    assert edge["visible"] and edge["w"] > 10 and edge["h"] > 10
    assert edge["outside"] > 20, "the loop is hidden under its own card"
    page.mouse.click(edge["x"], edge["y"])
    page.locator('#panel form[hx-post$="/transition/followup_added"]').wait_for()
    shoot(page, "canvas-self-loop-selected")


def test_a_long_title_stays_near_its_state_when_zoomed_out(page: Page, app: App) -> None:
    doc = json.loads((EXAMPLES / "registration.json").read_text())
    doc["id"] = f"long-title-{secrets.token_hex(3)}"
    doc["states"][0]["title"] = "Очень длинное название состояния " * 8
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    open_editor(page, app.url, doc["id"])
    page.evaluate("() => { const cy = window.botflowEditor.cy; cy.zoom(0.3); cy.center(); }")
    page.wait_for_timeout(250)
    drawn = page.evaluate("""() => {
        const n = window.botflowEditor.cy.getElementById('s:ask_name');
        return {label: n.data('label'), title: n.data('title')};
    }""")
    assert drawn["title"] == doc["states"][0]["title"]  # the whole title is kept for the card and the panel
    assert len(drawn["label"]) <= 32 and drawn["label"].endswith("…")  # about three lines at that size
    shoot(page, "canvas-long-title-zoomed-out")


def test_find_box_jumps_to_a_state(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    page.locator("#canvas").click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+k")
    box = page.get_by_role("dialog", name="Find a state").get_by_role("searchbox")
    expect(box).to_be_focused()
    box.fill("скриншот без")
    expect(page.locator(".find-item").first).to_contain_text("Без скриншота")
    shoot(page, "canvas-find-box")
    box.press("Enter")
    page.locator('#panel form[hx-post$="/state/screenshot_skipped"]').wait_for()
    page.wait_for_timeout(300)  # the view glides to the state
    inside = page.evaluate("""() => {
        const cy = window.botflowEditor.cy;
        const b = cy.getElementById('s:screenshot_skipped').renderedBoundingBox({includeLabels: false});
        return b.x1 >= 0 && b.y1 >= 0 && b.x2 <= cy.width() && b.y2 <= cy.height();
    }""")
    assert inside
    shoot(page, "canvas-find-jumped")


def test_outline_lists_states_with_issue_counts(page: Page, app: App) -> None:
    doc = json.loads((EXAMPLES / "registration.json").read_text())
    doc["id"] = f"outline-{secrets.token_hex(3)}"
    doc["transitions"] = [t for t in doc["transitions"] if t["from"] != "ask_email"]  # ask_email: a dead end
    assert app.api("POST", "/api/flows", content=json.dumps(doc),
                   headers={"Content-Type": "application/json"}).status_code == 201
    open_editor(page, app.url, doc["id"])
    page.get_by_role("button", name="Outline").click()
    item = page.locator('#outline .find-item[data-state="ask_email"]')
    expect(item.locator(".find-count")).to_have_text("1")
    item.click()
    page.locator('#panel form[hx-post$="/state/ask_email"]').wait_for()
    shoot(page, "canvas-outline-issue-counts")


@pytest.mark.parametrize("size", [(1500, 900), (1280, 720)])
def test_minimap_never_covers_a_state_after_fit(browser: Browser, app: App, watch: Watch, size: tuple[int, int]) -> None:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = login(context, app, "alice", watch)
        for name in NAMES:
            flow = import_example(app, name)
            open_editor(page, app.url, flow)
            page.get_by_role("button", name="Fit").click()
            page.wait_for_timeout(400)
            covered = page.evaluate("""() => {
                const cy = window.botflowEditor.cy;
                const m = document.getElementById('minimap').getBoundingClientRect();
                const r = document.getElementById('canvas').getBoundingClientRect();
                return cy.nodes().filter((n) => {
                    const b = n.renderedBoundingBox({includeLabels: false});
                    return r.left + b.x1 < m.right && r.left + b.x2 > m.left && r.top + b.y1 < m.bottom && r.top + b.y2 > m.top;
                }).map((n) => n.id());
            }""")
            assert covered == [], f"{name}: the minimap covers {covered}"
            if size == (1280, 720):
                assert page.locator("#canvas").bounding_box()["width"] >= 900
            shoot(page, f"canvas-minimap-clear-{name}-{size[0]}x{size[1]}")
        page.get_by_role("button", name="Map").click()
        expect(page.locator("#minimap")).to_be_hidden()
    finally:
        context.close()


def test_shortcut_overlay_opens_with_question_mark(page: Page, app: App) -> None:
    flow = import_example(app, "order")
    open_editor(page, app.url, flow)
    page.locator("#canvas").click(position={"x": 5, "y": 5})
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Find a state")
    shoot(page, "canvas-shortcuts-overlay")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_panel_adds_a_transition_on_one_of_the_states_buttons(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    page.evaluate("() => { window.botflowEditor.cy.getElementById('s:choose_category').select(); }")
    page.locator('#panel form[hx-post$="/state/choose_category"]').wait_for()
    box = page.locator("#panel .add-transition")
    on = box.get_by_label("Fires on")
    assert on.locator("option").all_inner_texts()[:4] == ["button: billing", "button: login", "button: bug", "button: other"]
    on.select_option("button:login")
    box.get_by_label("Goes to").select_option("closed_by_user")
    shoot(page, "canvas-panel-add-transition")
    box.get_by_role("button", name="Add transition").click()
    settle(page)
    added = [t for t in document(page)["transitions"] if t["from"] == "choose_category" and t["to"] == "closed_by_user"]
    assert [(t["on"], t.get("payload")) for t in added] == [("button", "login")]
    page.locator(f'#panel form[hx-post$="/transition/{added[0]["id"]}"]').wait_for()


def test_a_button_saved_in_the_panel_is_offered_as_a_trigger_at_once(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    page.evaluate("() => { window.botflowEditor.cy.getElementById('s:choose_category').select(); }")
    panel = page.locator("#panel")
    panel.locator('form[hx-post$="/state/choose_category"]').wait_for()
    panel.get_by_role("button", name="+ button").first.click()
    panel.get_by_label("Button 1.3 text").fill("Refund")
    panel.get_by_label("Button 1.3 payload").fill("refund")
    panel.get_by_role("button", name="Save", exact=True).click()
    settle(page)
    on = panel.locator(".add-transition").get_by_label("Fires on")
    expect(on.locator("option", has_text="button: refund")).to_have_count(1)
    assert panel.locator(".add-transition").count() == 1
    on.select_option("button:refund")
    panel.locator(".add-transition").get_by_label("Goes to").select_option("closed_by_user")
    panel.locator(".add-transition").get_by_role("button", name="Add transition").click()
    settle(page)
    added = [t for t in document(page)["transitions"] if t["from"] == "choose_category" and t.get("payload") == "refund"]
    assert [(t["on"], t["to"]) for t in added] == [("button", "closed_by_user")]


def test_auto_layout_of_a_long_flow_shows_progress_and_fits_the_screen(page: Page, app: App) -> None:
    """A 300-state chain saved as one column comes back wrapped into rows that fit the canvas's shape."""
    ids = [f"q{i:03d}" for i in range(299)] + ["done"]
    doc: dict = {"format": "botflow/v1", "id": f"long-{secrets.token_hex(3)}", "title": "Long form", "start": ids[0],
                 "states": [], "transitions": [], "layout": {}}
    for i, sid in enumerate(ids):
        doc["layout"][sid] = {"x": 0, "y": i * 120}
        if sid == "done":
            doc["states"].append({"id": sid, "title": "Done", "final": True, "say": [{"text": "Thanks!"}]})
            continue
        doc["states"].append({"id": sid, "title": f"Question {i}", "say": [{"text": f"Answer {i}?"}],
                              "input": {"type": "text", "save_as": f"a{i}"}})
        doc["transitions"].append({"id": f"t{i}", "from": sid, "to": ids[i + 1], "on": "input"})
    assert app.api("POST", "/api/flows", content=json.dumps(doc),
                   headers={"Content-Type": "application/json"}).status_code == 201
    open_editor(page, app.url, doc["id"])
    # The line shows only for a layout that runs past 150 ms; with the scripts in the browser's cache a
    # 300-state quick layout can end sooner, so the worker gets each job 400 ms late, as on a busy machine.
    page.evaluate("""() => { const post = Worker.prototype.postMessage;
        Worker.prototype.postMessage = function (...args) { setTimeout(() => post.apply(this, args), 400); }; }""")
    page.get_by_role("button", name="Auto-layout").click()
    expect(page.locator(".layout-progress")).to_be_visible()
    expect(page.locator(".layout-line")).to_contain_text("300 states")
    shoot(page, "canvas-long-flow-arranging")
    wait_until(page, "document.querySelector('[data-action=layout]').disabled === false", timeout=120000)
    settle(page)
    expect(page.locator(".layout-progress")).to_be_hidden()
    shape = page.evaluate("""() => {
        const cy = window.botflowEditor.cy;
        const b = cy.nodes().boundingBox({includeLabels: false});
        return {w: b.w, h: b.h, zoom: cy.zoom(), canvas: cy.width() / cy.height()};
    }""")
    assert 0.4 < shape["w"] / shape["h"] < 4 * shape["canvas"], shape
    assert shape["zoom"] > 0.05, shape
    saved = document(page)["layout"]
    assert len({round(p["x"]) for p in saved.values()}) > 5  # not one column any more
    shoot(page, "canvas-long-flow-arranged")


CARD_BOXES = """() => window.botflowEditor.cy.nodes().map((n) => {
    const b = n.boundingBox({includeLabels: false, includeOverlays: false});
    return {id: n.id(), box: {x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2}};
})"""


def assert_no_card_overlaps(page: Page) -> None:
    boxes = page.evaluate(CARD_BOXES)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not overlap(a["box"], b["box"]), f"{a['id']} and {b['id']} overlap"


def test_new_and_pasted_states_land_in_free_space(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    auto_layout(page)
    assert_no_card_overlaps(page)
    page.get_by_role("button", name="+ State").click()
    settle(page)
    assert_no_card_overlaps(page)
    page.evaluate("() => { const cy = window.botflowEditor.cy; cy.$(':selected').unselect();"
                  " cy.getElementById('s:waiting_operator').select(); cy.getElementById('s:ask_screenshot').select(); }")
    page.locator("#canvas").focus()
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    settle(page)
    states = {s["id"] for s in document(page)["states"]}
    assert {"waiting_operator_copy", "ask_screenshot_copy"} <= states
    assert_no_card_overlaps(page)
    page.keyboard.press("Control+v")
    settle(page)
    assert_no_card_overlaps(page)
    shoot(page, "canvas-pasted-in-free-space")


def test_panel_starts_at_the_top_for_a_new_selection(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    page.evaluate("() => { window.botflowEditor.cy.getElementById('s:choose_category').select(); }")
    page.locator('#panel form[hx-post$="/state/choose_category"]').wait_for()
    page.locator("#panel").evaluate("(el) => { el.scrollTop = el.scrollHeight; }")
    assert page.locator("#panel").evaluate("(el) => el.scrollTop") > 0
    page.evaluate("() => { const cy = window.botflowEditor.cy; cy.$(':selected').unselect();"
                  " cy.getElementById('s:ask_description').select(); }")
    page.locator('#panel form[hx-post$="/state/ask_description"]').wait_for()
    expect(page.locator("#panel h2")).to_have_attribute("data-key", "ask_description")
    assert page.locator("#panel").evaluate("(el) => el.scrollTop") == 0


def test_a_viewer_sees_cards_without_ports(browser: Browser, app: App, watch: Watch) -> None:
    flow = import_example(app, "support")
    context = browser.new_context(viewport={"width": 1500, "height": 900})
    try:
        page = login(context, app, "vera", watch)
        open_editor(page, app.url, flow)
        zoom_to(page, "choose_category", 0.9)
        expect(page.locator('.card[data-node="s:choose_category"]')).to_contain_text("Оплата и счета")
        expect(page.locator(".card .port")).to_have_count(0)
        p = node_point(page, "choose_category")
        page.mouse.move(p["x"], p["y"])
        expect(page.locator(".edge-handle")).to_have_count(0)
        # Nothing a viewer presses changes the flow on the screen: Delete, a drag, the side panel.
        click_state(page, "choose_category")
        page.keyboard.press("Delete")
        page.mouse.move(p["x"], p["y"])
        page.mouse.down()
        page.mouse.move(p["x"] + 200, p["y"] + 120, steps=5)
        page.mouse.up()
        assert page.evaluate("window.botflowEditor.cy.getElementById('s:choose_category').nonempty()")
        assert node_point(page, "choose_category") == p
        title = page.locator("#panel").get_by_label("Title", exact=True)
        expect(title).to_be_disabled()
        expect(page.locator("#panel")).to_contain_text("changing it needs the editor role")
        expect(page.locator("#save-status")).not_to_contain_text("Not saved")
    finally:
        context.close()


def routed_edges(page: Page) -> list[str]:
    return page.evaluate("window.botflowEditor.cy.edges('[sw]').map((e) => e.id())")


def test_routes_come_back_after_a_reload_and_survive_a_panel_edit(page: Page, app: App) -> None:
    flow = import_example(app, "support")
    open_editor(page, app.url, flow)
    auto_layout(page)
    before = sorted(routed_edges(page))
    assert len(before) >= 12
    page.evaluate("() => { window.botflowEditor.cy.getElementById('s:ask_description').select(); }")
    field = page.locator("#panel").get_by_label("Title", exact=True)
    field.fill("Описание")
    field.press("Tab")
    settle(page)
    assert document(page)["states"][1]["title"] == "Описание"
    assert sorted(routed_edges(page)) == before
    open_editor(page, app.url, flow)
    wait_until(page, "window.botflowEditor.routesRestored !== undefined", timeout=30000)
    assert page.evaluate("window.botflowEditor.routesRestored") is True
    assert sorted(routed_edges(page)) == before
    shoot(page, "canvas-routes-after-reload")


def test_cards_collapse_to_titles_then_dots_as_the_view_zooms_out(page: Page, app: App) -> None:
    flow = import_example(app, "order")
    open_editor(page, app.url, flow)
    auto_layout(page)
    zoom_to(page, "choose_product", 0.9)
    card = page.locator('.card[data-node="s:choose_product"]')
    expect(card).to_contain_text("Кофе в зёрнах")
    expect(card.locator(".chip")).to_have_count(0)  # a state without input has no chip
    expect(page.locator('.card[data-node="s:ask_quantity"] .chip')).to_have_text("whole number → quantity")
    shoot(page, "canvas-zoom-cards")
    zoom_to(page, "choose_product", 0.3)
    expect(page.locator(".card-layer")).to_be_hidden()
    look = "() => document.getElementById('canvas').dataset.look || 'boxes'"
    assert page.evaluate(look) == "boxes"
    shoot(page, "canvas-zoom-titles")
    zoom_to(page, "choose_product", 0.08)
    wait_until(page, f"({look})() === 'dots'")
    shoot(page, "canvas-zoom-dots")
    zoom_to(page, "choose_product", 0.9)
    wait_until(page, f"({look})() === 'boxes'")
    expect(card).to_be_visible()


def test_arrows_drawn_from_a_waiting_state_take_the_triggers_still_free(page: Page, app: App) -> None:
    doc = {"format": "botflow/v1", "id": f"free-{secrets.token_hex(3)}", "title": "Free triggers", "start": "ask",
           "states": [{"id": "ask", "say": [{"text": "Your name?", "buttons": [[{"text": "Skip", "payload": "skip"}]]}],
                       "input": {"type": "text", "save_as": "name", "max_attempts": 3}},
                      {"id": "done", "final": True, "say": [{"text": "Thanks, {name}."}]}],
           "transitions": []}
    answer = app.api("POST", "/api/flows", json=doc)
    assert answer.status_code == 201, answer.text
    open_editor(page, app.url, doc["id"])
    drawn = []
    for _ in range(3):
        drag_transition(page, "ask", "done")
        settle(page)
        drawn = [(t["on"], t.get("payload")) for t in document(page)["transitions"]]
    # Valid input first, then the state's button, then the run of wrong answers: none shadows another.
    assert drawn == [("input", None), ("button", "skip"), ("invalid", None)]
    wait_until(page, "() => !window.botflowEditor.issues.issues.some(i => i.code === 'ambiguous_transition')")
    shoot(page, "canvas-free-triggers")
