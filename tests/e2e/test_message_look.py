"""A message's format and picture in the editor: the side panel's live preview, the upload of a picture, the
canvas card and the simulator show MAX's markup safely (a user's `<` or `*` stays literal). 1280x800, Russian."""
from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.canvas import click_state, open_editor, panel_form, settle, wait_until
from tests.e2e.conftest import PASSWORD, ROOT, App, Watch, login, shoot

PICTURE = ROOT / "tests" / "data" / "picture.png"
FLOW = {"format": "botflow/v1", "id": "look", "title": "Картинки и формат", "start": "ask",
        "states": [{"id": "ask", "title": "Имя", "say": [{"text": "Как вас зовут?"}],
                    "input": {"type": "text", "save_as": "name"}},
                   {"id": "done", "title": "Готово", "final": True,
                    "say": [{"text": "<b>{name}</b>, спасибо! <i>До встречи</i>", "format": "html"}]}],
        "transitions": [{"from": "ask", "to": "done", "on": "input"}],
        "layout": {"ask": {"x": 0, "y": 0}, "done": {"x": 0, "y": 260}}}


@pytest.fixture
def ru_page(browser: Browser, app: App, watch: Watch) -> Iterator[Page]:
    name = f"look_{uuid.uuid4().hex[:8]}"
    made = app.api("POST", "/api/users", json={"username": name, "role": "editor", "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU")
    try:
        yield login(ctx, app, name, watch)
    finally:
        ctx.close()


def draft_message(app: App, state: str) -> dict:
    doc = app.api("GET", "/api/flows/look").json()
    return next(s for s in doc["states"] if s["id"] == state)["say"][0]


def test_format_preview_upload_and_the_picture_in_the_simulator(ru_page: Page, app: App) -> None:
    page = ru_page
    assert app.api("POST", "/api/flows", json=FLOW).status_code == 201
    open_editor(page, app.url, "look")
    click_state(page, "ask")
    panel = page.locator("#panel")
    panel.get_by_label("Формат").select_option("markdown")
    panel_form(page, 'form[hx-post$="/state/ask"]')
    settle(page)
    assert draft_message(app, "ask")["format"] == "markdown"

    # The preview follows each keystroke: markdown drawn, html written in a markdown text stays text.
    text = panel.locator('textarea[name="say[0].text"]')
    text.fill("**Здравствуйте!** Как вас *зовут*? <b>не тег</b>")
    bubble = panel.locator("[data-preview-bubble]")
    expect(bubble.locator("strong")).to_have_text("Здравствуйте!")
    expect(bubble.locator("em")).to_have_text("зовут")
    expect(bubble).to_contain_text("<b>не тег</b>")
    assert bubble.locator("b").count() == 0
    text.blur()
    settle(page)

    # A picture from a file: uploaded, saved with the message, shown in the preview.
    panel_form(page, 'form[hx-post$="/state/ask"]')
    panel.get_by_label("Картинка").select_option("upload")
    panel_form(page, 'form[hx-post$="/state/ask"]')
    settle(page)
    page.locator("#panel [data-upload-file]").set_input_files(str(PICTURE))
    wait_until(page, "(() => { const m = document.querySelector('#panel [data-upload-value]'); "
                     "return m && m.value.startsWith('up_'); })()")
    settle(page)
    expect(page.locator("#panel [data-upload-label]")).to_have_text("Заменить картинку")
    expect(page.locator("#panel [data-upload-status]")).to_have_text("Загружено: picture.png")
    saved = draft_message(app, "ask")
    assert saved["upload"].startswith("up_") and saved["text"].startswith("**Здравствуйте!**")
    preview = page.locator("#panel [data-preview-bubble]")
    expect(preview.locator("img.mx-picture")).to_have_attribute("src", f"/api/uploads/{saved['upload']}")
    wait_until(page, "document.querySelector('#panel [data-preview-bubble] img').naturalWidth > 0")
    expect(preview.locator("strong")).to_have_text("Здравствуйте!")
    # The canvas card draws the same markup, with the picture marked.
    card = page.locator('.card-msg').first
    expect(card.locator("strong")).to_have_text("Здравствуйте!")
    expect(card).to_contain_text("▣")
    preview.scroll_into_view_if_needed()
    shoot(page, "ru-editor-message-preview")

    # The simulator: the picture above the formatted text; the user's html in a value stays literal.
    page.locator("[data-sim-input]").fill("привет")
    page.locator("[data-sim-input]").press("Enter")
    first = page.locator("[data-sim-log] .sim-bot").first
    expect(first.locator("img.sim-picture")).to_be_visible()
    wait_until(page, "document.querySelector('[data-sim-log] .sim-bot img').naturalWidth > 0")
    expect(first.locator(".sim-text strong")).to_have_text("Здравствуйте!")
    page.locator("[data-sim-input]").fill("<i>Аня</i> *x*")
    page.locator("[data-sim-input]").press("Enter")
    last = page.locator("[data-sim-log] .sim-bot").last
    expect(last.locator("strong")).to_have_text("<i>Аня</i> *x*")
    expect(last.locator("em")).to_have_text("До встречи")
    assert last.locator("strong i").count() == 0
    shoot(page, "ru-simulator-formatted-reply")
    first.scroll_into_view_if_needed()
    shoot(page, "ru-simulator-picture")


def test_markup_without_a_format_is_warned_in_russian(ru_page: Page, app: App) -> None:
    flow = {**FLOW, "id": "look-plain", "states": [
        {"id": "ask", "say": [{"text": "**Важно**: как вас зовут?"}], "input": {"type": "text", "save_as": "name"}},
        FLOW["states"][1]]}
    assert app.api("POST", "/api/flows", json=flow).status_code == 201
    open_editor(ru_page, app.url, "look-plain")
    page_issues = ru_page.locator("#issues-list")
    expect(page_issues).to_contain_text("Разметка видна как есть")
    expect(page_issues).to_contain_text("похоже на markdown или html")


HOSTILE = [
    ("html", '<a href="javascript:alert(1)">x</a><img src=x onerror=alert(1)><b onclick="alert(1)">b</b>'
             '<script>alert(1)</script><div style="x">d</div>'),
    ("markdown", '[x](javascript:alert(1)) **<img src=x onerror=alert(1)>** `<b>`'),
    (None, "<b>plain</b> **plain**"),
]


def test_the_markup_renderer_makes_nothing_run_or_link_anywhere_unsafe(ru_page: Page, app: App) -> None:
    assert app.api("POST", "/api/flows", json={**FLOW, "id": "look-safe"}).status_code == 201
    open_editor(ru_page, app.url, "look-safe")
    src = ru_page.locator('link[rel="modulepreload"][href*="markup.js"]').get_attribute("href")
    drawn = ru_page.evaluate("""async ([src, cases]) => {
        const { renderMarkup } = await import(src);
        return cases.map(([format, text]) => {
          const box = document.createElement("div");
          box.append(renderMarkup(text, format));
          const tags = [...box.querySelectorAll("*")].map((e) => e.tagName.toLowerCase());
          const attrs = [...box.querySelectorAll("*")].flatMap((e) => [...e.attributes].map((a) => a.name + "=" + a.value));
          return { tags, attrs, text: box.textContent };
        });
    }""", [src, HOSTILE])
    html, markdown, plain = drawn
    assert set(html["tags"]) <= {"span", "strong"} and "img" not in html["tags"] and "script" not in html["tags"]
    assert not [a for a in html["attrs"] if not a.startswith(("class=", "data-tag="))]
    assert "alert(1)" in html["text"]  # a script's text shows as text, MAX strips only the tag
    assert set(markdown["tags"]) <= {"span", "strong", "code"}
    assert not [a for a in markdown["attrs"] if a.startswith(("href", "src", "on"))]
    assert "<img src=x onerror=alert(1)>" in markdown["text"] and "<b>" in markdown["text"]
    assert plain == {"tags": [], "attrs": [], "text": "<b>plain</b> **plain**"}
