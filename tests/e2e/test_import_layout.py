"""Flows imported without saved places: the editor lays them out in its worker, with a line saying so and a
Stop button, saves the places as the draft's layout, and stays usable (a 200-state import used to end in
"Maximum call stack size exceeded", a 1,000-state one never loaded)."""
from __future__ import annotations

import json
import random
import secrets

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.canvas import click_state, document, open_editor, settle, wait_until
from tests.e2e.conftest import App, shoot

pytestmark = pytest.mark.e2e

BOXES = """() => window.botflowEditor.cy.nodes().map((n) => {
    const b = n.boundingBox({includeLabels: false, includeOverlays: false});
    return [b.x1, b.y1, b.x2, b.y2];
})"""


def branching_import(states: int, seed: int = 3) -> dict:
    """A flow as an import brings it, without places: three buttons a state (next, a jump ahead, a jump back)."""
    rng = random.Random(seed)
    ids = [f"s{i:04d}" for i in range(states - 1)] + ["done"]
    doc: dict = {"format": "botflow/v1", "id": f"import-{secrets.token_hex(3)}", "title": f"Import of {states}",
                 "start": ids[0], "states": [], "transitions": []}
    for i, sid in enumerate(ids):
        if sid == "done":
            doc["states"].append({"id": sid, "title": "Готово", "final": True, "say": [{"text": "Спасибо!"}]})
            continue
        doc["states"].append({"id": sid, "title": f"Вопрос {i}", "say": [{"text": f"Шаг {i}: куда дальше?",
            "buttons": [[{"text": "Дальше", "payload": "next"}, {"text": "Пропустить", "payload": "skip"}],
                        [{"text": "Назад", "payload": "back"}]]}]})
        ahead = ids[min(len(ids) - 1, i + rng.randint(2, 30))]
        back = ids[max(0, i - rng.randint(1, 50))]
        for key, to in (("next", ids[i + 1]), ("skip", ahead), ("back", back)):
            doc["transitions"].append({"id": f"{key}{i}", "from": sid, "to": to, "on": "button", "payload": key})
    return doc


def imported(app: App, states: int) -> str:
    doc = branching_import(states)
    answer = app.api("POST", "/api/flows", content=json.dumps(doc), headers={"Content-Type": "application/json"})
    assert answer.status_code == 201, answer.text
    return doc["id"]


def assert_laid_out(page: Page, states: int) -> None:
    """Every state has a saved place, no two cards overlap, and the status says saved."""
    settle(page)
    assert len(document(page)["layout"]) == states
    boxes = page.evaluate(BOXES)
    # Sorted by left edge, each card is compared only with those starting before it ends (fast for 1,000).
    boxes.sort()
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if b[0] >= a[2]:
                break
            assert not (a[1] < b[3] and b[1] < a[3]), f"cards overlap: {a} {b}"
    assert page.locator("#save-status").get_attribute("data-kind") == "saved"


@pytest.mark.parametrize("states", [300, 1000])
def test_an_import_without_places_opens_laid_out_and_saved(person: tuple[Page, str], app: App, states: int) -> None:
    page, lang = person
    flow = imported(app, states)
    page.goto(f"{app.url}/flows/{flow}/edit")
    wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null", timeout=120_000)
    assert page.evaluate("window.botflowEditor.laidOut") is True
    assert_laid_out(page, states)
    assert len(app.api("GET", f"/api/flows/{flow}").json()["layout"]) == states  # saved as the draft's layout
    expect(page.locator(".layout-line")).to_have_count(0)
    # The editor answers: a click on a state opens its form with its title.
    click_state(page, "s0100")
    expect(page.locator("#panel input[name=title]")).to_have_value("Вопрос 100")
    shoot(page, f"import-{states}-{lang}")
    # Opened again, the saved places are used as they are: no second layout.
    open_editor(page, app.url, flow)
    assert page.evaluate("window.botflowEditor.laidOut") is None


def test_the_layout_of_an_import_can_be_stopped(person: tuple[Page, str], app: App) -> None:
    """ELK takes seconds on this 80-state flow with its jumps back: Stop ends it, nothing is saved, the
    editor works on with the states where they were drawn."""
    page, lang = person
    flow = imported(app, 80)
    page.goto(f"{app.url}/flows/{flow}/edit")
    line = page.locator(".layout-line")
    expect(line).to_be_visible(timeout=30_000)
    expect(line).to_contain_text("80")
    shoot(page, f"import-stop-{lang}")
    line.get_by_role("button", name="Остановить" if lang == "ru" else "Stop").click()
    wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null", timeout=30_000)
    assert page.evaluate("window.botflowEditor.laidOut") is False
    expect(line).to_have_count(0)
    expect(page.locator("#save-status")).to_contain_text(
        "Раскладка остановлена" if lang == "ru" else "Arranging stopped")
    assert not document(page).get("layout")
    # Auto-layout still works afterwards (a new worker) and saves.
    page.locator("[data-action=layout]").click()
    wait_until(page, "document.querySelector('[data-action=layout]').disabled === false", timeout=60_000)
    assert_laid_out(page, 80)
