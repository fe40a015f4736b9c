"""Editor benchmark: open a generated 1,000-state flow in headless Chromium and add one transition by dragging
it, as a person does, with state cards (goals: ready under 1.5 s, transition painted under 100 ms) and, in the
same run, rounds alternating with the title-only drawing as the baseline (the toolbar's Cards switch off).

The transition is drawn zoomed in to card level around the source state (cards on screen, their ports live),
from the handle under the source card onto a state next to it.

- "interactive": the page is ready (every element drawn: the editor's `readyAt`, counted from the start of the
  navigation) and then answers a real click on a state: the figure is `ready` plus the first click's latency
  as Interaction to Next Paint counts it, the longer of the press until the next painted frame and the
  release until the frame with the state selected, each from the browser's input timestamp (so time the
  click waited behind other work counts, the harness's pause between press and release does not). The
  click is sent as soon as the page says it is ready. "interactive_wall" is the same from Python's side: it adds this harness's own round trips.
  `at_*` are the editor's phase marks (script running, draft in, canvas, states, transitions, built, drawn).
  "open_cpu" is the CPU time the page's main thread used meanwhile: far below the wall time, the machine was
  busy with other work.
- "add": from the mouse button released over the target state (end of the drag from the edge handle) until
  the new edge is on the canvas and the frame with it is painted. "saved" runs to the PUT's answer (with
  If-Match), "validated" to the issues list answering for the new draft; "blocked" is the main-thread time
  taken by long tasks (over 50 ms) from the release until then, i.e. how long the page could not answer;
  "add_cpu" the main thread's CPU time from the release until Python saw the painted frame (a little after).

Each round reopens the editor on a fresh copy of the flow; the summary gives medians and bests, and the load
average, because the machine may be shared.

Imports without positions (`--unplaced 300,1000`, first, each in a fresh browser at 1280x800): a branching
flow with back edges (three buttons a state: next, a jump ahead, a jump back) that the editor must lay out
itself. Figures: the same "interactive", the editor's layout marks, which layout ran, how many places were
saved as the draft's layout, and "peak_memory_mb", the most memory (proportional set size, so shared pages
count once) all Chromium processes held together, sampled every 100 ms from the navigation until the
layout is saved, and "peak_renderer_mb", the page's renderer (with the layout worker) alone. Goals: 300 states interactive under 3 s, 1,000 under 10 s, memory under 300 MB.

The page runs under its real Content-Security-Policy (no eval): the harness hands the page functions, never
strings to evaluate. tests/e2e/test_bench_editor.py runs a small version of all of it.

    python bench/editor.py [--states 1000] [--rounds 5] [--unplaced 300,1000] [--unplaced-only]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import CDPSession, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]


def picks(states: int) -> tuple[str, str, str]:
    """The states the rounds use: a source, a target one grid row before it, and one to click (s0500, s0476
    and s0300 in the 1,000-state chain)."""
    return f"s{states // 2:04d}", f"s{states // 2 - 24:04d}", f"s{states * 3 // 10:04d}"
MODES = ("cards", "titles")

# Installed before the click (returns where to click): notes when the button went down and up (the browser's
# input timestamps), the next painted frame after the press, and the painted frame with the state selected.
WATCH_CLICK = """(sid) => {
    const ed = window.botflowEditor;
    window.__benchClick = null;
    window.__benchReady = ed.readyAt || performance.now();  // readyAt: when the editor drew everything
    const c = {};
    const finish = () => { if (c.downPainted !== undefined && c.painted !== undefined) window.__benchClick = c; };
    const afterPaint = (fn) => requestAnimationFrame(() => setTimeout(fn));
    window.addEventListener('mousedown', (e) => {
        c.down = e.timeStamp;
        afterPaint(() => { c.downPainted = performance.now(); finish(); });
    }, {capture: true, once: true});
    window.addEventListener('mouseup', (e) => { c.up = e.timeStamp; }, {capture: true, once: true});
    ed.cy.one('select', 'node', () => ed.cy.one('render', () => setTimeout(() => {
        c.painted = performance.now();
        c.selected = ed.cy.getElementById('s:' + sid).selected();
        finish();
    })));
    const p = ed.cy.getElementById('s:' + sid).renderedPosition();
    const r = document.getElementById('canvas').getBoundingClientRect();
    return {x: r.left + p.x, y: r.top + p.y};
}"""

# Installed before the mouse button goes up over the target state.
WATCH_ADD = """() => {
    const ed = window.botflowEditor;
    const r = window.__benchAdd = {};
    const long = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) long.push(e); })
        .observe({type: 'longtask'});
    window.addEventListener('mouseup', (e) => { r.released = e.timeStamp; r.handled = performance.now(); },
                            {capture: true, once: true});
    const added = (e) => {
        if (!e.target.data('tid')) return;  // edgehandles' own preview edges
        ed.cy.off('add', 'edge', added);
        r.applied = performance.now();
        r.tid = e.target.data('tid');
        ed.cy.one('render', () => {
            r.drawn = performance.now();
            setTimeout(() => { r.painted = performance.now(); });
        });
    };
    ed.cy.on('add', 'edge', added);
    ed.store.addEventListener('saved', () => { r.saved = performance.now(); }, {once: true});
    document.addEventListener('botflow:issues', () => {
        r.validated = performance.now();
        setTimeout(() => {
            r.blocked = long.filter((t) => t.startTime + t.duration > r.released && t.startTime < r.validated)
                            .reduce((sum, t) => sum + t.duration, 0);
            r.done = true;
        }, 100);
    }, {once: true});
}"""


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
        doc["layout"][sid] = {"x": (i % 25) * 300, "y": (i // 25) * 140}  # room for a card (240 x 84)
    return doc


def branching_flow(states: int, seed: int = 7) -> dict[str, Any]:
    """A flow as an import brings it, with no saved positions: each question offers three buttons, one to the
    next state, one forward past a few states and one back to an earlier state (about 3 transitions a state)."""
    rng = random.Random(seed)
    ids = [f"s{i:04d}" for i in range(states - 1)] + ["done"]
    doc: dict[str, Any] = {"format": "botflow/v1", "id": "bench", "title": f"{states} states, no positions",
                           "start": ids[0], "states": [], "transitions": []}
    last = len(ids) - 1
    for i, sid in enumerate(ids):
        if sid == "done":
            doc["states"].append({"id": sid, "title": "Done", "final": True, "say": [{"text": "Thanks!"}]})
            continue
        ahead = ids[min(last, i + rng.randint(2, 30))]
        back = ids[max(0, i - rng.randint(1, 50))]
        doc["states"].append({"id": sid, "title": f"Question {i}", "say": [{"text": f"Step {i}: where next?",
            "buttons": [[{"text": "Next", "payload": "next"}, {"text": "Skip", "payload": "skip"}],
                        [{"text": "Back", "payload": "back"}]]}]})
        for key, to in (("next", ids[i + 1]), ("skip", ahead), ("back", back)):
            doc["transitions"].append({"id": f"{key}{i}", "from": sid, "to": to, "on": "button", "payload": key})
    return doc


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_app(doc: dict[str, Any]) -> Iterator[tuple[str, httpx.Client, str]]:
    """`botflow` under uvicorn on a temp SQLite file with the flow `doc` and an editor account."""
    folder = Path(tempfile.mkdtemp(prefix="botflow-bench-"))
    port, token, password = free_port(), secrets.token_hex(16), secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
    env.update({"BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'bench.db'}",
                "BOTFLOW_BOOTSTRAP_TOKEN": token, "BOTFLOW_SECRET_KEY": secrets.token_hex(32)})
    log = open(folder / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "server.app:create_app",
                               "--port", str(port), "--log-level", "warning"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError(f"the server did not start: {(folder / 'server.log').read_text()[-3000:]}")
            try:
                if api.get("/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        api.post("/api/users", json={"username": "bench", "role": "editor", "password": password}).raise_for_status()
        api.post("/api/flows", content=json.dumps(doc),
                 headers={"Content-Type": "application/json"}).raise_for_status()
        yield base, api, password
    finally:
        server.terminate()
        server.wait(timeout=15)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def reset_flow(api: httpx.Client, doc: dict[str, Any]) -> None:
    """Put the flow back, so every round starts from the same document."""
    etag = api.get("/api/flows/bench").headers["ETag"]
    api.put("/api/flows/bench", content=json.dumps(doc),
            headers={"Content-Type": "application/json", "If-Match": etag}).raise_for_status()


def screen_point(page: Page, sid: str) -> dict[str, float]:
    return page.evaluate("""(sid) => {
        const p = window.botflowEditor.cy.getElementById('s:' + sid).renderedPosition();
        const r = document.getElementById('canvas').getBoundingClientRect();
        return {x: r.left + p.x, y: r.top + p.y};
    }""", sid)


def cpu_seconds(cdp: CDPSession) -> float:
    """CPU time the page's main thread has used so far."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "ThreadTime")


