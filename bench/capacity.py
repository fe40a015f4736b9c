"""Capacity: CPU per update (Python and Redis), Redis memory per live dialog and replica memory per 1,000 live
dialogs, measured on this machine, and how many bots at MAX's cap one core, one Redis and one Redis Cluster
master serve (docs/capacity.md explains the figures and the formulas).

    python bench/capacity.py [--users 2000] [--http-users 1000] [--dialogs 10000] [--rss-dialogs 3000]
                             [--rounds 1] [--rate 30] [--headroom 0.7] [--redis-url URL]
    python bench/capacity.py --quick      # a few seconds: every figure, from tiny runs (the test's smoke run)

Everything runs against a private redis-server on a free port (no persistence), so `INFO cpu`, `INFO
commandstats` and `used_memory` move only with this run. The parts reuse the other benches:
registration-5 in process through the peers' driver (`runtime.run_botflow`: Dispatcher.handle, Python CPU
and Redis CPU and commands per update inside its timed window), the same workload as webhooks over loopback
against `botflow serve` (`runtime_http`: the server process's CPU, Redis's CPU and commands per update, then
its RSS before and after N more users each left mid-dialog), and Redis memory per dialog left after /start and
a name (`memory.measure`). The sizing divides a core's second, times the headroom, by the CPU a bot at the
cap spends per second: bots = headroom / (CPU seconds per update x updates/s per bot).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (os.environ.get("BOTFLOW_PEERS_DIR", str(ROOT.parent / "shared" / "bench" / "peers")), str(ROOT),
              str(HERE)):
    sys.path.insert(0, _path)

import runtime_http as rh  # noqa: E402
from memory import measure as redis_memory, private_redis  # noqa: E402
from runtime import run_botflow  # noqa: E402


def in_process(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """Median Python CPU, Redis CPU and Redis commands per update of `Dispatcher.handle` over the rounds."""
    ns = argparse.Namespace(users=args.users, concurrency=args.concurrency, redis_url=url, parse_in_window=True,
                            default_gc=False, profile=False)
    runs = [run_botflow(ns) for _ in range(args.rounds)]
    if not all(run.get("ok") for run in runs):
        raise SystemExit(f"the in-process run gave wrong replies: {runs}")
    return {"python_cpu_us": statistics.median(run["py_cpu_us_per_update"] for run in runs),
            "redis_cpu_us": statistics.median(1e6 * run["redis_cpu_s"] / run["updates"] for run in runs),
            "redis_cmds": statistics.median(run["redis_cmds_per_update"] for run in runs), "runs": runs}


def rss_kib(pid: int) -> int:
    """The process's resident set (VmRSS, KiB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def over_http(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """`botflow serve`'s CPU and Redis's per webhook update, then the server's RSS per 1,000 dialogs left
    mid-flow (after /start and a name: the dialogs a replica remembers having written)."""
    import workload

    ns = argparse.Namespace(users=args.http_users, concurrency=args.concurrency)
    with rh.botflow_served(url, "bench:capacity") as served:
        runs = [rh.measured(served.app_port, ns, 1_000_000 * (n + 1), [served.server.pid], url)
                for n in range(args.rounds)]
        if any(run["non_200"] for run in runs):
            raise SystemExit(f"webhooks were not answered 200: {runs}")
        before = rss_kib(served.server.pid)
        users = [90_000_000 + n for n in range(args.rss_dialogs)]
        held = asyncio.run(rh.drive(served.app_port, rh.workload_items(
            served.app_port, users, 900_000_000, workload.SCRIPT[:2]), args.concurrency))
        after = rss_kib(served.server.pid)
    return {"python_cpu_us": statistics.median(run["server_cpu_us_per_update"] for run in runs),
            "redis_cpu_us": statistics.median(run["redis_cpu_us_per_update"] for run in runs),
            "redis_cmds": statistics.median(run["redis_cmds_per_update"] for run in runs),
            "rss_kib_per_1000": 1000 * (after - before) / args.rss_dialogs, "rss_before_kib": before,
            "rss_after_kib": after, "non_200": held["non_200"], "runs": runs}


def bots(cpu_us: float, args: argparse.Namespace) -> float:
    """Bots at `args.rate` updates/s that one core serves at `args.headroom` of its time."""
    return args.headroom / (cpu_us * 1e-6 * args.rate)


def report(result: dict[str, Any], args: argparse.Namespace) -> None:
    """The measured figures, the sizing per core, Redis and cluster master, and the worked example."""
    local, http, memory = result["in_process"], result["http"], result["memory"]
    print(f"\nmeasured on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end; "
          f"{args.rounds} round(s), medians\n")
    print("| figure | value | unit |\n|---|---:|---|")
    figures = [
        ("Python CPU per update, in process", local["python_cpu_us"], "µs"),
        ("Python CPU per update, botflow serve over HTTP", http["python_cpu_us"], "µs"),
        ("Redis CPU per update, in process", local["redis_cpu_us"], "µs"),
        ("Redis CPU per update, botflow serve over HTTP", http["redis_cpu_us"], "µs"),
        ("Redis commands per update, in process", local["redis_cmds"], "commands"),
        ("Redis commands per update, botflow serve over HTTP", http["redis_cmds"], "commands"),
        ("Redis memory per live dialog", memory["bytes_per_dialog"], "bytes"),
        ("replica RSS per 1,000 live dialogs", http["rss_kib_per_1000"], "KiB"),
    ]
    for name, value, unit in figures:
        print(f"| {name} | {value:.1f} | {unit} |")
    # Sizing takes the served figures (HTTP, the mover and the outbox included) and, for Redis, the larger
    # of the two readings: a plan should not rest on the luckier run.
    python_us, redis_us = http["python_cpu_us"], max(http["redis_cpu_us"], local["redis_cpu_us"])
    per_core, per_redis = bots(python_us, args), bots(redis_us, args)
    print(f"\nsizing at {args.rate:g} updates/s per bot (MAX's cap), each core busy at most "
          f"{args.headroom:.0%}\n")
    print("| serves | bots | formula |\n|---|---:|---|")
    print(f"| one replica core (Python) | {per_core:.0f} | {args.headroom:g} / ({python_us:.1f} µs × {args.rate:g}) |")
    print(f"| one Redis (single-threaded) | {per_redis:.0f} | {args.headroom:g} / ({redis_us:.1f} µs × {args.rate:g}) |")
    print(f"| one Redis Cluster master | {per_redis:.0f} | the same per master, the keys spread over the masters |")
    rate = args.example_bots * args.rate
    print(f"\nexample: {args.example_bots} bots at the cap = {rate:,.0f} updates/s need "
          f"{rate * python_us * 1e-6 / args.headroom:.1f} replica cores, "
          f"{rate * redis_us * 1e-6 / args.headroom:.1f} Redis cores (cluster masters); "
          f"{args.example_dialogs:,} live dialogs hold {args.example_dialogs * memory['bytes_per_dialog'] / 2**20:,.0f} "
          f"MiB of Redis")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=2000, help="users in process, 7 updates each")
    ap.add_argument("--http-users", type=int, default=1000, help="users as webhooks over HTTP, 7 updates each")
    ap.add_argument("--dialogs", type=int, default=10_000, help="dialogs left mid-flow for Redis memory")
    ap.add_argument("--rss-dialogs", type=int, default=3000, help="dialogs left mid-flow for the replica's RSS")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=1, help="runs of each CPU figure (medians)")
    ap.add_argument("--rate", type=float, default=30.0, help="updates/s per bot (MAX caps a bot at 30 calls/s)")
    ap.add_argument("--headroom", type=float, default=0.7, help="share of a core a plan may fill")
    ap.add_argument("--example-bots", type=int, default=1000)
    ap.add_argument("--example-dialogs", type=int, default=1_000_000)
    ap.add_argument("--redis-url", help="a Redis no one else uses (default: a private redis-server)")
    ap.add_argument("--quick", action="store_true", help="tiny runs: every figure in a few seconds, noisy")
    args = ap.parse_args()
    if args.quick:
        args.users, args.http_users, args.dialogs, args.rss_dialogs, args.concurrency = 100, 100, 500, 1000, 16
    with private_redis(args.redis_url) as url:
        result = {"memory": asyncio.run(redis_memory(url, args.dialogs)), "in_process": in_process(url, args),
                  "http": over_http(url, args)}
    report(result, args)
    print(json.dumps(result, ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
