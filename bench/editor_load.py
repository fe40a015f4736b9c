"""The editor's first and second load in Chromium: bytes over the wire and milliseconds, per round.

"first" opens the editor in a new browser context (empty cache, as a newcomer's browser); "second" follows a
link back to it in the same context, as a person coming back does (a normal navigation, not a forced reload):
what the cache headers let the browser skip shows there. "reload" is the browser's reload button on it, which
asks the server again about every file that is not `immutable`. Bytes are what Chromium counted on the wire for every
request of the page (headers included, after compression); "ms" runs from the navigation's start to the
editor's `readyAt` (everything drawn), "load_ms" to the page's load event; "requests" counts requests that
went to the network, "from_cache" those the browser's cache answered, "revalidated" those answered 304.

The network can be shaped with Chromium's own emulation: `--network broadband` (20 Mbit/s down, 40 ms round
trip) by default, `--network none` for the raw loopback.

    python bench/editor_load.py [--rounds 3] [--network broadband|none] [--fresh] [--root /path/to/another/checkout]

`--fresh` first sets every static file's time to now, as a wheel installed or an image built minutes ago has
them: a browser without Cache-Control guesses a file fresh for a tenth of its age (RFC 9111, 4.2.2), so files
changed long ago look fresh for days and a new install's are asked for again at every load.

`--root` serves another checkout of the project (e.g. the release before), so "before" and "after" can be
measured alternately on the same machine.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.processes import free_port  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]
NETWORKS = {"broadband": {"offline": False, "latency": 40, "downloadThroughput": 20e6 / 8,
                          "uploadThroughput": 5e6 / 8},
            "none": None}


@contextmanager
def running_app(root: Path) -> Iterator[tuple[str, str]]:
    """`botflow serve` on a temporary SQLite file with the registration example and an editor account."""
    folder = Path(tempfile.mkdtemp(prefix="botflow-load-"))
    port, token, password = free_port(), secrets.token_hex(16), secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update({"BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'bench.db'}", "PYTHONPATH": str(root),
                "BOTFLOW_BOOTSTRAP_TOKEN": token, "BOTFLOW_SECRET_KEY": secrets.token_hex(32)})
    log = open(folder / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)], cwd=folder,
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {(folder / 'server.log').read_text()[-3000:]}")
            try:
                if api.get("/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        api.post("/api/users", json={"username": "bench", "role": "editor", "password": password}).raise_for_status()
        flow = (ROOT / "examples" / "registration.json").read_text(encoding="utf-8")
        api.post("/api/flows", content=flow, headers={"Content-Type": "application/json"}).raise_for_status()
        yield base, password
    finally:
        server.terminate()
        server.wait(timeout=15)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def one_round(browser: Browser, base: str, password: str, network: dict[str, Any] | None) -> dict[str, dict]:
    """Log in in a new context, then open the editor twice (empty cache, then warm cache)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(base + "/login")
    page.fill("input[name=username]", "bench")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/flows")
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    if network is not None:
        cdp.send("Network.emulateNetworkConditions", network)
    wire: dict[str, float] = {}
    statuses: dict[str, int] = {}
    cached: set[str] = set()

    def received(event: dict[str, Any]) -> None:
        response = event["response"]
        statuses[event["requestId"]] = response["status"]
        if response.get("fromDiskCache") or response.get("fromMemoryCache") or response.get("fromPrefetchCache"):
            cached.add(event["requestId"])

    cdp.on("Network.responseReceived", received)
    cdp.on("Network.requestServedFromCache", lambda e: cached.add(e["requestId"]))
    cdp.on("Network.loadingFinished", lambda e: wire.__setitem__(e["requestId"], e["encodedDataLength"]))
    figures = {}
    for name in ("first", "second", "reload"):
        wire.clear()
        statuses.clear()
        cached.clear()
        if name == "reload":
            page.reload(wait_until="load")
        else:
            page.goto(base + "/flows/registration/edit", wait_until="load")
        page.wait_for_function("() => window.botflowEditor && window.botflowEditor.readyAt", timeout=60000)
        page.wait_for_timeout(300)  # requests the page makes once drawn (validation, minimap) count too
        timing = page.evaluate("""() => { const n = performance.getEntriesByType('navigation')[0];
            return {ready: window.botflowEditor.readyAt, load: n.loadEventEnd}; }""")
        figures[name] = {"bytes": sum(wire.values()), "requests": len(set(wire) - cached), "from_cache": len(cached),
                         "revalidated": sum(1 for s in statuses.values() if s == 304),
                         "ms": timing["ready"], "load_ms": timing["load"]}
        if name == "first":
            page.goto(base + "/flows")  # away, so the second visit is a navigation back by link
    context.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--network", choices=sorted(NETWORKS), default="broadband")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    parser.add_argument("--fresh", action="store_true", help="set the static files' times to now first")
    args = parser.parse_args()
    rounds: list[dict[str, dict]] = []
    if args.fresh:
        for path in (args.root / "static").rglob("*"):
            os.utime(path)
    with running_app(args.root.resolve()) as (base, password), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        for n in range(args.rounds):
            rounds.append(one_round(browser, base, password, NETWORKS[args.network]))
            print(f"round {n + 1}: {json.dumps(rounds[-1])}", file=sys.stderr)
        browser.close()
    result: dict[str, Any] = {"root": str(args.root), "network": args.network, "fresh": args.fresh, "rounds": args.rounds, "load_average": os.getloadavg()}
    for name in ("first", "second", "reload"):
        result[name] = {key: statistics.median(r[name][key] for r in rounds)
                        for key in ("bytes", "requests", "from_cache", "revalidated", "ms", "load_ms")}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
