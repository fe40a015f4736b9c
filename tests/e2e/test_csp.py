"""Pages under their Content-Security-Policy in Chromium: the API reference renders from vendored files only."""
from __future__ import annotations

from playwright.sync_api import BrowserContext, expect

from tests.e2e.conftest import App, Watch, shoot


def test_api_reference_renders_from_our_own_files(context: BrowserContext, app: App, watch: Watch) -> None:
    page = context.new_page()
    watch.attach(page)
    # Redoc's bundle points its attribution logo at its CDN; the policy must stop that (and anything else) leaving.
    foreign: list[str] = []
    page.on("requestfinished", lambda r: None if r.url.startswith(app.url) else foreign.append(r.url))
    page.goto(app.url + "/schema")
    expect(page.get_by_role("heading", name="Botflow", exact=False).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("/api/users/{username}/tokens").first).to_be_attached()
    shoot(page, "schema")
    assert foreign == []
    logo = "https://cdn.redoc.ly/redoc/logo-mini"
    watch.problems[:] = [p for p in watch.problems if not (p.startswith("refused by the CSP") and logo in p)]


def test_a_page_refuses_to_be_framed(context: BrowserContext, app: App, watch: Watch) -> None:
    page = context.new_page()
    page.goto(app.url + "/login")
    framed = page.evaluate("""async (url) => {
        const frame = document.createElement("iframe");
        frame.src = url;
        const loaded = new Promise(resolve => frame.addEventListener("load", resolve));
        document.body.appendChild(frame);
        await loaded;
        try { return frame.contentDocument ? frame.contentDocument.body.innerText : ""; } catch (e) { return ""; }
    }""", app.url + "/login")
    assert "Log in" not in framed
