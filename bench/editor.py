"""Editor benchmark: open a generated 1,000-state flow in headless Chromium; print the time until the canvas
is interactive and the time to add one transition (goals: under 2 s and under 100 ms). "applied" is the
document edit plus the canvas update, "drawn" adds the next painted frame, "saved" the PUT with If-Match.

    python bench/editor.py [--states 1000]
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]


def generated_flow(states: int) -> dict[str, Any]:
    """A long form: `states` waiting states in a chain with a shortcut every ten, laid out on a grid."""
    ids = [f"s{i:04d}" for i in range(states - 1)] + ["done"]
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "bench", "title": f"{states} states", "start": ids[0],
                           "states": [], "transitions": [], "layout": {}}
    for i, sid in enumerate(ids):
        if sid == "done":
            doc["states"].append({"id": sid, "title": "Done", "final": True, "say": [{"text": "Thanks!"}]})
        else:
            doc["states"].append({"id": sid, "title": f"Question {i}", "say": [{"text": f"Answer {i}?"}],
                                  "input": {"type": "text", "save_as": f"a{i}"}})
            doc["transitions"].append({"id": f"t{i}", "from": sid, "to": ids[i + 1], "on": "input"})
            if i % 10 == 0 and i + 10 < len(ids):
                doc["transitions"].append({"id": f"skip{i}", "from": sid, "to": ids[i + 10], "on": "text",
                                           "match": ["skip"]})
        doc["layout"][sid] = {"x": (i % 25) * 200, "y": (i // 25) * 110}
    return doc


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--states", type=int, default=1000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="botflow-bench-"))
    port, token, password = free_port(), secrets.token_hex(16), secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update({"BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'bench.db'}",
                "BOTFLOW_BOOTSTRAP_TOKEN": token, "BOTFLOW_SECRET_KEY": secrets.token_hex(32)})
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "server.app:create_app",
                               "--port", str(port), "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        for _ in range(300):
            try:
                if api.get("/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        api.post("/api/users", json={"username": "bench", "role": "editor", "password": password}).raise_for_status()
        api.post("/api/flows", content=json.dumps(generated_flow(args.states)),
                 headers={"Content-Type": "application/json"}).raise_for_status()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 900})
            page.goto(base + "/login")
            page.fill("input[name=username]", "bench")
            page.fill("input[name=password]", password)
            page.click("button[type=submit]")
            page.wait_for_url("**/flows")
            started = time.perf_counter()
            page.goto(base + "/flows/bench/edit")
            page.wait_for_function("window.botflowEditor && window.botflowEditor.ready !== null", timeout=60000)
            interactive = time.perf_counter() - started
            in_page = page.evaluate("window.botflowEditor.ready")
            page.wait_for_function("window.botflowEditor.store.whenIdle().then(() => true)")
            add = page.evaluate("""() => new Promise((resolve) => {
                const ed = window.botflowEditor;
                const t0 = performance.now();
                const id = ed.addTransition('s0500', 's0100');
                const applied = performance.now() - t0;
                requestAnimationFrame(() => {
                    const drawn = performance.now() - t0;
                    const ok = ed.cy.getElementById('t:' + id).nonempty();
                    ed.store.whenIdle().then(() => resolve({applied, drawn, saved: performance.now() - t0, ok}));
                });
            })""")
            browser.close()
        print(json.dumps({
            "states": args.states,
            "transitions": len(generated_flow(args.states)["transitions"]),
            "open_to_interactive_s": round(interactive, 3),
            "editor_load_in_page_s": round(in_page / 1000, 3),
            "add_transition_applied_ms": round(add["applied"], 1),
            "add_transition_drawn_ms": round(add["drawn"], 1),
            "add_transition_saved_ms": round(add["saved"], 1),
            "drawn": add["ok"],
        }))
    finally:
        server.terminate()
        server.wait(timeout=15)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
