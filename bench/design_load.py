"""Live traffic first: webhook latency while an editor validates a 10,000-state draft in a loop.

Two `botflow serve` processes in one run: one with the design pool (the default), one with
BOTFLOW_DESIGN_WORKERS=0 (validation on the event loop, as before the pool). Each serves registration-5
webhooks idle, then while a client validates the large draft back to back; the figure is p99 under load
against p99 idle, per server.

    python bench/design_load.py --redis-url redis://127.0.0.1:6379/0 --users 300 --concurrency 16
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, os.environ.get("BOTFLOW_PEERS_DIR", str(HERE.parent.parent / "shared" / "bench" / "peers")))

from runtime_http import (TOKEN, call, delete_prefix, free_port, load, publish_bench_bot,  # noqa: E402
                          server_env, wait_ready)
from validate import document as large_document  # noqa: E402


def validate_in_a_loop(port: int, stop: threading.Event, counts: dict[str, int]) -> None:
    """GET the large draft's validation back to back until told to stop."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/flows/large/validation",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    while not stop.is_set():
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                answer.read()
                counts["ok"] += 1
        except urllib.error.HTTPError as exc:
            counts[str(exc.code)] = counts.get(str(exc.code), 0) + 1


def one_server(args: argparse.Namespace, workers: int, fake_port: int, base: int) -> dict[str, Any]:
    """p99 idle and under the validation loop for a server with `workers` design workers."""
    port, prefix = free_port(), f"bench:design:{workers}:{base}"
    tmp = tempfile.mkdtemp(prefix="botflow-bench-")
    env = {**server_env(tmp, args.redis_url, prefix, fake_port), "BOTFLOW_DESIGN_WORKERS": str(workers)}
    server = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
                              cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}/readyz")
        publish_bench_bot(port)
        doc = large_document()
        doc["id"] = "large"
        call("POST", f"http://127.0.0.1:{port}/api/flows", doc)
        call("GET", f"http://127.0.0.1:{port}/api/flows/large/validation")  # starts the workers
        idle = load(port, args.users, args.concurrency, base)
        stop, counts = threading.Event(), {"ok": 0}
        editor = threading.Thread(target=validate_in_a_loop, args=(port, stop, counts))
        editor.start()
        time.sleep(1.0)  # the first validation is under way
        busy = load(port, args.users, args.concurrency, base + 500_000)
        stop.set()
        editor.join()
    finally:
        server.terminate()
        server.wait(20)
        delete_prefix(args.redis_url, prefix)
    return {"workers": workers, "idle_p99_ms": idle["p99_ms"], "busy_p99_ms": busy["p99_ms"],
            "idle_updates_per_s": idle["updates_per_s"], "busy_updates_per_s": busy["updates_per_s"],
            "validations": counts, "non_200": idle["non_200"] + busy["non_200"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1, help="design workers of the server under test")
    args = parser.parse_args()
    fake_port = free_port()
    fake = subprocess.Popen([sys.executable, "-m", "server.channels.max.fake", "--port", str(fake_port)],
                            cwd=HERE.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{fake_port}/_fake/calls")
        rows = [one_server(args, 0, fake_port, 1_000_000), one_server(args, args.workers, fake_port, 3_000_000)]
    finally:
        fake.terminate()
        fake.wait(10)
    print("\n| validation runs | webhook p99 idle ms | p99 while validating ms | ratio | validations done |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        where = "on the event loop (BOTFLOW_DESIGN_WORKERS=0)" if row["workers"] == 0 else \
            f"in {row['workers']} design worker(s)"
        print(f"| {where} | {row['idle_p99_ms']} | {row['busy_p99_ms']} | "
              f"{row['busy_p99_ms'] / row['idle_p99_ms']:.2f} | {row['validations']} |")
    print(json.dumps(rows), file=sys.stderr)


if __name__ == "__main__":
    main()
