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


def test_a_stale_csrf_cookie_from_before_a_restart_never_blocks_logging_in(browser, app: App) -> None:
    from tests.e2e.conftest import PASSWORD

    ctx = browser.new_context(viewport={"width": 1200, "height": 800})
    watch = Watch()
    page = ctx.new_page()
    watch.attach(page)
    page.goto(app.url + "/login")
    # What a browser holds after the server restarted with another key: a token this server never signed.
    stale = "0" * 64 + "f" * 64
    ctx.add_cookies([{"name": "csrftoken", "value": stale, "url": app.url}])
    page.evaluate("t => { document.querySelector('input[name=_csrf_token]').value = t; }", stale)
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("out of date")
    shoot(page, "login-out-of-date")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/flows")
    ctx.close()
    assert not watch.problems, watch.problems
