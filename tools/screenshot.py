"""Takes the README's picture of the editor: the registration example at 1280x800, in Russian.

python tools/screenshot.py [docs/editor.png]   (needs the test extra and Chromium; pngquant, if installed,
makes the file about three times smaller)
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.e2e.canvas import wait_until  # noqa: E402  (eval-free waiting, as the pages' CSP requires)
from tests.processes import free_port, stop, wait_answering  # noqa: E402

PASSWORD = "a long screenshot password"


def main(out: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="botflow-shot-"))
    port, token = free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update({"BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'botflow.db'}",
                "BOTFLOW_BOOTSTRAP_TOKEN": token, "BOTFLOW_SECRET_KEY": secrets.token_hex(32)})
    log = open(folder / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "server.app:create_app",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_answering(url + "/healthz", proc, 60, folder / "server.log")
        api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=15)
        api.post("/api/users", json={"username": "anna", "role": "admin", "password": PASSWORD}).raise_for_status()
        doc = json.loads((ROOT / "examples" / "registration.json").read_text())
        api.post("/api/flows", content=json.dumps(doc),
                 headers={"Content-Type": "application/json"}).raise_for_status()
        shoot(url, doc["id"], out)
    finally:
        stop(proc)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def shoot(url: str, flow: str, out: Path) -> None:
    """Signs in from a Russian browser, opens the flow, selects a state so the side panel shows its form."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ru-RU").new_page()
        page.goto(url + "/login")
        page.locator("input[name=username]").fill("anna")
        page.locator("input[name=password]").fill(PASSWORD)
        page.locator("form button[type=submit]").click()
        page.wait_for_url("**/flows")
        page.goto(f"{url}/flows/{flow}/edit")
        wait_until(page, "window.botflowEditor && window.botflowEditor.ready !== null")
        page.evaluate("() => window.botflowEditor.cy.getElementById('s:ask_phone').select()")
        page.locator("#panel input[name=title]").wait_for()
        page.wait_for_timeout(800)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()
    if shutil.which("pngquant"):  # 256 colours: a third of the bytes, no visible difference for a UI
        subprocess.run(["pngquant", "--quality", "70-90", "--speed", "1", "--force", "--ext", ".png", str(out)],
                       check=True)
    print(f"{out}: {out.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "editor.png")
