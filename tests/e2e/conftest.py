"""The real app under uvicorn on a temp SQLite file, a fake MAX server, and headless Chromium."""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from server.channels.max.fake import FakeMax
from tests.processes import free_port, stop, wait_answering

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PASSWORD = "correct horse battery"
MAX_TOKEN = "e2e-max-token"

pytestmark = pytest.mark.e2e


@dataclass
class App:
    """The running server: its address and an API client with the bootstrap admin token."""

    url: str
    token: str
    fake_max: FakeMax

    def api(self, method: str, path: str, headers: dict[str, str] | None = None, **kwargs: object) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        return httpx.request(method, self.url + path, headers=headers, timeout=15, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="package")
def fake_max_e2e() -> Iterator[FakeMax]:
    with FakeMax(tokens={MAX_TOKEN}) as fake:
        yield fake


@pytest.fixture(scope="package")
def app(tmp_path_factory: pytest.TempPathFactory, fake_max_e2e: FakeMax) -> Iterator[App]:
    """`botflow` as it runs in production (uvicorn, migrations at start-up), on its own SQLite file."""
    folder = tmp_path_factory.mktemp("e2e")
    port = free_port()
    token = "e2e-" + secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update({
        "BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'botflow.db'}",
        "BOTFLOW_BOOTSTRAP_TOKEN": token,
        "BOTFLOW_SECRET_KEY": secrets.token_hex(32),
        "BOTFLOW_MAX_API_URL": fake_max_e2e.url,
    })
    log = open(folder / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "server.app:create_app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_answering(url + "/healthz", proc, 60, folder / "server.log")
        running = App(url, token, fake_max_e2e)
        for name, role in (("alice", "admin"), ("bob", "admin"), ("vera", "viewer")):
            answer = running.api("POST", "/api/users", json={"username": name, "role": role, "password": PASSWORD})
            assert answer.status_code == 201, answer.text
        yield running
    finally:
        stop(proc)
        log.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.fail("Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Watch:
    """Fails the test on a page error, an alert dialog (an injected script would raise one) or anything the
    Content-Security-Policy refused (a script, style or request the page needs would be missing)."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.refuse_confirms = 0  # the next so many confirm dialogs are answered Cancel (then OK again)
        self.confirms: list[str] = []

    def attach(self, page: Page) -> None:
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on("console", self._console)
        page.on("dialog", self._dialog)

    def _console(self, message: object) -> None:
        text = getattr(message, "text", "")
        if "Content Security Policy" in text:
            self.problems.append(f"refused by the CSP: {text} at {getattr(message, 'location', '')}")

    def _dialog(self, dialog: object) -> None:
        kind = getattr(dialog, "type", "")
        message = getattr(dialog, "message", "")
        if kind == "confirm":  # hx-confirm before a delete: the person agrees, unless a test said otherwise
            self.confirms.append(message)
            if self.refuse_confirms:
                self.refuse_confirms -= 1
                dialog.dismiss()  # type: ignore[attr-defined]
            else:
                dialog.accept()  # type: ignore[attr-defined]
            return
        self.problems.append(f"unexpected {kind} dialog: {message}")
        dialog.dismiss()  # type: ignore[attr-defined]


@pytest.fixture
def watch() -> Iterator[Watch]:
    w = Watch()
    yield w
    assert not w.problems, w.problems


def login(context: BrowserContext, app: App, user: str, watch: Watch, password: str = PASSWORD) -> Page:
    """A new page of `context` signed in as `user`; the fields are found by name, so any language works."""
    page = context.new_page()
    watch.attach(page)
    page.goto(app.url + "/login")
    page.locator("input[name=username]").fill(user)
    page.locator("input[name=password]").fill(password)
    page.locator("form button[type=submit]").click()
    page.wait_for_url("**/flows")
    return page


@pytest.fixture(params=["ru", "en"])
def person(request: pytest.FixtureRequest, browser: Browser, app: App, watch: Watch) -> Iterator[tuple[Page, str]]:
    """A new editor signed in from a 1280x800 browser asking for Russian or English; (page, language)."""
    lang = request.param
    name = f"ed{lang}{secrets.token_hex(4)}"
    made = app.api("POST", "/api/users", json={"username": name, "role": "editor", "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU" if lang == "ru" else "en-US")
    try:
        yield login(ctx, app, name, watch), lang
    finally:
        ctx.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1500, "height": 900}, accept_downloads=True, locale="en-US")
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext, app: App, watch: Watch) -> Page:
    """A page signed in as alice (admin)."""
    return login(context, app, "alice", watch)


def shoot(page: Page, name: str) -> Path:
    """Keep a screenshot of the page as a test artefact (tests/artifacts/, not committed)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


@contextmanager
def russian_page(browser: Browser, app: App, watch: Watch, username: str, role: str) -> Iterator[Page]:
    """A new account of `role`, signed in from a browser that asks for Russian (its own, so the language
    it keeps does not change other tests')."""
    made = app.api("POST", "/api/users", json={"username": username, "role": role, "password": PASSWORD})
    assert made.status_code == 201, made.text
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, locale="ru-RU")
    try:
        yield login(ctx, app, username, watch)
    finally:
        ctx.close()