def open_and_click(page: Page, cdp: CDPSession, url: str, timeout_ms: int = 60000,
                   clicked: str = "s0300") -> dict[str, float]:
    """Open the editor, then click a state the moment the editor says it is ready."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    cpu = cpu_seconds(cdp)  # after the commit: the new document may live in a new process
    page.wait_for_function("() => window.botflowEditor && window.botflowEditor.ready !== null", timeout=timeout_ms)
    point = page.evaluate(WATCH_CLICK, clicked)
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function("() => window.__benchClick !== null", timeout=60000)
    wall = time.perf_counter() - started
    cpu = cpu_seconds(cdp) - cpu
    click = page.evaluate("window.__benchClick")
    assert click["selected"], "the click did not select the state"
    ready = page.evaluate("window.__benchReady") / 1000
    # As Interaction to Next Paint counts a click: the longer of press-to-next-frame and release-to-selection.
    first_click = max(click["downPainted"] - click["down"], click["painted"] - click["up"])
    marks = page.evaluate("Object.fromEntries(performance.getEntriesByType('mark')"
                          ".filter((m) => m.name.startsWith('editor:')).map((m) => [m.name.slice(7), m.startTime]))")
    return {"interactive_s": ready + first_click / 1000, "interactive_wall_s": wall, "ready_s": ready,
            "first_click_ms": first_click, "open_cpu_s": cpu, **{f"at_{name}_s": at / 1000 for name, at in marks.items()}}


def drag_transition(page: Page, cdp: CDPSession, source: str, target: str) -> dict[str, float]:
    """Zoom to card level around the source, drag from its edge handle onto the target; time from the release."""
    page.evaluate("(sid) => { const cy = window.botflowEditor.cy; cy.zoom(0.8); cy.center(cy.getElementById('s:' + sid)); }",
                  source)
    page.wait_for_timeout(600)  # cards and details come once the view settles
    s = screen_point(page, source)
    page.mouse.move(s["x"], s["y"])
    handle = page.locator(".edge-handle")
    handle.wait_for(state="visible")
    box = handle.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    t = screen_point(page, target)
    page.mouse.move(t["x"], t["y"], steps=12)
    page.wait_for_timeout(200)
    page.evaluate(WATCH_ADD)
    cpu = cpu_seconds(cdp)
    page.mouse.up()
    page.wait_for_function("() => window.__benchAdd.painted !== undefined", timeout=60000, polling=5)
    cpu = cpu_seconds(cdp) - cpu
    page.wait_for_function("() => window.__benchAdd.done === true", timeout=60000)
    r = page.evaluate("window.__benchAdd")
    assert page.evaluate("(tid) => window.botflowEditor.cy.getElementById('t:' + tid).nonempty()", r["tid"])
    since = r["released"]
    return {"add_applied_ms": r["applied"] - since, "add_drawn_ms": r["drawn"] - since,
            "add_painted_ms": r["painted"] - since, "add_saved_ms": r["saved"] - since,
            "add_validated_ms": r["validated"] - since, "add_blocked_ms": r["blocked"],
            "add_cpu_ms": cpu * 1000,
            "input_delay_ms": r["handled"] - since}


def summary(rounds: list[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not rounds:
        return out
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        digits = 3 if key.endswith("_s") else 1
        out[key] = {"median": round(statistics.median(values), digits), "best": round(min(values), digits)}
    return out


def proportional_size(proc: Path) -> int:
    """A process's proportional set size in bytes (shared pages split among their sharers, so sums are fair)."""
    try:
        for line in (proc / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def browser_memory() -> tuple[int, int]:
    """Memory (proportional set size, bytes) of every Chromium process this run started (all descendants of
    this process: the browser, its GPU and utility processes, the page's renderer with the worker), and of
    the renderers alone."""
    children: dict[int, list[int]] = {}
    pss: dict[int, int] = {}
    renderers: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
        except (OSError, ValueError):
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        if "chrom" in comm.lower():
            pss[pid] = proportional_size(entry)
            try:
                if b"--type=renderer" in (entry / "cmdline").read_bytes():
                    renderers.add(pid)
            except OSError:
                pass
    total = renderer = 0
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        total += pss.get(pid, 0)
        renderer += pss.get(pid, 0) if pid in renderers else 0
        todo.extend(children.get(pid, []))
    return total, renderer


class PeakMemory:
    """Samples the browser's memory in a thread; `peak` is the largest sum seen, `renderer` the renderers'."""

    def __init__(self) -> None:
        self.peak = 0
        self.renderer = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        total, renderer = browser_memory()
        self.peak = max(self.peak, total)
        self.renderer = max(self.renderer, renderer)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(0.1)

    def __enter__(self) -> "PeakMemory":
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def login(page: Page, base: str, password: str) -> None:
    page.goto(base + "/login")
    page.fill("input[name=username]", "bench")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/flows")


def launch(pw: Any, viewport: dict[str, int]) -> tuple[Any, Page, CDPSession]:
    browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
    page = browser.new_page(viewport=viewport)
    page.on("pageerror", lambda exc: print(f"page error: {exc}", file=sys.stderr))
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    return browser, page, cdp


def unplaced_round(states: int, timeout_s: float) -> dict[str, Any]:
    """Open an import without positions in a fresh browser: time to interactive, peak memory, layout saved."""
    doc = branching_flow(states)
    figures: dict[str, Any] = {}
    with running_app(doc) as (base, api, password), sync_playwright() as pw:
        browser, page, cdp = launch(pw, {"width": 1280, "height": 800})
        memory = PeakMemory()
        try:
            login(page, base, password)
            with memory:
                figures = open_and_click(page, cdp, base + "/flows/bench/edit", int(timeout_s * 1000),
                                         clicked="s0100")
                page.wait_for_function("() => window.botflowEditor.store.whenIdle().then(() => true)")
            figures["layout_engine"] = page.evaluate("() => window.botflowEditor.layoutEngine")
            figures["saved_positions"] = len(api.get("/api/flows/bench").json().get("layout") or {})
        except Exception as exc:  # noqa: BLE001 - a page that never becomes ready is the figure itself
            figures = {"error": str(exc).splitlines()[0][:300],
                       "status": page.evaluate("() => (document.getElementById('save-status') || {}).textContent")}
        finally:
            figures["peak_memory_mb"] = memory.peak / 2 ** 20
            figures["peak_renderer_mb"] = memory.renderer / 2 ** 20
            browser.close()
    figures.update({"states": states, "transitions": len(doc["transitions"])})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--unplaced", default="300,1000",
                        help="sizes (states) of imports without positions to open once each; empty for none")
    parser.add_argument("--unplaced-only", action="store_true", help="skip the rounds with saved positions")
    parser.add_argument("--timeout", type=float, default=60, help="seconds an import may take to become ready")
    args = parser.parse_args()
    load_before = os.getloadavg()
    result: dict[str, Any] = {"cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before]}
    unplaced = [unplaced_round(int(n), args.timeout) for n in args.unplaced.split(",") if n.strip()]
    for figures in unplaced:
        print("unplaced: " + json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}),
              file=sys.stderr)
    result["unplaced"] = unplaced
    goals = {300: 3.0, 1000: 10.0}
    result["unplaced_goals_met"] = {
        f"{f['states']}_interactive_under_{goals.get(f['states'], 10.0)}s_and_300MB":
            "interactive_s" in f and f["interactive_s"] < goals.get(f["states"], 10.0) and f["peak_memory_mb"] < 300
        for f in unplaced}
    if not args.unplaced_only:
        result.update(placed_rounds(args.states, args.rounds))
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result))


