"""Every page renders for a signed-in person; flows are created, imported (errors per problem), exported, deleted."""
from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.canvas import open_editor, wait_until
from tests.e2e.conftest import ROOT, App, shoot

EXAMPLE = ROOT / "examples" / "registration.json"


def registration_text() -> str:
    local = ROOT / "examples" / "registration.json"
    return (local if local.exists() else EXAMPLE).read_text(encoding="utf-8")


def test_login_page_and_wrong_password(browser, app: App) -> None:
    ctx = browser.new_context(viewport={"width": 1200, "height": 800})
    page = ctx.new_page()
    page.goto(app.url + "/flows")
    expect(page).to_have_url(app.url + "/login?next=%2Fflows")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong username or password.")
    shoot(page, "login")
    ctx.close()


def test_import_shows_each_problem_next_to_the_upload(page: Page, app: App, tmp_path: Path) -> None:
    bad = json.loads(registration_text())
    bad["id"] = "broken"
    bad["states"][1]["input"]["type"] = "telephone"
    bad["transitions"][3]["on"] = "click"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    page.set_input_files("input[name=document]", str(path))
    page.get_by_role("button", name="Import").click()
    result = page.locator("#import-result")
    expect(result.locator("li")).to_have_count(2)
    expect(result).to_contain_text("states[1].input.type")
    expect(result).to_contain_text("transitions[3].on")
    shoot(page, "flows-import-errors")

    path = tmp_path / "notes.yaml"
    path.write_text("format: [unclosed", encoding="utf-8")
    page.set_input_files("input[name=document]", str(path))
    page.get_by_role("button", name="Import").click()
    expect(result).to_contain_text("cannot be read")
    expect(result).to_contain_text("This is not valid YAML: look at line")  # said from the parser's place


def test_import_export_and_delete(page: Page, app: App, tmp_path: Path) -> None:
    doc = json.loads(registration_text())
    doc["id"] = "imported"
    path = tmp_path / "imported.yaml"
    import yaml
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    page.set_input_files("input[name=document]", str(path))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-result")).to_contain_text("Imported")
    row = page.locator('tr[data-flow="imported"]')
    expect(row).to_contain_text("Регистрация")
    for fmt, needle in (("JSON", '"format": "botflow/v1"'), ("YAML", "format: botflow/v1"),
                        ("Mermaid", "stateDiagram"), ("Graphviz", "digraph"), ("SCXML", "<scxml")):
        with page.expect_download() as info:
            row.get_by_role("link", name=fmt, exact=True).click()
        text = Path(info.value.path()).read_text(encoding="utf-8")
        assert needle in text, (fmt, text[:200])
    shoot(page, "flows")
    row.get_by_role("button", name="Delete").click()
    expect(page.locator('tr[data-flow="imported"]')).to_have_count(0)
    assert app.api("GET", "/api/flows/imported").status_code == 404


def test_viewer_sees_the_editor_without_edit_tools(browser, app: App, watch) -> None:
    from tests.e2e.conftest import login
    app.api("POST", "/api/flows", content=registration_text().replace('"registration"', '"viewed"', 1),
            headers={"Content-Type": "application/json"})
    ctx = browser.new_context(viewport={"width": 1500, "height": 900})
    page = login(ctx, app, "vera", watch)
    expect(page.get_by_text("New flow")).to_have_count(0)
    open_editor(page, app.url, "viewed")
    expect(page.locator("[data-action=addState]")).to_have_count(0)
    ctx.close()


def test_diff_of_two_versions_drawn_on_the_graph(page: Page, app: App) -> None:
    doc = json.loads(registration_text())
    doc["id"] = "diffed"
    assert app.api("POST", "/api/flows", json=doc).status_code == 201
    assert app.api("POST", "/api/flows/diffed/versions", json={"note": "first"}).status_code == 201
    draft = app.api("GET", "/api/flows/diffed")
    changed = draft.json()
    changed["states"][1]["say"][0]["text"] = "Ваш телефон?"
    changed["states"].append({"id": "thanks", "title": "Спасибо", "final": True, "say": [{"text": "Спасибо!"}]})
    changed["transitions"] = [t for t in changed["transitions"] if t["id"] != "pdn_no"]
    changed["transitions"].append({"id": "pdn_no", "from": "ask_pdn", "to": "thanks", "on": "else"})
    changed["transitions"] = [t for t in changed["transitions"] if t["id"] != "pdn_yes_text"]
    put = app.api("PUT", "/api/flows/diffed", json=changed, headers={"If-Match": draft.headers["ETag"]})
    assert put.status_code == 200, put.text
    page.goto(app.url + "/flows/diffed/versions")
    page.locator("select[name=a]").select_option("1")
    page.locator("select[name=b]").select_option("draft")
    page.get_by_role("button", name="Show the differences").click()
    changes = page.locator(".changes")
    # States by their titles, transitions by the states they join; the ids on hover.
    expect(changes).to_contain_text("added: state «Спасибо»")
    expect(changes).to_contain_text("removed: transition «Согласие на обработку ПДн» → «Готово»")
    expect(changes).to_contain_text("changed: state «Телефон»")
    expect(changes.locator('[title="ask_phone"]')).to_have_text("state «Телефон»")
    expect(changes.locator('[title="pdn_no"]')).to_have_text("transition «Согласие на обработку ПДн» → «Спасибо»")
    expect(changes).to_contain_text("to: «Отказ» → «Спасибо»")
    expect(changes).to_contain_text("message 1: Введите телефон")  # the field in words, not its path
    expect(changes).to_contain_text("Ваш телефон?")
    wait_until(page, "window.botflowDiff && window.botflowDiff.nodes().length > 0")
    marks = page.evaluate("""() => Object.fromEntries(window.botflowDiff.elements().map(e =>
        [e.id(), ['added', 'removed', 'changed'].find(k => e.hasClass('diff-' + k)) || 'same']))""")
    assert marks["s:thanks"] == "added"
    assert marks["s:ask_phone"] == "changed"
    assert marks["t:pdn_yes_text"] == "removed"
    assert marks["t:pdn_no"] == "changed"
    assert marks["s:ask_name"] == "same"
    labels = page.evaluate("() => Object.fromEntries(window.botflowDiff.edges().map(e => [e.id(), e.data('label')]))")
    assert labels["t:pdn_no"] == "else"  # as the editor labels it, in the page's language
    shoot(page, "versions-diff")


def test_bots_page_keeps_secrets_write_only(page: Page, app: App) -> None:
    page.goto(app.url + "/bots")
    page.get_by_label("Id", exact=True).fill("support")
    page.get_by_label("Token", exact=True).fill("tok-supersecret-1")
    page.get_by_role("button", name="Create").click()
    page.wait_for_url("**/bots/support")
    expect(page.locator("#bot-settings")).to_contain_text("Webhook secret: not set")
    page.get_by_label("New webhook secret").fill("whsec-12345")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#bot-settings")).to_contain_text("Saved: title, webhook secret.")
    expect(page.locator("#bot-settings")).to_contain_text("Webhook secret: set")
    assert "tok-supersecret-1" not in page.content() and "whsec-12345" not in page.content()
    page.goto(app.url + "/bots")
    expect(page.locator('tr[data-bot="support"]')).to_contain_text("set")
    shoot(page, "bots")
