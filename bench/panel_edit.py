"""One side-panel edit on a 1,000-state flow: milliseconds per form post, and how often it reads and loads the draft.

In process, with the design work inline (BOTFLOW_DESIGN_WORKERS=0 unless --workers says otherwise), so every
CPU millisecond of the edit is on the clock and every load can be counted. With --against DIR the same
measurement also runs on another checkout (e.g. `git archive <commit> | tar -x -C DIR`), alternating with this
one, so the two figures come from one run on one machine:

    python bench/panel_edit.py [--states 1000] [--rounds 7] [--repeat 2] [--against DIR] [--workers 0]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def child(tree: Path, states: int, rounds: int, workers: int) -> dict[str, Any]:
    """The measurement inside one process whose imports come from `tree`."""
    sys.path.insert(0, str(tree))
    import flows.load  # the loader, counted before anything imports it by name

    counts = {"load": 0, "read": 0}
    real_load = flows.load.load

    def load(*args: Any, **kwargs: Any) -> Any:
        counts["load"] += 1
        return real_load(*args, **kwargs)

    flows.load.load = load  # type: ignore[assignment]
    from litestar.testing import TestClient

    from bench.editor import generated_flow
    from server.app import create_app
    from server.services import flows as flow_service
    from server.settings import Settings
    from tests.integration.test_pages_language import form_of

    real_read = flow_service.get_draft

    async def get_draft(*args: Any, **kwargs: Any) -> Any:
        counts["read"] += 1
        return await real_read(*args, **kwargs)

    flow_service.get_draft = get_draft  # type: ignore[assignment]
    folder = tempfile.mkdtemp(prefix="botflow-panel-")
    # A checkout from before the design pool has no such setting: its design work is inline anyway.
    pool = {"design_workers": workers} if "design_workers" in getattr(Settings, "__dataclass_fields__", {}) else {}
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{folder}/bench.db", bootstrap_token="bench-token",
                              secret_key="bench-secret", **pool))
    headers = {"Authorization": "Bearer bench-token", "HX-Request": "true"}
    posts, loads, reads = [], [], []
    with TestClient(app) as client:
        created = client.post("/api/flows", json=generated_flow(states), headers=headers)
        assert created.status_code == 201, created.text
        revision = created.headers["ETag"].strip('"')
        for n in range(rounds + 1):  # the first round warms caches and is not counted
            fields = form_of(client.get("/flows/bench/edit/state/s0005", headers=headers).text)
            # Both protocols at once: an older checkout reads the form field, a newer one the header.
            fields.update(title=[f"Question five, take {n}"], revision=[revision])
            csrf = client.cookies.get("csrftoken", "")
            counts.update(load=0, read=0)
            started = time.perf_counter()
            answer = client.post("/flows/bench/edit/state/s0005", data=fields,
                                 headers={**headers, "X-CSRFToken": csrf, "If-Match": f'"{revision}"'})
            elapsed = time.perf_counter() - started
            assert answer.status_code == 200 and "X-Botflow-Revision" in answer.headers, answer.text[:300]
            revision = answer.headers["X-Botflow-Revision"]
            if n:
                posts.append(elapsed)
                loads.append(counts["load"])
                reads.append(counts["read"])
    return {"post_ms": statistics.median(posts) * 1000, "loads": statistics.median(loads),
            "reads": statistics.median(reads)}


def run(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", str(tree), "--states", str(args.states),
                          "--rounds", str(args.rounds), "--workers", str(args.workers)],
                         check=True, capture_output=True, text=True, cwd=tree)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=2, help="alternations of the checkouts")
    parser.add_argument("--workers", type=int, default=0, help="design worker processes (0: inline)")
    parser.add_argument("--against", type=Path, help="another checkout to measure in the same run")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.states, args.rounds, args.workers)))
        return
    trees = {"this checkout": HERE, **({f"{args.against}": args.against.resolve()} if args.against else {})}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(args.repeat):
        for name, tree in trees.items():
            results[name].append(run(tree, args))
    figures = {name: {"post_ms": statistics.median(r["post_ms"] for r in runs), "loads": runs[0]["loads"],
                      "reads": runs[0]["reads"]} for name, runs in results.items()}
    for name, f in figures.items():
        print(f"{name}: one side-panel edit on {args.states} states {f['post_ms']:.0f} ms (median of "
              f"{args.repeat}x{args.rounds}); the draft read {f['reads']:g}x, loaded {f['loads']:g}x"
              + (" outside the design workers (their loads are not counted)" if args.workers else ""))
    if args.against:
        mine, other = figures["this checkout"], figures[f"{args.against}"]
        print(f"this checkout / {args.against}: {mine['post_ms'] / other['post_ms']:.2f} of the time "
              f"({other['post_ms'] / mine['post_ms']:.2f}x faster)")


if __name__ == "__main__":
    main()