def placed_rounds(states: int, count: int) -> dict[str, Any]:
    """The chain with saved positions, rounds alternating cards and titles: opening, then adding a transition."""
    doc = generated_flow(states)
    source, target, clicked = picks(states)
    rounds: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with running_app(doc) as (base, api, password), sync_playwright() as pw:
        browser, page, cdp = launch(pw, {"width": 1500, "height": 900})
        login(page, base, password)
        for n in range(count):
            for mode in MODES:  # alternating, so both see the same machine
                page.evaluate("(v) => window.localStorage.setItem('botflow.cards', v)", "on" if mode == "cards" else "off")
                reset_flow(api, doc)
                figures = open_and_click(page, cdp, base + "/flows/bench/edit", clicked=clicked)
                page.wait_for_function("() => window.botflowEditor.store.whenIdle().then(() => true)")
                page.wait_for_timeout(1000)  # let the first validation and the minimap finish
                figures.update(drag_transition(page, cdp, source, target))
                if mode == "cards":
                    figures["cards_drawn"] = page.evaluate("document.querySelectorAll('.card-layer .card').length")
                rounds[mode].append(figures)
                print(f"round {n + 1} {mode}: " + json.dumps({k: round(v, 3 if k.endswith('_s') else 1)
                                                              for k, v in figures.items()}), file=sys.stderr)
        browser.close()
    result: dict[str, Any] = {"states": states, "transitions": len(doc["transitions"]), "rounds": count}
    for mode in MODES:
        result[mode] = summary(rounds[mode])
    cards = result["cards"]
    result["goals_met"] = {"cards_ready_under_1.5s": cards["ready_s"]["median"] < 1.5,
                           "cards_add_painted_under_100ms": cards["add_painted_ms"]["median"] < 100}
    for mode in MODES:
        print(f"-- {mode}", file=sys.stderr)
        for key, value in result[mode].items():
            print(f"{key:24} median {value['median']:>9}   best {value['best']:>9}", file=sys.stderr)
    return result


if __name__ == "__main__":
    main()
